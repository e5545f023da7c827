// The --help of `stepback get`, in sections: the synopsis, the connection and retry flags,
// the request and its output, what it says on stderr, and the exit codes. docs/cli.md says the
// same at length, with where stepback differs from curl on purpose.
#include <cstdio>

#include "get_args.hpp"
#include "request_flags.hpp"
#include "stepback/profiles/active.hpp"

namespace stepback::tools {
namespace {

void print_synopsis(std::FILE* out) {
  std::fputs(
      "usage: stepback get URL|--url-file FILE [--cacert FILE | --capath DIR]\n"
      "                        [--pin sha256/BASE64]...\n"
      "                        [--tls-max-fragment BYTES] [--profile desktop|mobile]\n"
      "                        [--no-early-data]\n"
      "                        [--max-retries N | --retry N] [--max-backoff SECONDS]\n"
      "                        [--deadline SECONDS] [--max-time SECONDS | -m SECONDS]\n"
      "                        [--connect-timeout SECONDS] [--idempotency auto|strict|yes|no]\n"
      "                        [--speed-limit BYTES] [--speed-time SECONDS]\n"
      "                        [--limit-rate RATE] [--range-size BYTES]\n"
      "                        [--no-metered] [--metered-up-to SIZE] [--no-roaming]\n"
      "                        [--network-type TYPE] [--offline-limit SECONDS]\n"
      "                        [--interface NAME] [--defer-after SECONDS]\n"
      "                        [--jitter seed|full|equal|decorrelated|none]\n"
      "                        [--oauth2-bearer TOKEN | --token-file FILE]\n"
      "                        [--dns-servers IP[:PORT][,...] | --system-resolver]\n"
      "                        [--proxy URL | -x URL] [--noproxy LIST]\n"
      "                        [-X METHOD] [-H 'Name: value']... [-A AGENT]\n"
      "                        [-d|--data-binary|--data-raw DATA]...\n"
      "                        [-o FILE|- [--state FILE] | -O] [--max-redirs N] [-L] [-C -]\n"
      "                        [-f | --fail-with-body] [-i | -I] [-s] [-v] [--operation]\n"
      "                        [--trace]\n"
      "\n"
      "Makes one HTTPS (or http://) request and retries it with truncated exponential\n"
      "backoff per the device profile. The body goes to stdout (or FILE); progress goes to\n"
      "stderr, one line per attempt, with a countdown of each wait when stderr is a terminal.\n"
      "Names are looked up with c-ares, without blocking, AAAA and A together (with\n"
      "--system-resolver, with the system's resolver); a name that does not exist\n"
      "(NXDOMAIN) ends the request at once with exit code 6.\n"
      "curl's spellings of these options work too (-x, -m, --retry, -d, -L, -f, ...), also\n"
      "bundled (-fsSL, -XPOST); a curl option that stepback does not take is named with\n"
      "what to write instead (docs/cli.md lists where stepback differs from curl).\n"
      "\n",
      out);
}

// TLS, retries, limits, networks, credentials, names and proxies.
void print_connection_flags(std::FILE* out) {
  std::fprintf(
      out,
      "%s"
      "  --pin sha256/BASE64  accept only a chain with this SubjectPublicKeyInfo hash in it\n"
      "                       (repeatable; a mismatch fails at once, exit 5)\n"
      "  --profile NAME       desktop or mobile: retry policy, timeouts and budget\n"
      "                       (default: %s, chosen at build time)\n"
      "  --max-retries N      retries after the first attempt (0..1000; default: the\n"
      "                       profile's); --retry N is curl's name for it\n"
      "  --max-backoff S      the cap on one backoff wait, in seconds (e.g. 32 or 0.5)\n"
      "  --deadline S         no new attempt or wait past S seconds (0: none); an attempt\n"
      "                       that is receiving is never cut (a stall or --speed-limit ends it)\n"
      "  --max-time S, -m S   an overall limit on the whole request, transfers included\n"
      "  --connect-timeout S  the TCP connect (per address tried) and the TLS handshake\n"
      "                       may take S seconds each (default: desktop 10, mobile 20)\n"
      "%s"
      "%s"
      "%s"
      "  --oauth2-bearer TOKEN  send Authorization: Bearer TOKEN\n"
      "  --token-file FILE    the same with the token read from FILE before every attempt\n"
      "                       (whitespace trimmed), so a job that rewrites FILE keeps a long\n"
      "                       run authorized; an expired token (401 invalid_token) gets one\n"
      "                       fresh read and an immediate attempt. Tokens are never printed\n"
      "  --url-file FILE      the URL is FILE's first line, read again when a pre-signed URL\n"
      "                       expires mid-transfer (Cloud Storage, S3): the body goes on from\n"
      "                       where it stopped with the new URL, pinned to the same object;\n"
      "                       with -o, a state file of an earlier URL is taken up\n"
      "  --dns-servers LIST   ask these DNS servers (192.0.2.53, [2001:db8::53]:53, comma-\n"
      "                       separated) instead of the nameservers of /etc/resolv.conf\n"
      "  --system-resolver    look names up with the system's resolver (getaddrinfo on a\n"
      "                       worker thread: /etc/hosts, nsswitch, the system's DNS servers)\n"
      "                       instead of c-ares; not with --dns-servers\n"
      "%s"
      "  -x URL               curl's name for --proxy URL\n"
      "  --jitter NAME        the backoff strategy; seed is the documented formula itself,\n"
      "                       min(2^n s + U[0, 1000] ms, cap) (default: the profile's)\n"
      "  --idempotency RULE   when a request that may have reached the server is re-sent:\n"
      "                       auto (by method), strict (safe methods or a precondition such\n"
      "                       as If-Match or ifGenerationMatch), yes, no\n",
      kTrustFlagsHelp, profiles::active.name, kSpeedFlagsHelp, kRateFlagHelp, kNetworkFlagsHelp,
      kProxyFlagsHelp);
}

// The request: method, headers, body, redirects, resume, the operation.
void print_request_flags(std::FILE* out) {
  std::fprintf(
      out,
      "  -X METHOD            the request method (default GET, POST with a body, HEAD with -I);\n"
      "                       POST and PATCH are re-sent only when provably not processed\n"
      "  -H 'Name: value'     an extra request header (repeatable, at most %zu); Host and\n"
      "                       User-Agent replace the defaults ('User-Agent:' drops it)\n"
      "  -A AGENT             the User-Agent, as -H 'User-Agent: AGENT' (default stepback/%s)\n"
      "  -d DATA, --data DATA  the request body, as curl's: DATA itself, or @FILE's bytes\n"
      "                       without their CR and LF (@- reads stdin); repeated, the pieces\n"
      "                       are joined with '&'. Sent as application/x-www-form-urlencoded\n"
      "                       (with --operation application/json) unless -H sets a\n"
      "                       Content-Type\n"
      "  --data-binary DATA   the same with @FILE's bytes as they are (the same type: add\n"
      "                       -H 'Content-Type: application/octet-stream' for raw bytes)\n"
      "  --data-raw DATA      the same with DATA taken as it is, even when it starts with @\n"
      "  --max-redirs N       follow at most N redirects (301, 302, 303, 307, 308; default\n"
      "                       %u; 0: none). 303, and 301/302 after a POST, become a GET;\n"
      "                       credentials never go to another origin; https to http, a loop\n"
      "                       or one too many end the request (exit 14)\n"
      "  -L, --location       accepted: redirects are followed without it\n"
      "  -C -, --continue-at -  accepted: a cut download resumes by itself (-o FILE also across\n"
      "                       runs); -C OFFSET is not taken\n"
      "  --range-size BYTES   fetch a GET as successive ranged requests of BYTES (4K, 1M;\n"
      "                       1024-based) on one kept connection, pinned to the object by\n"
      "                       If-Range and checked whole: no response is larger, for a\n"
      "                       device with a small TLS buffer; a server that ignores ranges\n"
      "                       sends the whole body at once\n"
      "  --operation          the request is a mutation that answers with a long-running\n"
      "                       Operation (Memorystore for Redis, ...): poll GET /v1/{name}\n"
      "                       until it is done, at the profile's polling pace (1 s, mobile\n"
      "                       2 s, doubling to 60 s, jittered, never sooner than 0.5 s),\n"
      "                       each poll retried like any request; the operation's response\n"
      "                       goes to stdout (or -o). --deadline also bounds polling\n"
      "                       (default: the profile's, 30 minutes). A POST\n"
      "                       whose query names its resource (?instanceId=...) is re-sent\n"
      "                       after a lost answer unless --idempotency says otherwise\n",
      kMaxGetHeaders, STEPBACK_VERSION, static_cast<unsigned>(profiles::active.max_redirects));
}

// Where the body goes, and what is said on stderr.
void print_output_flags(std::FILE* out) {
  std::fprintf(
      out,
      "  -o FILE              write the body to FILE.part, renamed to FILE on success only.\n"
      "                       A GET keeps a checkpoint in FILE.part.state (every 1 MiB and\n"
      "                       at most every %u s, before each wait, and on Ctrl-C): the same\n"
      "                       command run again after a kill, crash or power cut goes on from\n"
      "                       there with Range and If-Range, and checks the whole file's\n"
      "                       digests; a changed object starts over\n"
      "  -o -                 the body to stdout (the default): no .part file and no\n"
      "                       checkpoint, so nothing to go on from in a later run; a body\n"
      "                       cut short is always an error exit, never a short success\n"
      "  -O, --remote-name    -o with the last segment of the URL's path (query left out,\n"
      "                       not URL-decoded); a path ending in '/', '.' or '..' is refused\n"
      "  --state FILE         keep that checkpoint in FILE instead (with -o FILE)\n"
      "  -f, --fail           an HTTP error (the final response is 400 or above) writes\n"
      "                       nothing to the output and exits 22, as curl's; without -f it\n"
      "                       exits 4 with the error's body written (3 when a retried error\n"
      "                       ran out of retries; its body is then said on stderr)\n"
      "  --fail-with-body     exit 22 on an HTTP error, with its body written\n"
      "  -i, --include        write the final response's head before its body (raw, as\n"
      "                       received); not with -o FILE for a GET, whose file holds the body\n"
      "                       alone\n"
      "  -I, --head           send a HEAD request and write its response head\n"
      "  -s, --silent         no progress lines or meter on stderr; errors are still said\n"
      "  -v, --verbose        both heads of each exchange on stderr, the request's lines after\n"
      "                       '> ', the response's after '< '; Authorization and\n"
      "                       Proxy-Authorization values are masked\n"
      "  --trace              one JSON object per event on stderr instead of progress lines\n"
      "                       (attempt, response, error, wait, done; each with t_ms)\n"
      "  --help               print this help\n"
      "  -k, --insecure       ignored, with a warning: the server's certificate is always\n"
      "                       verified; trust its CA with --cacert or --capath, --pin its key\n"
      "\n",
      static_cast<unsigned>(profiles::active.checkpoint.interval.count() / 1000));
}

void print_exit_codes(std::FILE* out) {
  std::fputs(
      "exit codes:\n"
      "  0  success: the final response is 1xx, 2xx or 3xx (a 3xx once redirects run out\n"
      "     of Location, or with --max-redirs 0)\n"
      "  1  internal error: the TLS library could not be set up\n"
      "  2  usage error: bad option, URL, method, header, or unusable CA file or directory\n"
      "  3  gave up retrying: retries exhausted, deadline, retry budget, or the server asked\n"
      "     for a longer delay than the profile allows\n"
      "  4  the final response is an HTTP error that is not retried (e.g. 404), or a\n"
      "     retryable one to a request that is not idempotent\n"
      "  5  TLS verification failed (certificate chain, validity or host name)\n"
      "  6  another failure that is not retried: the host name does not exist (NXDOMAIN)\n"
      "     or has no address, a malformed or oversized response, a TLS handshake failure\n"
      "     or lost connection of a request that is not idempotent\n"
      "  7  local I/O error: the --data file cannot be read, or the output cannot be written\n"
      "     (also stdout closed with >&-, or a pipe whose reader went away)\n"
      "  8  the body had to start over and stdout cannot (use -o FILE); nothing was spliced\n"
      "  9  --max-time passed\n"
      "  10 the body's CRC32C or MD5 differs from the server's x-goog-hash or Content-MD5\n"
      "  11 --operation: the operation finished with an error (its code, name and message\n"
      "     are printed, e.g. 9 FAILED_PRECONDITION)\n"
      "  12 --operation: gave up polling: the operation was not done by the deadline\n"
      "  13 --operation: the create was answered 409 ALREADY_EXISTS: the resource exists,\n"
      "     possibly made by this run's own first attempt whose answer was lost\n"
      "  14 a redirect was not followed: a loop, more than --max-redirs, https to http, or a\n"
      "     Location that is not an http(s) URL\n"
      "  15 the proxy asked for credentials (407): none were given, or it refused them\n"
      "  16 no network the transfer may use came within --offline-limit (with -o the\n"
      "     checkpoint is kept)\n"
      "  17 --defer-after: the transfer was saved (with -o its checkpoint) to run again\n"
      "     later, as the last line says\n"
      "  22 -f or --fail-with-body: the final response is an HTTP error (400 or above), in\n"
      "     place of 3 or 4\n"
      "  130 Ctrl-C or SIGTERM ended a download; with -o its checkpoint is kept, and the\n"
      "      same command run again goes on from it\n",
      out);
}

}  // namespace

void print_get_usage(std::FILE* out) {
  print_synopsis(out);
  print_connection_flags(out);
  print_request_flags(out);
  print_output_flags(out);
  print_exit_codes(out);
}

}  // namespace stepback::tools

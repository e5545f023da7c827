#include "get_args.hpp"

#include <iterator>
#include <vector>

#include "args.hpp"
#include "stepback/https/detail/text.hpp"
#include "stepback/profiles/active.hpp"

#ifndef STEPBACK_VERSION
#error "STEPBACK_VERSION must be defined by the build (tools/CMakeLists.txt)"
#endif

namespace stepback::tools {
namespace {

constexpr const char* kUserAgent = "stepback/" STEPBACK_VERSION;

// Why a request field cannot come from -H, or nullptr when it can.
const char* owned_field(std::string_view name) {
  if (https::detail::iequals(name, "content-length") ||
      https::detail::iequals(name, "transfer-encoding")) {
    return "stepback frames the body itself (Content-Length from --data)";
  }
  if (https::detail::iequals(name, "connection")) return "stepback manages the connection itself";
  if (https::detail::iequals(name, "accept-encoding")) {
    return "stepback asks for the identity encoding, so that resumed bytes and digests match";
  }
  return nullptr;
}

// The -H fields that are not extra headers: as in curl, Host and User-Agent replace the
// defaults (an empty User-Agent drops it); the fields stepback writes itself are refused.
HeaderUse special_header(const https::Header& h, std::string_view written, GetOptions* o,
                         std::string* error) {
  if (https::detail::iequals(h.name, "host")) {
    if (h.value.empty()) {
      *error = "-H 'Host:' cannot remove Host (HTTP/1.1 requires it); give a value";
      return HeaderUse::kRefused;
    }
    o->host = h.value;
    return HeaderUse::kTaken;
  }
  if (https::detail::iequals(h.name, "user-agent")) {
    o->user_agent = h.value;
    return HeaderUse::kTaken;
  }
  if (const char* owner = owned_field(h.name)) {
    *error = "-H '" + std::string(written) + "': " + owner;
    return HeaderUse::kRefused;
  }
  return HeaderUse::kStore;
}

// The options that go together or not at all; false with *error.
bool check_get_options(const GetOptions& o, std::string* error) {
  if (o.url.empty() && o.url_file == nullptr) {
    *error = "a URL is required (stepback get https://host/path)";
    return false;
  }
  if (!o.url.empty() && o.url_file != nullptr) {
    *error = "give the URL or --url-file, not both";
    return false;
  }
  if (o.bearer != nullptr && o.token_file != nullptr) {
    *error = "--oauth2-bearer and --token-file exclude each other";
    return false;
  }
  return check_trust_flags(o.trust, error);
}

}  // namespace

std::optional<GetOptions> parse_get_args(int argc, char** argv, std::string* error) {
  GetOptions o;
  o.user_agent = kUserAgent;
  std::vector<Flag> flags;
  add_trust_flags(&flags, &o.trust);
  add_proxy_flags(&flags, &o.proxy);
  const Flag get_flags[] = {
      value_flag("--pin", "expected sha256/BASE64 of a SubjectPublicKeyInfo",
                 [&o](std::string_view value, std::string* message) {
                   if (o.pin_count == kMaxPins) {
                     *message = "too many --pin (at most " + std::to_string(kMaxPins) + ")";
                     return false;
                   }
                   if (https::parse_public_key_pin(value.data(), &o.pins[o.pin_count]) !=
                       https::Status::kOk) {
                     return false;
                   }
                   ++o.pin_count;
                   return true;
                 }),
      value_flag("--max-time", "expected seconds above 0, such as 60",
                 [&o](std::string_view value, std::string*) {
                   o.max_time = parse_seconds(value);
                   return o.max_time && o.max_time->count() > 0;
                 }),
      value_flag("--range-size", "expected a size above 0, such as 4K or 1M",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> size = parse_rate(value);
                   if (!size || *size == 0) return false;
                   o.range_size = *size;
                   return true;
                 }),
      text_flag("--oauth2-bearer", &o.bearer),
      text_flag("--token-file", &o.token_file),
      text_flag("--url-file", &o.url_file),
      text_flag("--dns-servers", &o.dns_servers),
      value_flag("-X", {},
                 [&o](std::string_view value, std::string* message) {
                   if (value.empty()) {
                     *message = "-X needs a method (such as GET, POST or PUT), not an empty one";
                     return false;
                   }
                   o.method = value;
                   return true;
                 }),
      header_flag(o.headers, kMaxGetHeaders, &o.header_count,
                  [&o](const https::Header& h, std::string_view written, std::string* message) {
                    return special_header(h, written, &o, message);
                  }),
      value_flag("--data", {},
                 [&o](std::string_view value, std::string*) {
                   o.data = value;
                   return true;
                 }),
      text_flag("-o", &o.output),
      text_flag("--state", &o.state),
      value_flag("--max-redirs", "expected a number of redirects, 0 to 50",
                 [&o](std::string_view value, std::string*) {
                   unsigned n = 0;
                   if (value.empty() || value.size() > 2 ||
                       value.find_first_not_of("0123456789") != std::string_view::npos) {
                     return false;
                   }
                   for (const char c : value) n = n * 10 + static_cast<unsigned>(c - '0');
                   if (n > 50) return false;
                   o.max_redirects = static_cast<std::uint8_t>(n);
                   return true;
                 }),
      switch_flag("--operation", &o.operation),
      switch_flag("--trace", &o.trace),
  };
  flags.insert(flags.end(), std::begin(get_flags), std::end(get_flags));
  add_retry_flags(&flags, &o.retry);
  const auto url = [&o](std::string_view arg, std::string* message) {
    if (!o.url.empty()) {
      *message = "unexpected argument '" + std::string(arg) + "' (one URL only)";
      return false;
    }
    o.url = arg;
    return true;
  };
  const Parsed parsed = parse_flags(argc, argv, flags, url, error);
  if (parsed == Parsed::kOk && !check_get_options(o, error)) return std::nullopt;
  return parsed_options(parsed, o);
}

void print_get_usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: stepback get URL|--url-file FILE [--cacert FILE | --capath DIR]\n"
      "                        [--pin sha256/BASE64]...\n"
      "                        [--tls-max-fragment BYTES] [--profile desktop|mobile]\n"
      "                        [--max-retries N] [--max-backoff SECONDS] [--deadline SECONDS]\n"
      "                        [--max-time SECONDS] [--idempotency auto|strict|yes|no]\n"
      "                        [--speed-limit BYTES] [--speed-time SECONDS]\n"
      "                        [--limit-rate RATE] [--range-size BYTES]\n"
      "                        [--no-metered] [--metered-up-to SIZE] [--no-roaming]\n"
      "                        [--network-type TYPE] [--offline-limit SECONDS]\n"
      "                        [--jitter seed|full|equal|decorrelated|none]\n"
      "                        [--oauth2-bearer TOKEN | --token-file FILE]\n"
      "                        [--dns-servers IP[:PORT][,...]]\n"
      "                        [--proxy URL] [--noproxy LIST]\n"
      "                        [-X METHOD] [-H 'Name: value']... [--data @FILE|TEXT]\n"
      "                        [-o FILE [--state FILE]] [--max-redirs N]\n"
      "                        [--operation] [--trace]\n"
      "\n"
      "Makes one HTTPS (or http://) request and retries it with truncated exponential\n"
      "backoff per the device profile. The body goes to stdout (or FILE); progress goes to\n"
      "stderr, one line per attempt, with a countdown of each wait when stderr is a terminal.\n"
      "Names are looked up with c-ares, without blocking, AAAA and A together; a name\n"
      "that does not exist (NXDOMAIN) ends the request at once with exit code 6.\n"
      "\n"
      "%s"
      "  --pin sha256/BASE64  accept only a chain with this SubjectPublicKeyInfo hash in it\n"
      "                       (repeatable; a mismatch fails at once, exit 5)\n"
      "                       (default: %s when it exists)\n"
      "  --profile NAME       desktop or mobile: retry policy, timeouts and budget\n"
      "                       (default: %s, chosen at build time)\n"
      "  --max-retries N      retries after the first attempt (0..1000)\n"
      "  --max-backoff S      the cap on one backoff wait, in seconds (e.g. 32 or 0.5)\n"
      "  --deadline S         no new attempt or wait past S seconds (0: none); an attempt\n"
      "                       that is receiving is never cut (a stall or --speed-limit ends it)\n"
      "  --max-time S         an overall limit on the whole request, transfers included\n"
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
      "%s"
      "  --jitter NAME        the backoff strategy; seed is the documented formula itself,\n"
      "                       min(2^n s + U[0, 1000] ms, cap) (default: the profile's)\n"
      "  --idempotency RULE   when a request that may have reached the server is re-sent:\n"
      "                       auto (by method), strict (safe methods or a precondition such\n"
      "                       as If-Match or ifGenerationMatch), yes, no\n"
      "  -X METHOD            the request method (default GET, or POST with --data);\n"
      "                       POST and PATCH are re-sent only when provably not processed\n"
      "  -H 'Name: value'     an extra request header (repeatable, at most %zu); Host and\n"
      "                       User-Agent replace the defaults ('User-Agent:' drops it)\n"
      "  --data @FILE|TEXT    the request body: FILE's bytes, or TEXT itself (sent as\n"
      "                       application/octet-stream unless -H sets a Content-Type)\n"
      "  -o FILE              write the body to FILE.part, renamed to FILE on success only.\n"
      "                       A GET keeps a checkpoint in FILE.part.state (every 1 MiB and\n"
      "                       at most every %u s, before each wait, and on Ctrl-C): the same\n"
      "                       command run again after a kill, crash or power cut goes on from\n"
      "                       there with Range and If-Range, and checks the whole file's\n"
      "                       digests; a changed object starts over\n"
      "  --state FILE         keep that checkpoint in FILE instead (with -o FILE)\n"
      "  --range-size BYTES   fetch a GET as successive ranged requests of BYTES (4K, 1M;\n"
      "                       1024-based) on one kept connection, pinned to the object by\n"
      "                       If-Range and checked whole: no response is larger, for a\n"
      "                       device with a small TLS buffer; a server that ignores ranges\n"
      "                       sends the whole body at once\n"
      "  --max-redirs N       follow at most N redirects (301, 302, 303, 307, 308; default\n"
      "                       %u; 0: none). 303, and 301/302 after a POST, become a GET;\n"
      "                       credentials never go to another origin; https to http, a loop\n"
      "                       or one too many end the request (exit 14)\n"
      "  --operation          the request is a mutation that answers with a long-running\n"
      "                       Operation (Memorystore for Redis, ...): poll GET /v1/{name}\n"
      "                       until it is done, at the profile's polling pace (1 s, mobile\n"
      "                       2 s, doubling to 60 s, jittered, never sooner than 0.5 s),\n"
      "                       each poll retried like any request; the operation's response\n"
      "                       goes to stdout (or -o). --deadline also bounds polling\n"
      "                       (default: the profile's, 30 minutes). A POST\n"
      "                       whose query names its resource (?instanceId=...) is re-sent\n"
      "                       after a lost answer unless --idempotency says otherwise\n"
      "  --trace              one JSON object per event on stderr instead of progress lines\n"
      "                       (attempt, response, error, wait, done; each with t_ms)\n"
      "  --help               print this help\n"
      "\n"
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
      "  130 Ctrl-C or SIGTERM ended a download; with -o its checkpoint is kept, and the\n"
      "      same command run again goes on from it\n",
      kTrustFlagsHelp, kSystemBundle, profiles::active.name, kSpeedFlagsHelp, kRateFlagHelp,
      kNetworkFlagsHelp, kProxyFlagsHelp, kMaxGetHeaders,
      static_cast<unsigned>(profiles::active.checkpoint.interval.count() / 1000),
      static_cast<unsigned>(profiles::active.max_redirects));
}

}  // namespace stepback::tools

#include "get.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdarg>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "client_loop.hpp"
#include "get_download.hpp"
#include "get_operation.hpp"
#include "request_flags.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/detail/text.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"
#include "stepback/transfer/operation.hpp"

#ifndef STEPBACK_VERSION
#error "STEPBACK_VERSION must be defined by the build (tools/CMakeLists.txt)"
#endif

namespace stepback::tools {
namespace {

constexpr const char* kPrefix = "stepback get: ";
constexpr const char* kUserAgent = "stepback/" STEPBACK_VERSION;

// The output stream's stdio buffer, installed before the first write so that stdio does not
// allocate one while the request runs.
char g_output_buffer[16 * 1024];

constexpr std::size_t kMaxHeaders = 32;
constexpr std::size_t kMaxPins = 8;

// What `stepback get` was asked for. The views point into argv, which outlives the request.
struct GetOptions {
  std::string_view url;
  TrustFlags trust;  // --cacert, --capath
  ProxyFlags proxy;  // --proxy, --noproxy
  https::PublicKeyPin pins[kMaxPins];
  std::size_t pin_count = 0;
  RetryFlags retry;  // --profile, --max-retries, --max-backoff, --deadline, --jitter, --idempotency
  std::optional<Millis> max_time;
  std::uint64_t range_size = 0;       // --range-size BYTES: a download in pieces; 0: one request
  const char* bearer = nullptr;       // --oauth2-bearer TOKEN
  const char* token_file = nullptr;   // --token-file FILE, read again before every attempt
  const char* url_file = nullptr;     // --url-file FILE: the URL, read again when it expires
  const char* dns_servers = nullptr;  // --dns-servers LIST (c-ares CSV); null: resolv.conf
  https::RequestSpec::Idempotency idempotency = https::RequestSpec::Idempotency::kByMethod;
  std::string_view method;                   // Empty: GET, or POST with --data.
  std::string_view host;                     // -H 'Host: ...'; empty: the URL's.
  std::string_view user_agent = kUserAgent;  // -H 'User-Agent: ...' ("" drops it).
  https::Header headers[kMaxHeaders];
  std::size_t header_count = 0;
  std::optional<std::string_view> data;  // "@FILE" or the literal body.
  const char* output = nullptr;
  const char* state = nullptr;                // --state FILE (with -o FILE)
  std::optional<std::uint8_t> max_redirects;  // --max-redirs N; none: the profile's
  bool trace = false;
  bool operation = false;  // --operation: follow the Operation the request answers with.
  bool help = false;
};

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

std::optional<GetOptions> parse_get_args(int argc, char** argv, std::string* error) {
  GetOptions o;
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
      header_flag(o.headers, kMaxHeaders, &o.header_count,
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
  if (parsed == Parsed::kOk) {
    if (o.url.empty() && o.url_file == nullptr) {
      *error = "a URL is required (stepback get https://host/path)";
      return std::nullopt;
    }
    if (!o.url.empty() && o.url_file != nullptr) {
      *error = "give the URL or --url-file, not both";
      return std::nullopt;
    }
    if (o.bearer != nullptr && o.token_file != nullptr) {
      *error = "--oauth2-bearer and --token-file exclude each other";
      return std::nullopt;
    }
    if (!check_trust_flags(o.trust, error)) return std::nullopt;
  }
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
      kNetworkFlagsHelp, kProxyFlagsHelp, kMaxHeaders,
      static_cast<unsigned>(profiles::active.checkpoint.interval.count() / 1000),
      static_cast<unsigned>(profiles::active.max_redirects));
}

// The request body of --data: "@FILE" read whole into *storage (the one heap use, at
// set-up), else the text itself. False with *error when the file cannot be read.
bool load_body(std::string_view data, std::vector<std::uint8_t>* storage, https::ConstBytes* out,
               std::string* error) {
  if (data.empty() || data[0] != '@') {
    *out = https::ConstBytes{reinterpret_cast<const std::uint8_t*>(data.data()), data.size()};
    return true;
  }
  // stdio, not iostreams: an ifstream pulls the whole locale machinery into a static build.
  const std::string path(data.substr(1));
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (in == nullptr) {
    *error = "cannot read --data file '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::uint8_t chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, in)) > 0)
    storage->insert(storage->end(), chunk, chunk + n);
  const bool failed = std::ferror(in) != 0;
  std::fclose(in);
  if (failed) {
    *error = "error reading --data file '" + path + "'";
    return false;
  }
  *out = https::ConstBytes{storage->data(), storage->size()};
  return true;
}

// Where Authorization values come from: --oauth2-bearer or --token-file.
struct TokenSource {
  const char* bearer = nullptr;
  const char* file = nullptr;
};

// https::Credentials::authorization for a TokenSource: "Bearer " and the token, the file read
// again on every call (at most 8 KiB, surrounding whitespace trimmed); 0 (no field) when the
// file cannot be read, so the server's 401 says what is wrong.
std::size_t token_authorization(void* context, bool /*refresh*/, https::MutableBytes out) {
  const auto* source = static_cast<const TokenSource*>(context);
  static char file_token[8 * 1024];
  std::string_view token;
  if (source->bearer != nullptr) {
    token = source->bearer;
  } else {
    std::FILE* in = std::fopen(source->file, "rb");
    if (in == nullptr) return 0;
    const std::size_t n = std::fread(file_token, 1, sizeof file_token, in);
    std::fclose(in);
    token = trim(std::string_view(file_token, n));
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.remove_suffix(1);
    token = trim(token);
  }
  static constexpr std::string_view kScheme = "Bearer ";
  const std::size_t size = kScheme.size() + token.size();
  if (token.empty() || size > out.size) return token.empty() ? 0 : size;
  std::memcpy(out.data, kScheme.data(), kScheme.size());
  std::memcpy(out.data + kScheme.size(), token.data(), token.size());
  return size;
}

// --url-file: the file is read again when a pre-signed URL expires; the URL is its first line,
// surrounding whitespace trimmed, at most 8 KiB. `current` is the URL in use.
struct UrlFile {
  const char* path = nullptr;
  char current[8 * 1024] = {};
  std::size_t size = 0;
};

// Reads `file`'s URL into file->current; false when it cannot be read or is empty.
bool read_url_file(UrlFile* file) {
  static char text[8 * 1024 + 1];
  std::FILE* in = std::fopen(file->path, "rb");
  if (in == nullptr) return false;
  const std::size_t n = std::fread(text, 1, sizeof text, in);
  std::fclose(in);
  std::string_view url(text, n < sizeof file->current ? n : 0);
  const std::size_t eol = url.find_first_of("\r\n");
  if (eol != std::string_view::npos) url = url.substr(0, eol);
  url = trim(url);
  if (url.empty()) return false;
  std::memcpy(file->current, url.data(), url.size());
  file->size = url.size();
  return true;
}

// https::UrlRefresh for --url-file: the file's URL when it changed since it was last read; 0
// (none: the expiry answer ends the request) when it is the same, unreadable or too long.
std::size_t fresh_url_from_file(void* context, https::MutableBytes out) {
  auto* file = static_cast<UrlFile*>(context);
  const std::string before(file->current, file->size);
  if (!read_url_file(file)) return 0;
  if (std::string_view(file->current, file->size) == before || file->size > out.size) return 0;
  std::memcpy(out.data, file->current, file->size);
  return file->size;
}

}  // namespace

int run_get(int argc, char** argv) {
  std::string error;
  const std::optional<GetOptions> parsed = parse_get_args(argc, argv, &error);
  if (!parsed) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }
  GetOptions o = *parsed;
  if (o.help) {
    print_get_usage(stdout);
    return kExitOk;
  }
  static UrlFile url_file;
  if (o.url_file != nullptr) {
    url_file.path = o.url_file;
    if (!read_url_file(&url_file)) {
      std::fprintf(stderr, "%scannot read a URL from --url-file '%s' (its first line)\n", kPrefix,
                   o.url_file);
      return kExitUsage;
    }
    // The request's URL views into a copy that stays: url_file.current changes on refresh.
    static char first_url[sizeof url_file.current];
    std::memcpy(first_url, url_file.current, url_file.size);
    o.url = std::string_view(first_url, url_file.size);
  }
  https::Url url;
  if (https::parse_url(o.url, &url) != https::Status::kOk) {
    std::fprintf(stderr, "%sinvalid URL '%s' (expected https://host[:port]/path)\n", kPrefix,
                 std::string(o.url).c_str());
    return kExitUsage;
  }
  const std::optional<Policy> policy = make_policy(o.retry, &error);
  if (!policy) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }
  static ProxySetup proxy;
  if (!make_proxy(o.proxy, url, &proxy, &error)) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }

  std::vector<std::uint8_t> body_storage;
  https::ConstBytes body;
  if (o.data && !load_body(*o.data, &body_storage, &body, &error)) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitLocalIo;
  }
  const std::string_view method = !o.method.empty() ? o.method : (o.data ? "POST" : "GET");
  // A plain GET is a transfer::Download (get_download.cpp): it opens its own output.
  const bool download = method == "GET" && !o.data && !o.operation;
  if (o.retry.defer_after && !download) {
    std::fprintf(stderr, "%s--defer-after is for a GET (a download), not this request\n", kPrefix);
    return kExitUsage;
  }
  if (o.range_size > 0 && !download) {
    std::fprintf(stderr, "%s--range-size is for a GET (a download), not this request\n", kPrefix);
    return kExitUsage;
  }
  BodyOutput output{stdout};
  // -o FILE, a regular file or a new one: the body goes to FILE.part, renamed over FILE on
  // success only, so a failed run neither leaves a partial FILE nor wipes an existing one.
  // Anything else (/dev/null, a FIFO, a terminal) is written in place and, like stdout,
  // cannot start over.
  const bool via_part = o.output != nullptr && !download && writes_via_part(o.output);
  const std::string part = via_part ? std::string(o.output) + ".part" : std::string();
  if (o.output != nullptr && !download) {
    const char* path = via_part ? part.c_str() : o.output;
    output.file = std::fopen(path, "wb");
    if (output.file == nullptr) {
      std::fprintf(stderr, "%scannot open '%s' for writing: %s\n", kPrefix, path,
                   std::strerror(errno));
      return kExitLocalIo;
    }
    output.restartable = via_part;
  }

  if (!download) (void)std::setvbuf(output.file, g_output_buffer, _IOFBF, sizeof g_output_buffer);

  if (install_tls_arena() != https::Status::kOk) {
    std::fprintf(stderr, "%scannot install the TLS arena\n", kPrefix);
    return kExitInternal;
  }
  https::TlsClientConfig tls;
  if (url.tls) {
    if (tls.init() != https::Status::kOk) {
      std::fprintf(stderr, "%scannot set up TLS (entropy or crypto initialization failed)\n",
                   kPrefix);
      return kExitInternal;
    }
    if (!load_trust(o.trust, o.pins, o.pin_count, &tls, &error)) {
      std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
      return kExitUsage;
    }
  }

  platform::Status random_status = platform::Status::kOk;
  Xoshiro128 random = platform::make_os_random(&random_status);
  RetryBudget budget(o.retry.profile->budget);
  const RetryContext context{*policy, random, &budget};
  const Millis start = platform::monotonic_now();
  Reporter reporter(stderr, o.trace, ::isatty(STDERR_FILENO) == 1, kPrefix, start);
  reporter.set_time_limit(o.max_time);
  // The resolver reads resolv.conf here, before the loop, so no step() touches a file.
  https::CaresOptions dns;
  dns.servers = o.dns_servers;
  https::CaresResolver resolver;
  if (resolver.init(dns) != https::Status::kOk && o.dns_servers != nullptr) {
    std::fprintf(stderr, "%sinvalid --dns-servers: %s\n", kPrefix, resolver.message());
    return kExitUsage;
  }
  // Without a usable resolv.conf every lookup fails with init()'s words; numeric hosts work.
  https::TcpTlsConnector connector(tls, resolver);  // http:// URLs go without TLS.
  static https::ProxyRoom proxy_room;  // What going through a proxy takes (about 2.7 KiB).
  if (connector.set_proxy(&proxy.config, &proxy_room) != https::Status::kOk) {
    std::fprintf(stderr, "%sthe proxy's host name or credentials are too long\n", kPrefix);
    return kExitUsage;
  }
  if (!bind_network(o.retry, &connector, &error)) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }
  https::ClientOptions options;
  options.timeouts = make_timeouts(o.retry);
  options.network = o.retry.network;
  options.buffers = client_buffers();
  options.body = body_sink(&output);
  options.events = reporter.sink();
  options.progress = reporter.progress_policy();
  options.wall_now = &platform::wall_now;
  options.max_time = o.max_time;
  // Redirects for every request get makes: the plain one, the download, the operation's.
  options.max_redirects = o.max_redirects.value_or(o.retry.profile->max_redirects);
  options.redirect_url = redirect_buffer();
  // --limit-rate for requests that are not a download (which paces itself: max_rate), in
  // each direction, as curl's.
  RateLimiter receive_limit(o.retry.limit_rate, default_burst(o.retry.limit_rate));
  RateLimiter send_limit(o.retry.limit_rate, default_burst(o.retry.limit_rate));
  if (o.retry.limit_rate > 0 && !download) {
    options.receive_limit = &receive_limit;
    options.send_limit = &send_limit;
  }
  if (o.url_file != nullptr) {
    options.url_refresh = https::UrlRefresh{&fresh_url_from_file, &url_file};
  }
  TokenSource tokens{o.bearer, o.token_file};
  if (o.bearer != nullptr || o.token_file != nullptr) {
    options.credentials = https::Credentials{&token_authorization, &tokens};
  }

  https::RequestSpec spec;
  spec.head.method = method;
  spec.head.url = url;
  spec.head.user_agent = o.user_agent;
  spec.head.host = o.host;
  // A body without a declared type is declared as bytes, never left for the server to guess.
  https::Header headers[kMaxHeaders + 1];
  std::size_t header_count = 0;
  bool has_type = false;
  for (std::size_t i = 0; i < o.header_count; ++i) {
    headers[header_count++] = o.headers[i];
    has_type |= https::detail::iequals(o.headers[i].name, "content-type");
  }
  // (A mutation of a Google API takes JSON.)
  if (o.data && !has_type) {
    headers[header_count++] = {"Content-Type",
                               o.operation ? "application/json" : "application/octet-stream"};
  }
  spec.head.headers = headers;
  spec.head.header_count = header_count;
  spec.body = https::BodySource::of(&body);
  spec.idempotency = o.retry.idempotency;

  std::optional<https::ClientResult> result;  // The plain request's; none with --operation.
  int operation_code = kExitOk;
  if (download) {
    DownloadCommand command;
    command.connector = &connector;
    command.context = &context;
    command.client = options;
    command.request = spec;
    command.url_text = o.url;
    command.url_may_change = o.url_file != nullptr;
    command.checkpoint = o.retry.profile->checkpoint;
    command.max_rate = o.retry.limit_rate;
    command.range_size = o.range_size;
    command.network_type = o.retry.network_type;
    command.defer_after = o.retry.defer_after;
    command.interface = o.retry.interface;
    command.output = o.output;
    command.state = o.state;
    command.reporter = &reporter;
    command.prefix = kPrefix;
    command.trace = o.trace;
    command.start = start;
    return run_download_command(command);
  }
  if (o.operation) {
    // A create that names its resource (?instanceId=) cannot make a second one: it may be
    // re-sent after a lost answer, and a 409 then says the first one landed.
    if (spec.idempotency == https::RequestSpec::Idempotency::kByMethod &&
        spec.head.method == "POST" && transfer::names_its_resource(url.target)) {
      spec.idempotency = https::RequestSpec::Idempotency::kYes;
    }
    OperationCommand command;
    command.connector = &connector;
    command.context = &context;
    command.client = options;
    command.mutation = spec;
    command.polling = polling_for(*o.retry.profile, o.retry.deadline);
    command.reporter = &reporter;
    command.output = &output;
    command.trace = o.trace;
    command.countdown = ::isatty(STDERR_FILENO) == 1;
    command.start = start;
    command.prefix = kPrefix;
    operation_code = run_operation_command(command);
    if (operation_code == kExitUsage) return kExitUsage;
  } else {
    https::Client client(connector, context, options);
    reporter.attach(&client);
    const https::Status started = client.start(spec);
    if (started != https::Status::kOk) {
      std::fprintf(stderr, "%s%s\n", kPrefix,
                   started == https::Status::kBufferTooSmall
                       ? request_head_too_large()
                       : "invalid request: check the method (-X), the headers (-H) and the URL");
      return kExitUsage;
    }
    result = run_client(client, reporter, nullptr);
    show_last_error_body(
        *result, client.error_body(),
        o.trace ? std::optional<Millis>(platform::monotonic_now() - start) : std::nullopt);
  }
  finish_output(&output, o.output != nullptr, kPrefix,
                via_part ? part.c_str() : (o.output != nullptr ? o.output : "stdout"));
  const int code = result ? exit_code(*result, output.failed)
                          : (output.failed ? static_cast<int>(kExitLocalIo) : operation_code);
  if (via_part) {
    if (code == kExitOk && std::rename(part.c_str(), o.output) != 0) {
      std::fprintf(stderr, "%scannot rename '%s' to '%s': %s\n", kPrefix, part.c_str(), o.output,
                   std::strerror(errno));
      (void)std::remove(part.c_str());
      return kExitLocalIo;
    }
    if (code != kExitOk) (void)std::remove(part.c_str());
  }
  return code;
}

}  // namespace stepback::tools

// What `stepback get` is asked for: its options, read from argv, and its --help.
#ifndef STEPBACK_TOOLS_GET_ARGS_HPP_
#define STEPBACK_TOOLS_GET_ARGS_HPP_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "request_flags.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/tls/pins.hpp"

namespace stepback::tools {

constexpr std::size_t kMaxGetHeaders = 32;
constexpr std::size_t kMaxPins = 8;
constexpr std::size_t kMaxDataPieces = 16;

// One piece of the request body, as curl's options give it: -d/--data/--data-ascii (a @FILE
// without its CR and LF bytes), --data-binary (a @FILE as it is), --data-raw (never a file).
// Pieces are joined with '&', as curl's.
struct DataPiece {
  enum class Kind : std::uint8_t { kAscii, kBinary, kRaw };
  std::string_view text;  // "@FILE" ("@-": stdin) or the bytes themselves.
  Kind kind = Kind::kAscii;
};

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
  std::string_view method;            // Empty: GET, or POST with --data.
  std::string_view host;              // -H 'Host: ...'; empty: the URL's.
  std::string_view user_agent;        // -H 'User-Agent: ...' ("" drops it); stepback/VERSION.
  https::Header headers[kMaxGetHeaders];
  std::size_t header_count = 0;
  DataPiece data[kMaxDataPieces];  // -d, --data-binary, --data-raw, in order.
  std::size_t data_count = 0;
  const char* output = nullptr;               // -o FILE; null (or -o -): stdout.
  const char* state = nullptr;                // --state FILE (with -o FILE)
  std::optional<std::uint8_t> max_redirects;  // --max-redirs N; none: the profile's
  bool system_resolver = false;               // --system-resolver: getaddrinfo instead of c-ares
  bool trace = false;
  bool operation = false;  // --operation: follow the Operation the request answers with.
  // curl's habits (get_args.cpp, curl_habits.hpp):
  bool remote_name = false;     // -O: -o with the last segment of the URL's path.
  bool fail = false;            // -f: an HTTP error (>= 400) writes nothing and exits 22.
  bool fail_with_body = false;  // --fail-with-body: exit 22, the body written.
  bool include = false;         // -i: the response head before the body.
  bool head = false;            // -I: a HEAD request, its head written.
  bool silent = false;          // -s: no progress on stderr, errors still.
  bool verbose = false;         // -v: both heads on stderr, "> " and "< ".
  bool insecure = false;        // -k: taken, with a warning; verification stays on.
  bool help = false;

  bool has_data() const { return data_count > 0; }
};

// Reads argv[1..argc) (argv[0] == "get"); nullopt with *error when it is not a request.
std::optional<GetOptions> parse_get_args(int argc, char** argv, std::string* error);

// Writes the --help of `stepback get` (get_usage.cpp).
void print_get_usage(std::FILE* out);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_GET_ARGS_HPP_

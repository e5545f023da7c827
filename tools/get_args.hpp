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
  std::optional<std::string_view> data;  // "@FILE" or the literal body.
  const char* output = nullptr;
  const char* state = nullptr;                // --state FILE (with -o FILE)
  std::optional<std::uint8_t> max_redirects;  // --max-redirs N; none: the profile's
  bool trace = false;
  bool operation = false;  // --operation: follow the Operation the request answers with.
  bool help = false;
};

// Reads argv[1..argc) (argv[0] == "get"); nullopt with *error when it is not a request.
std::optional<GetOptions> parse_get_args(int argc, char** argv, std::string* error);

// Writes the --help of `stepback get`.
void print_get_usage(std::FILE* out);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_GET_ARGS_HPP_

// The request flags the subcommands that make requests (get, upload) share: the retry flags,
// headers, seconds and the trust anchors. Their main loop, exit codes and buffers are in
// client_loop.hpp, their progress lines in reporter.hpp.
#ifndef STEPBACK_TOOLS_REQUEST_FLAGS_HPP_
#define STEPBACK_TOOLS_REQUEST_FLAGS_HPP_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/rate_limit.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/proxy/proxy.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/types.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/timeouts.hpp"
#include "stepback/profiles/active.hpp"

namespace stepback::tools {

// The system's CA bundle, named in messages (kTrustFlagsHelp spells it out too).
inline constexpr const char* kSystemBundle = "/etc/ssl/certs/ca-certificates.crt";

// The retry flags: --profile, --max-retries, --max-backoff, --deadline, --jitter,
// --idempotency and the throughput floor's --speed-limit and --speed-time, on top of the
// profile compiled in.
struct RetryFlags {
  const profiles::DeviceProfile* profile = &profiles::active;
  std::optional<std::uint32_t> max_retries;
  std::optional<Millis> max_backoff;
  std::optional<Millis> deadline;
  std::optional<Jitter> jitter;
  https::RequestSpec::Idempotency idempotency = https::RequestSpec::Idempotency::kByMethod;
  std::optional<std::uint32_t> speed_limit;  // Bytes per second; 0: no floor.
  std::optional<Millis> speed_time;
  std::uint64_t limit_rate = 0;  // --limit-rate: the most bytes a second; 0: none.
  // The networks a transfer may use: --no-metered, --metered-up-to SIZE, --no-roaming.
  https::NetworkPolicy network;
  // --network-type: what the current network is taken to be (none, unmetered, metered,
  // roaming, metered+roaming); without it, connected and unmetered, as the routes say.
  std::optional<https::NetworkInfo> network_type;
  std::optional<Millis> offline_limit;  // --offline-limit S: Timeouts::offline.
  const char* interface = nullptr;      // --interface NAME: the device to send through.
  std::optional<Millis> defer_after;    // --defer-after S: hand a longer wait to a scheduler.
  // get's --connect-timeout S (curl's): the TCP connect (per address) and the TLS handshake,
  // each.
  std::optional<Millis> connect_timeout;
};
// Appends the retry flags to a subcommand's flag table, each writing into *out.
void add_retry_flags(std::vector<Flag>* flags, RetryFlags* out);
// The profile's retry policy with the flags' overrides; nullopt with *error when they do not
// make a usable policy.
std::optional<Policy> make_policy(const RetryFlags& flags, std::string* error);
// The profile's transport timeouts with the flags' throughput floor and connect timeout.
Timeouts make_timeouts(const RetryFlags& flags);
// The --help lines of --speed-limit and --speed-time, with both profiles' defaults.
extern const char kSpeedFlagsHelp[];
// The --help lines of --limit-rate.
extern const char kRateFlagHelp[];
// The --help lines of the network flags.
extern const char kNetworkFlagsHelp[];

// Parses a rate as curl's --limit-rate takes it: bytes a second, with an optional fraction
// and an optional suffix K, M, G or T (either case, 1024-based): "100K", "1.5M", "1G";
// nullopt for anything else or above 1 TiB/s (kMaxRate).
std::optional<std::uint64_t> parse_rate(std::string_view text);

// Parses "12", "0.5" or "2.25" seconds (at most millisecond precision); nullopt otherwise.
std::optional<Millis> parse_seconds(std::string_view text);
// `s` without leading and trailing blanks (spaces, tabs).
std::string_view trim(std::string_view s);
// Splits "Name: value"; false when there is no colon or the name is empty or holds blanks.
bool parse_header(std::string_view text, https::Header* out);

// What a -H flag's hook makes of one header: stores it, has taken it itself (as Host
// replaces the default), or refuses it.
enum class HeaderUse : std::uint8_t { kStore, kTaken, kRefused };
// Sees each parsed -H header before it is stored, with the flag's value as written; sets
// *error when it returns kRefused.
using HeaderHook = std::function<HeaderUse(const https::Header& header, std::string_view written,
                                           std::string* error)>;
// The -H 'Name: value' flag: parses each value into the next of headers[0, capacity),
// counted in *count, after `hook` (may be empty) lets it through.
Flag header_flag(https::Header* headers, std::size_t capacity, std::size_t* count,
                 HeaderHook hook = {});

// Where the trust anchors come from: --cacert FILE or --capath DIR, both null for the
// system's store. NUL-terminated: tails of argv strings.
struct TrustFlags {
  const char* cacert = nullptr;
  const char* capath = nullptr;
  // --tls-max-fragment BYTES: the max_fragment_length to ask servers for, 0 for none; by
  // default none, or the largest the build takes when its TLS input buffer is below a full
  // record (the small-RAM build).
  std::size_t max_fragment =
      https::kTlsInputBufferBytes < 16384 ? https::kTlsLargestMaxFragment : 0;
  // --no-early-data: never send a request as TLS 1.3 early data (0-RTT).
  bool no_early_data = false;
  // --tls-session FILE: the TLS session kept in FILE between runs (app::TlsSessionFile);
  // null: kept in this process only.
  const char* tls_session = nullptr;
};
// Appends --cacert, --capath, --tls-max-fragment, --no-early-data and --tls-session to a
// subcommand's flag table, each writing into *out.
void add_trust_flags(std::vector<Flag>* flags, TrustFlags* out);
// False with *error when --cacert and --capath are both given.
bool check_trust_flags(const TrustFlags& flags, std::string* error);
// The --help lines of --cacert and --capath, the same for every subcommand.
extern const char kTrustFlagsHelp[];

// --proxy URL and --noproxy LIST, curl's names; null when not given (NUL-terminated argv tails).
struct ProxyFlags {
  const char* proxy = nullptr;
  const char* noproxy = nullptr;
};
// Appends --proxy and --noproxy to a subcommand's flag table, each writing into *out.
void add_proxy_flags(std::vector<Flag>* flags, ProxyFlags* out);
// The --help lines of --proxy and --noproxy, the same for every subcommand.
extern const char kProxyFlagsHelp[];

// The proxy a request uses, with the storage its decoded credentials view into.
struct ProxySetup {
  https::ProxyConfig config;  // config.host empty: no proxy.
  const char* source = "";    // "--proxy", "https_proxy", ...: where the URL came from.
  char storage[512] = {};
};
// Chooses the proxy for `url` as curl does: --proxy ("" for none), else the environment's
// https_proxy or HTTPS_PROXY for https:// and http_proxy (lower case only) for http://, then
// all_proxy or ALL_PROXY; the exclusions of --noproxy, else no_proxy or NO_PROXY. False with
// *error (which never shows the password) when the proxy URL does not parse.
bool make_proxy(const ProxyFlags& flags, const https::Url& url, ProxySetup* out,
                std::string* error);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_REQUEST_FLAGS_HPP_

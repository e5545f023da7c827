#include "request_flags.hpp"

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>

#include "args.hpp"

namespace stepback::tools {
namespace {

// Longest --max-backoff and --deadline accepted, in seconds; the policy's own limits.
constexpr std::uint64_t kMaxSeconds = 400ULL * 24 * 3600;

}  // namespace

// Parses "12", "0.5" or "2.25" seconds (at most millisecond precision, at most kMaxSeconds).
std::optional<Millis> parse_seconds(std::string_view text) {
  const std::size_t dot = text.find('.');
  const std::optional<std::uint64_t> whole = parse_u64(text.substr(0, dot));
  if (!whole || *whole > kMaxSeconds) return std::nullopt;
  std::uint64_t ms = *whole * 1000;
  if (dot != std::string_view::npos) {
    const std::string_view fraction = text.substr(dot + 1);
    if (fraction.empty() || fraction.size() > 3) return std::nullopt;
    const std::optional<std::uint64_t> digits = parse_u64(fraction);
    if (!digits) return std::nullopt;
    std::uint64_t scaled = *digits;
    for (std::size_t i = fraction.size(); i < 3; ++i) scaled *= 10;
    ms += scaled;
  }
  return Millis(ms);
}

std::optional<std::uint64_t> parse_rate(std::string_view text) {
  std::uint64_t unit = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        unit = 1ULL << 10;
        break;
      case 'm':
      case 'M':
        unit = 1ULL << 20;
        break;
      case 'g':
      case 'G':
        unit = 1ULL << 30;
        break;
      case 't':
      case 'T':
        unit = 1ULL << 40;
        break;
      default:
        break;
    }
    if (unit != 1) text.remove_suffix(1);
  }
  const std::size_t dot = text.find('.');
  const std::optional<std::uint64_t> whole = parse_u64(text.substr(0, dot));
  if (!whole || *whole > kMaxRate / unit) return std::nullopt;
  std::uint64_t rate = *whole * unit;
  if (dot != std::string_view::npos) {
    // Up to six decimals of the unit (1.5M, 0.25K), rounded down to whole bytes.
    const std::string_view fraction = text.substr(dot + 1);
    if (fraction.empty() || fraction.size() > 6) return std::nullopt;
    const std::optional<std::uint64_t> digits = parse_u64(fraction);
    if (!digits) return std::nullopt;
    std::uint64_t scale = 1;
    for (std::size_t i = 0; i < fraction.size(); ++i) scale *= 10;
    // unit <= 2^40 and digits < 10^6 < 2^20: the product fits.
    rate += *digits * unit / scale;
  }
  if (rate > kMaxRate) return std::nullopt;
  return rate;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "Name: value"; false when there is no colon or the name is empty or holds blanks.
bool parse_header(std::string_view text, https::Header* out) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view name = text.substr(0, colon);
  if (name.find_first_of(" \t") != std::string_view::npos) return false;
  *out = https::Header{name, trim(text.substr(colon + 1))};
  return true;
}

Flag header_flag(https::Header* headers, std::size_t capacity, std::size_t* count,
                 HeaderHook hook) {
  return value_flag("-H", {},
                    [headers, capacity, count, hook = std::move(hook)](std::string_view value,
                                                                       std::string* error) {
                      https::Header h;
                      if (!parse_header(value, &h)) {
                        *error =
                            "invalid header '" + std::string(value) + "' (expected 'Name: value')";
                        return false;
                      }
                      const HeaderUse use = hook ? hook(h, value, error) : HeaderUse::kStore;
                      if (use != HeaderUse::kStore) return use == HeaderUse::kTaken;
                      if (*count == capacity) {
                        *error = "too many -H headers (at most " + std::to_string(capacity) + ")";
                        return false;
                      }
                      headers[(*count)++] = h;
                      return true;
                    });
}

void add_trust_flags(std::vector<Flag>* flags, TrustFlags* out) {
  flags->push_back(text_flag("--cacert", &out->cacert));
  flags->push_back(text_flag("--capath", &out->capath));
  flags->push_back(
      value_flag("--tls-max-fragment", "expected 512, 1024, 2048, 4096 or 0 (none)",
                 [out](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> n = parse_u64(value);
                   if (!n || (*n != 0 && *n != 512 && *n != 1024 && *n != 2048 && *n != 4096)) {
                     return false;
                   }
                   out->max_fragment = static_cast<std::size_t>(*n);
                   return true;
                 }));
  flags->push_back(switch_flag("--no-early-data", &out->no_early_data));
  flags->push_back(text_flag("--tls-session", &out->tls_session));
}

bool check_trust_flags(const TrustFlags& flags, std::string* error) {
  if (flags.cacert != nullptr && flags.capath != nullptr) {
    *error = "--cacert and --capath exclude each other";
    return false;
  }
  return true;
}

void add_proxy_flags(std::vector<Flag>* flags, ProxyFlags* out) {
  flags->push_back(text_flag("--proxy", &out->proxy));
  flags->push_back(text_flag("--noproxy", &out->noproxy));
}

const char kProxyFlagsHelp[] =
    "  --proxy URL          go through this HTTP proxy, http://[USER:PASSWORD@]HOST[:PORT]\n"
    "                       (port 1080 by default, as curl; USER and PASSWORD percent-\n"
    "                       encoded; Basic credentials go to the proxy alone and are never\n"
    "                       printed): https:// URLs through a CONNECT tunnel, TLS verified\n"
    "                       against the server, never the proxy; http:// ones forwarded.\n"
    "                       Default: https_proxy or HTTPS_PROXY (http_proxy, lower case, for\n"
    "                       http://), then all_proxy or ALL_PROXY; --proxy '' uses none.\n"
    "                       A proxy that asks for other credentials (407) ends the request\n"
    "                       (exit 15); 502/503/504 or a cut CONNECT is retried\n"
    "  --noproxy LIST       hosts reached without the proxy (default: no_proxy or NO_PROXY):\n"
    "                       comma-separated names matching themselves and their subdomains\n"
    "                       (example.com, .example.com), IP addresses, IPv4 ranges\n"
    "                       (10.0.0.0/8), an optional :PORT; '*' for all hosts\n";

namespace {

// The first of the environment variables `names` that is set, or null.
const char* first_env(std::initializer_list<const char*> names, const char** which) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value != nullptr) {
      *which = name;
      return value;
    }
  }
  return nullptr;
}

}  // namespace

bool make_proxy(const ProxyFlags& flags, const https::Url& url, ProxySetup* out,
                std::string* error) {
  const char* text = flags.proxy;
  out->source = "--proxy";
  if (text == nullptr) {
    text = url.tls
               ? first_env({"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}, &out->source)
               : first_env({"http_proxy", "all_proxy", "ALL_PROXY"}, &out->source);
  }
  out->config = https::ProxyConfig{};
  if (text == nullptr || text[0] == '\0') return true;
  if (https::parse_proxy_url(text, out->storage, sizeof out->storage, &out->config) !=
      https::Status::kOk) {
    // The URL may hold a password: the message names where it came from, not what it says.
    *error = std::string("invalid proxy URL in ") + out->source +
             " (expected http://[USER:PASSWORD@]HOST[:PORT]; https:// and socks proxies are "
             "not supported)";
    return false;
  }
  const char* which = "";
  const char* no_proxy =
      flags.noproxy != nullptr ? flags.noproxy : first_env({"no_proxy", "NO_PROXY"}, &which);
  if (no_proxy != nullptr) out->config.no_proxy = no_proxy;
  return true;
}

const char kTrustFlagsHelp[] =
    "  --cacert FILE        trust the PEM or DER certificates in FILE\n"
    "  --capath DIR         trust the CAs of a hashed directory (openssl rehash DIR),\n"
    "                       looked up by subject when the handshake needs them\n"
    "                       (default: the system's store, the hashed /etc/ssl/certs, else\n"
    "                       a bundle such as /etc/ssl/certs/ca-certificates.crt; the\n"
    "                       server's certificate is always verified: there is no -k)\n"
    "  --tls-max-fragment BYTES  ask the server for TLS records of at most BYTES (RFC 6066\n"
    "                       max_fragment_length: 512, 1024, 2048 or 4096; 0: do not ask).\n"
    "                       TLS 1.2 is then the highest version offered (mbedTLS negotiates\n"
    "                       it there only). A record larger than the TLS input buffer fails\n"
    "                       at once (exit 6). Default: 0; in a build whose TLS input buffer\n"
    "                       is below 16 KiB (the small-ram preset), the largest it takes\n"
    "  --no-early-data      never send a request in TLS 1.3 early data (0-RTT); by default a\n"
    "                       GET or HEAD (or a request declared idempotent) without a body\n"
    "                       rides in the first flight of a resumed session that allows it\n"
    "  --tls-session FILE   keep the TLS session in FILE (mode 0600) between runs: a later\n"
    "                       run to the same server resumes it (and may send its GET early)\n"
    "                       instead of a full handshake. FILE holds a resumption secret; a\n"
    "                       file for another server or trust, expired or damaged is removed\n";

void add_retry_flags(std::vector<Flag>* flags, RetryFlags* out) {
  const auto seconds = [](std::optional<Millis>* into, bool zero_allowed) {
    return [into, zero_allowed](std::string_view value, std::string*) {
      const std::optional<Millis> s = parse_seconds(value);
      if (!s || (!zero_allowed && s->count() == 0)) return false;
      *into = s;
      return true;
    };
  };
  flags->push_back(profile_flag(&out->profile));
  flags->push_back(value_flag("--max-retries", "expected an integer in 0..1000",
                              [out](std::string_view value, std::string*) {
                                const std::optional<std::uint64_t> n = parse_u64(value);
                                if (!n || *n > 1000) return false;
                                out->max_retries = static_cast<std::uint32_t>(*n);
                                return true;
                              }));
  flags->push_back(value_flag("--max-backoff", "expected seconds such as 30 or 0.5, above 0",
                              seconds(&out->max_backoff, false)));
  flags->push_back(value_flag("--deadline", "expected seconds such as 30 or 0.5, 0 for none",
                              seconds(&out->deadline, true)));
  flags->push_back(strategy_flag("--jitter", &out->jitter));
  flags->push_back(value_flag("--speed-limit",
                              "expected bytes per second, such as 1024, 0 for none",
                              [out](std::string_view value, std::string*) {
                                const std::optional<std::uint64_t> n = parse_u64(value);
                                if (!n || *n > UINT32_MAX) return false;
                                out->speed_limit = static_cast<std::uint32_t>(*n);
                                return true;
                              }));
  flags->push_back(value_flag("--speed-time", "expected seconds such as 30 or 0.5, above 0",
                              seconds(&out->speed_time, false)));
  flags->push_back(value_flag("--limit-rate",
                              "expected bytes a second with an optional K, M, G or T (1024-based),"
                              " such as 100K, 1.5M or 1G, at most 1T; 0 for none",
                              [out](std::string_view value, std::string*) {
                                const std::optional<std::uint64_t> rate = parse_rate(value);
                                if (!rate) return false;
                                out->limit_rate = *rate;
                                return true;
                              }));
  flags->push_back(Flag{"--no-metered", false, {}, [out](std::string_view, std::string*) {
                          out->network.metered = false;
                          return true;
                        }});
  flags->push_back(Flag{"--no-roaming", false, {}, [out](std::string_view, std::string*) {
                          out->network.roaming = false;
                          return true;
                        }});
  flags->push_back(value_flag("--metered-up-to",
                              "expected a size with an optional K, M, G or T (1024-based)",
                              [out](std::string_view value, std::string*) {
                                const std::optional<std::uint64_t> size = parse_rate(value);
                                if (!size) return false;
                                out->network.metered_up_to = *size;
                                return true;
                              }));
  flags->push_back(value_flag("--network-type",
                              "allowed: none, unmetered, metered, roaming, metered+roaming",
                              [out](std::string_view value, std::string*) {
                                https::NetworkInfo n;
                                if (value == "none") {
                                  n.connected = false;
                                } else if (value == "metered") {
                                  n.metered = true;
                                } else if (value == "roaming") {
                                  n.roaming = true;
                                } else if (value == "metered+roaming") {
                                  n.metered = n.roaming = true;
                                } else if (value != "unmetered") {
                                  return false;
                                }
                                out->network_type = n;
                                return true;
                              }));
  flags->push_back(text_flag("--interface", &out->interface));
  flags->push_back(value_flag("--defer-after", "expected seconds such as 60 or 0.5, above 0",
                              seconds(&out->defer_after, false)));
  flags->push_back(value_flag("--offline-limit", "expected seconds such as 60 or 0.5, above 0",
                              seconds(&out->offline_limit, false)));
  flags->push_back(value_flag("--idempotency", "allowed: auto, strict, yes, no",
                              [out](std::string_view value, std::string*) {
                                using I = https::RequestSpec::Idempotency;
                                for (const auto& [name, rule] :
                                     {std::pair{"auto", I::kByMethod},
                                      std::pair{"strict", I::kStrict}, std::pair{"yes", I::kYes},
                                      std::pair{"no", I::kNo}}) {
                                  if (value == name) {
                                    out->idempotency = rule;
                                    return true;
                                  }
                                }
                                return false;
                              }));
}

// The profile's retry policy with the command line's overrides; nullopt (and *error) when
// they do not make a usable policy.
std::optional<Policy> make_policy(const RetryFlags& o, std::string* error) {
  Policy p = o.profile->retry;
  if (o.max_retries) p.max_retries = *o.max_retries;
  if (o.max_backoff) {
    p.max_backoff = *o.max_backoff;
    p.initial_delay = min(p.initial_delay, p.max_backoff);
  }
  if (o.deadline) p.total_deadline = *o.deadline;
  if (o.jitter) p.jitter = *o.jitter;
  if (p.max_backoff > kMaxBackoffLimit) {
    *error = "--max-backoff is at most " + std::to_string(kMaxBackoffLimit.count() / 1000) + " s";
    return std::nullopt;
  }
  if (!valid(p)) {
    *error = "--deadline must be 0 (none) or at least the first backoff (" +
             std::to_string(p.initial_delay.count()) + " ms)";
    return std::nullopt;
  }
  return p;
}

Timeouts make_timeouts(const RetryFlags& o) {
  Timeouts t = o.profile->timeouts;
  if (o.speed_limit) t.speed_limit = *o.speed_limit;
  if (o.speed_time) t.speed_time = *o.speed_time;
  if (o.offline_limit) t.offline = *o.offline_limit;
  if (o.connect_timeout) t.connect = t.tls_handshake = *o.connect_timeout;
  return t;
}

// The profiles' values, checked against profiles/ by tools_request_flags_test.
const char kSpeedFlagsHelp[] =
    "  --speed-limit BYTES  end an attempt whose body (received or sent) moves fewer than\n"
    "                       BYTES a second over --speed-time (0: never), as a stall does:\n"
    "                       it is retried, a download from where it stopped\n"
    "                       (default: desktop 1024, mobile 100)\n"
    "  --speed-time S       the window --speed-limit is measured over, in seconds\n"
    "                       (default: desktop 30, mobile 60)\n";

// curl's units; the floor's cap is the Client's (https::ClientOptions::receive_limit).
const char kRateFlagHelp[] =
    "  --limit-rate RATE    move at most RATE bytes a second (curl's units: 100K, 1.5M, 1G;\n"
    "                       K = 1024), paced by a token bucket of an eighth of a second\n"
    "                       that sleeps in the main loop; the TCP window slows the sender.\n"
    "                       A --speed-limit above RATE/2 is lowered to RATE/2 (default:\n"
    "                       none)\n";

const char kNetworkFlagsHelp[] =
    "  --no-metered         never use a metered network (cellular, a hotspot): wait for\n"
    "                       another, as without a network\n"
    "  --metered-up-to SIZE  use a metered network only for transfers up to SIZE (4M, 1G)\n"
    "  --no-roaming         never use a roaming network\n"
    "  --network-type TYPE  take the network for none, unmetered, metered, roaming or\n"
    "                       metered+roaming (default: as the routes say, read on Linux\n"
    "                       and followed over rtnetlink: a device that had a default\n"
    "                       route needs one, else any route off it will do; a change of\n"
    "                       the default route ends the exchange on the old network at\n"
    "                       once and goes on over the new one)\n"
    "  --offline-limit S    how long to wait for a network the transfer may use, spending\n"
    "                       no retry and no deadline, before giving up with exit 16\n"
    "                       (default: desktop 300, mobile 1800)\n"
    "  --interface NAME     send connections and DNS queries through this device only\n"
    "                       (SO_BINDTODEVICE: wlan0, eth1), whatever the routes prefer;\n"
    "                       a device that is missing or down fails the connect, retried\n"
    "  --defer-after S      when the transfer has nothing to do for longer than S (a\n"
    "                       backoff, a Retry-After) or waits for a network it may use,\n"
    "                       save where it stands and exit 17, saying when to run the same\n"
    "                       command again, on what network and the bytes left: for a\n"
    "                       scheduler (a systemd timer, WorkManager) to wake it then\n";

}  // namespace stepback::tools

// The request flags that `stepback get` and `stepback upload` share (tools/request_flags.hpp):
// -H through header_flag() and --cacert/--capath/--tls-max-fragment through add_trust_flags().
#include "request_flags.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

namespace stepback::tools {
namespace {

// Parses command lines against a flag table; keeps every argv string alive, since the flags
// keep views into them.
class Parser {
 public:
  explicit Parser(const std::vector<Flag>* flags) : flags_(flags) {}

  // Parses `args` (after a "cmd" argv[0]); returns the error, "" on success.
  std::string parse(std::vector<std::string> args) {
    args.insert(args.begin(), "cmd");
    std::vector<std::string>& kept = kept_.emplace_back(std::move(args));
    std::vector<char*> argv;
    for (std::string& a : kept) argv.push_back(a.data());
    std::string error;
    const Parsed parsed =
        parse_flags(static_cast<int>(argv.size()), argv.data(), *flags_, nullptr, &error);
    return parsed == Parsed::kOk ? std::string() : error;
  }

 private:
  const std::vector<Flag>* flags_;
  std::deque<std::vector<std::string>> kept_;
};

TEST(RequestFlags, HeaderFlagStoresEachHeaderUpToTheCapacity) {
  https::Header headers[2];
  std::size_t count = 0;
  const std::vector<Flag> flags = {header_flag(headers, 2, &count)};
  Parser p(&flags);
  EXPECT_EQ(p.parse({"-H", "A: 1", "-H", "B:two  "}), "");
  ASSERT_EQ(count, 2U);
  EXPECT_EQ(headers[0].name, "A");
  EXPECT_EQ(headers[0].value, "1");
  EXPECT_EQ(headers[1].name, "B");
  EXPECT_EQ(headers[1].value, "two");

  count = 0;
  EXPECT_EQ(p.parse({"-H", "A: 1", "-H", "B: 2", "-H", "C: 3"}), "too many -H headers (at most 2)");
  EXPECT_EQ(count, 2U);
}

TEST(RequestFlags, HeaderFlagNamesAMalformedHeaderEvenWhenFull) {
  https::Header headers[1];
  std::size_t count = 0;
  const std::vector<Flag> flags = {header_flag(headers, 1, &count)};
  Parser p(&flags);
  EXPECT_EQ(p.parse({"-H", "no colon"}), "invalid header 'no colon' (expected 'Name: value')");
  EXPECT_EQ(p.parse({"-H", "A: 1", "-H", "bad name: 2"}),
            "invalid header 'bad name: 2' (expected 'Name: value')");
}

TEST(RequestFlags, HeaderFlagHookTakesOrRefusesBeforeStoring) {
  https::Header headers[1];
  std::size_t count = 0;
  std::string host;
  const std::vector<Flag> flags = {
      header_flag(headers, 1, &count,
                  [&host](const https::Header& h, std::string_view written, std::string* error) {
                    if (h.name == "Host") {
                      host = std::string(h.value);
                      return HeaderUse::kTaken;
                    }
                    if (h.name == "Connection") {
                      *error = "no '" + std::string(written) + "'";
                      return HeaderUse::kRefused;
                    }
                    return HeaderUse::kStore;
                  })};
  Parser p(&flags);
  // A taken header does not use a slot, even with the table full.
  EXPECT_EQ(p.parse({"-H", "A: 1", "-H", "Host: example.com"}), "");
  EXPECT_EQ(count, 1U);
  EXPECT_EQ(host, "example.com");
  count = 0;
  EXPECT_EQ(p.parse({"-H", "Connection: close"}), "no 'Connection: close'");
  EXPECT_EQ(count, 0U);
}

TEST(RequestFlags, TrustFlagsAreCacertThenCapathAndExcludeEachOther) {
  TrustFlags trust;
  std::vector<Flag> flags;
  add_trust_flags(&flags, &trust);
  Parser p(&flags);
  EXPECT_EQ(flag_names(flags),
            "--cacert, --capath, --tls-max-fragment, --no-early-data, --tls-session, --help");
  EXPECT_FALSE(trust.no_early_data);
  EXPECT_EQ(p.parse({"--no-early-data"}), "");
  EXPECT_TRUE(trust.no_early_data);
  EXPECT_EQ(trust.tls_session, nullptr);
  EXPECT_EQ(p.parse({"--tls-session", "s.bin"}), "");
  EXPECT_STREQ(trust.tls_session, "s.bin");
  EXPECT_EQ(p.parse({"--cacert", "ca.pem"}), "");
  EXPECT_STREQ(trust.cacert, "ca.pem");
  EXPECT_EQ(trust.capath, nullptr);
  std::string error;
  EXPECT_TRUE(check_trust_flags(trust, &error));
  EXPECT_EQ(p.parse({"--capath=/etc/ssl/certs"}), "");
  EXPECT_STREQ(trust.capath, "/etc/ssl/certs");
  EXPECT_FALSE(check_trust_flags(trust, &error));
  EXPECT_EQ(error, "--cacert and --capath exclude each other");
}

// --tls-max-fragment takes the RFC 6066 lengths and 0; by default it asks nothing, unless the
// build's TLS input buffer is below a full record (the small-RAM build).
TEST(RequestFlags, TlsMaxFragmentTakesTheRfc6066LengthsAndDefaultsByTheInputBuffer) {
  TrustFlags trust;
  EXPECT_EQ(trust.max_fragment,
            https::kTlsInputBufferBytes < 16384 ? https::kTlsLargestMaxFragment : 0U);
  std::vector<Flag> flags;
  add_trust_flags(&flags, &trust);
  Parser p(&flags);
  for (const char* ok : {"512", "1024", "2048", "4096", "0"}) {
    EXPECT_EQ(p.parse({"--tls-max-fragment", ok}), "") << ok;
    EXPECT_EQ(trust.max_fragment, std::stoul(ok));
  }
  for (const char* bad : {"8192", "16384", "3000", "-1", "4k"}) {
    EXPECT_EQ(p.parse({"--tls-max-fragment", bad}),
              std::string("invalid --tls-max-fragment '") + bad +
                  "' (expected 512, 1024, 2048, 4096 or 0 (none))");
  }
}

// --speed-limit and --speed-time override the profile's throughput floor, one at a time.
TEST(RequestFlags, SpeedFlagsOverrideTheProfilesFloor) {
  RetryFlags retry;
  retry.profile = &profiles::mobile;
  std::vector<Flag> flags;
  add_retry_flags(&flags, &retry);
  Parser p(&flags);
  Timeouts t = make_timeouts(retry);
  EXPECT_EQ(t.speed_limit, profiles::mobile.timeouts.speed_limit);
  EXPECT_EQ(t.speed_time, profiles::mobile.timeouts.speed_time);
  EXPECT_EQ(t.read, profiles::mobile.timeouts.read);
  EXPECT_EQ(p.parse({"--speed-limit", "2000"}), "");
  t = make_timeouts(retry);
  EXPECT_EQ(t.speed_limit, 2000U);
  EXPECT_EQ(t.speed_time, profiles::mobile.timeouts.speed_time);
  EXPECT_EQ(p.parse({"--speed-time=1.5", "--speed-limit", "0"}), "");
  t = make_timeouts(retry);
  EXPECT_EQ(t.speed_limit, 0U);
  EXPECT_EQ(t.speed_time, Millis(1500));
  EXPECT_TRUE(valid(t));
  EXPECT_EQ(p.parse({"--speed-time", "0"}),
            "invalid --speed-time '0' (expected seconds such as 30 or 0.5, above 0)");
  EXPECT_EQ(p.parse({"--speed-limit", "-1"}),
            "invalid --speed-limit '-1' (expected bytes per second, such as 1024, 0 for none)");
  EXPECT_EQ(p.parse({"--speed-limit", "4294967296"}),
            "invalid --speed-limit '4294967296' (expected bytes per second, such as 1024, 0 for "
            "none)");
}

// The help text states both profiles' floors as profiles/ has them.
TEST(RequestFlags, SpeedFlagsHelpStatesTheProfilesDefaults) {
  const std::string help = kSpeedFlagsHelp;
  const auto seconds = [](Millis m) { return std::to_string(m.count() / 1000); };
  EXPECT_NE(
      help.find("(default: desktop " + std::to_string(profiles::desktop.timeouts.speed_limit) +
                ", mobile " + std::to_string(profiles::mobile.timeouts.speed_limit) + ")"),
      std::string::npos)
      << help;
  EXPECT_NE(help.find("(default: desktop " + seconds(profiles::desktop.timeouts.speed_time) +
                      ", mobile " + seconds(profiles::mobile.timeouts.speed_time) + ")"),
            std::string::npos)
      << help;
}

// The network flags: the policy (--no-metered, --metered-up-to, --no-roaming), the network
// taken as current (--network-type) and the offline limit over the profile's.
TEST(RequestFlags, NetworkFlagsSetThePolicyTheNetworkAndTheOfflineLimit) {
  RetryFlags retry;
  retry.profile = &profiles::mobile;
  std::vector<Flag> flags;
  add_retry_flags(&flags, &retry);
  Parser p(&flags);
  EXPECT_EQ(make_timeouts(retry).offline, profiles::mobile.timeouts.offline);
  EXPECT_TRUE(retry.network.metered && retry.network.roaming);
  EXPECT_FALSE(retry.network_type.has_value());
  EXPECT_EQ(p.parse({"--no-roaming", "--metered-up-to", "4M", "--offline-limit", "2.5",
                     "--network-type", "metered+roaming"}),
            "");
  EXPECT_TRUE(retry.network.metered);
  EXPECT_FALSE(retry.network.roaming);
  EXPECT_EQ(retry.network.metered_up_to, 4U * 1024 * 1024);
  EXPECT_EQ(make_timeouts(retry).offline, Millis(2500));
  ASSERT_TRUE(retry.network_type.has_value());
  EXPECT_TRUE(retry.network_type->connected && retry.network_type->metered &&
              retry.network_type->roaming);
  EXPECT_EQ(p.parse({"--no-metered", "--network-type", "none"}), "");
  EXPECT_FALSE(retry.network.metered);
  EXPECT_FALSE(retry.network_type->connected);
  EXPECT_EQ(p.parse({"--network-type", "wifi"}),
            "invalid --network-type 'wifi' (allowed: none, unmetered, metered, roaming, "
            "metered+roaming)");
  EXPECT_EQ(p.parse({"--offline-limit", "0"}),
            "invalid --offline-limit '0' (expected seconds such as 60 or 0.5, above 0)");
  // The help states both profiles' offline limits as profiles/ has them.
  const auto seconds = [](Millis m) { return std::to_string(m.count() / 1000); };
  EXPECT_NE(std::string(kNetworkFlagsHelp)
                .find("(default: desktop " + seconds(profiles::desktop.timeouts.offline) +
                      ", mobile " + seconds(profiles::mobile.timeouts.offline) + ")"),
            std::string::npos)
      << kNetworkFlagsHelp;
}

// --limit-rate takes curl's units: bytes a second, K, M, G, T (either case, 1024-based), a
// fraction of the unit; 0 is no limit; above 1 TiB/s or anything else is refused.
TEST(RequestFlags, LimitRateTakesCurlsUnits) {
  EXPECT_EQ(parse_rate("0"), 0U);
  EXPECT_EQ(parse_rate("1000"), 1000U);
  EXPECT_EQ(parse_rate("100K"), 100U * 1024);
  EXPECT_EQ(parse_rate("100k"), 100U * 1024);
  EXPECT_EQ(parse_rate("3m"), 3U * 1024 * 1024);
  EXPECT_EQ(parse_rate("1.5M"), 1536U * 1024);
  EXPECT_EQ(parse_rate("0.25K"), 256U);
  EXPECT_EQ(parse_rate("1G"), 1ULL << 30);
  EXPECT_EQ(parse_rate("1T"), kMaxRate);
  EXPECT_EQ(parse_rate("2T"), std::nullopt);
  EXPECT_EQ(parse_rate("1025G"), std::nullopt);
  for (const char* bad : {"", "K", "10X", "1.", ".5M", "1.2345678M", "-1", "1 M", "1MB"}) {
    EXPECT_EQ(parse_rate(bad), std::nullopt) << bad;
  }
  RetryFlags retry;
  std::vector<Flag> flags;
  add_retry_flags(&flags, &retry);
  Parser p(&flags);
  EXPECT_EQ(retry.limit_rate, 0U);
  EXPECT_EQ(p.parse({"--limit-rate", "512K"}), "");
  EXPECT_EQ(retry.limit_rate, 512U * 1024);
  EXPECT_EQ(p.parse({"--limit-rate=bogus"}),
            "invalid --limit-rate 'bogus' (expected bytes a second with an optional K, M, G or "
            "T (1024-based), such as 100K, 1.5M or 1G, at most 1T; 0 for none)");
}

}  // namespace
}  // namespace stepback::tools

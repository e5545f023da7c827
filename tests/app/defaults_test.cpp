// The profile's values in the options app/defaults.hpp builds, for the active profile and for
// one of the test's own; a request built from them follows a redirect as the profile says;
// building them calls no heap function.
#include "stepback/app/defaults.hpp"

#include <gtest/gtest.h>

#include <string>

#include "stepback/https/client.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/profiles/active.hpp"
#include "tests/support/heap_trap.hpp"
#include "tests/support/scripted_connector.hpp"
#include "tests/support/string_sink.hpp"

namespace stepback::app {
namespace {

Buffers g_buffers;

// A profile unlike both built-in ones, so that a value taken from the active one by mistake
// shows.
constexpr profiles::DeviceProfile kOdd = [] {
  profiles::DeviceProfile p = profiles::desktop;
  p.name = "odd";
  p.max_redirects = 2;
  p.timeouts.connect = Millis(1234);
  p.timeouts.read = Millis(5678);
  p.checkpoint.bytes = 4321;
  p.checkpoint.interval = Millis(987);
  p.retry.max_retries = 3;
  p.budget.max_tokens = 7;
  p.defer.delay = Millis(4567);
  p.defer.spread = Millis(890);
  return p;
}();
static_assert(profiles::valid(kOdd));

TEST(AppDefaults, TheBuffersHaveTheActiveProfilesSizes) {
  const profiles::BufferSizes& sizes = profiles::active.buffers;
  const https::ClientBuffers b = g_buffers.client();
  EXPECT_EQ(b.request.size, sizes.request);
  EXPECT_EQ(b.response_head.size, sizes.response_head);
  EXPECT_EQ(b.io.size, sizes.io);
  EXPECT_EQ(b.error_body.size, sizes.error_body);
  EXPECT_EQ(b.request.data, g_buffers.request);
  EXPECT_EQ(b.io.data, g_buffers.io);
  EXPECT_EQ(sizeof g_buffers.redirect_url, sizes.redirect_url);
  EXPECT_EQ(sizeof g_buffers.session_uri, sizes.session_uri);
}

TEST(AppDefaults, ClientOptionsCarryTheActiveProfile) {
  const profiles::DeviceProfile& p = profiles::active;
  const https::ClientOptions o = client_options(g_buffers);
  EXPECT_EQ(o.max_redirects, 5);
  EXPECT_EQ(o.max_redirects, p.max_redirects);
  EXPECT_EQ(o.timeouts.connect, p.timeouts.connect);
  EXPECT_EQ(o.timeouts.tls_handshake, p.timeouts.tls_handshake);
  EXPECT_EQ(o.timeouts.read, p.timeouts.read);
  EXPECT_EQ(o.timeouts.speed_limit, p.timeouts.speed_limit);
  EXPECT_EQ(o.timeouts.speed_time, p.timeouts.speed_time);
  EXPECT_EQ(o.timeouts.offline, p.timeouts.offline);
  EXPECT_EQ(o.wall_now, &platform::wall_now);
  EXPECT_EQ(o.redirect_url.data, g_buffers.redirect_url);
  EXPECT_EQ(o.redirect_url.size, p.buffers.redirect_url);
  EXPECT_EQ(o.buffers.response_head.data, g_buffers.response_head);
}

TEST(AppDefaults, OptionsCarryTheGivenProfile) {
  const https::ClientOptions c = client_options(g_buffers, kOdd);
  EXPECT_EQ(c.max_redirects, 2);
  EXPECT_EQ(c.timeouts.connect, Millis(1234));
  EXPECT_EQ(c.timeouts.read, Millis(5678));
  const transfer::DownloadOptions d = download_options(g_buffers, kOdd);
  EXPECT_EQ(d.client.max_redirects, 2);
  EXPECT_EQ(d.client.timeouts.read, Millis(5678));
  EXPECT_EQ(d.client.wall_now, &platform::wall_now);
  EXPECT_EQ(d.checkpoint.bytes, 4321U);
  EXPECT_EQ(d.checkpoint.interval, Millis(987));
  EXPECT_EQ(d.checkpoints.save, nullptr);  // The app's (or DownloadFiles').
  EXPECT_EQ(d.defer.delay, Millis(4567));
  EXPECT_EQ(d.defer.spread, Millis(890));
  const transfer::UploadOptions u = upload_options(g_buffers, kOdd);
  EXPECT_EQ(u.defer.delay, Millis(4567));
  EXPECT_EQ(u.defer.spread, Millis(890));
  EXPECT_EQ(u.timeouts.connect, Millis(1234));
  EXPECT_EQ(u.wall_now, &platform::wall_now);
  EXPECT_EQ(u.session_uri.data, g_buffers.session_uri);
  EXPECT_EQ(u.session_uri.size, sizeof g_buffers.session_uri);
  EXPECT_EQ(u.buffers.io.data, g_buffers.io);
}

TEST(AppDefaults, DownloadOptionsCarryTheActiveCheckpointPolicy) {
  const transfer::DownloadOptions d = download_options(g_buffers);
  EXPECT_EQ(d.checkpoint.bytes, profiles::active.checkpoint.bytes);
  EXPECT_EQ(d.checkpoint.interval, profiles::active.checkpoint.interval);
  EXPECT_EQ(d.client.max_redirects, profiles::active.max_redirects);
}

TEST(AppDefaults, RetrySetupHoldsTheProfilesPolicyAndBudget) {
  RetrySetup retry(kOdd);
  EXPECT_EQ(&retry.context().policy, &kOdd.retry);
  EXPECT_EQ(retry.context().policy.max_retries, 3U);
  EXPECT_EQ(retry.context().budget, &retry.budget());
  EXPECT_TRUE(retry.seeded_from_os());  // Linux has getrandom.
  EXPECT_STREQ(retry.seed_message(), "");
  // The profile's seven tokens, full.
  EXPECT_EQ(retry.budget().milli_tokens(), 7000U);
  RetrySetup active;
  EXPECT_EQ(active.budget().milli_tokens(), profiles::active.budget.max_tokens * 1000);
  EXPECT_EQ(&active.context().policy, &profiles::active.retry);
  // Two setups draw differently: each is seeded from the OS.
  RetrySetup other(kOdd);
  bool differ = false;
  for (int i = 0; i < 4; ++i) {
    differ |= retry.context().random.next_u32() != other.context().random.next_u32();
  }
  EXPECT_TRUE(differ);
}

// Without client_options() a 302 page would be the body; with it, the redirect is followed.
TEST(AppDefaults, ARequestBuiltFromTheDefaultsFollowsARedirect) {
  testing::ScriptedConnector connector;
  connector.add()
      .recv_data("HTTP/1.1 302 Found\r\nLocation: /real\r\nContent-Length: 5\r\n\r\nmoved")
      .recv_would_block()
      .recv_data("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
  testing::StringSink body;
  RetrySetup retry;
  https::ClientOptions options = client_options(g_buffers);
  options.body = body.sink();
  https::Client client(connector, retry.context(), options);
  https::RequestSpec spec;
  ASSERT_EQ(https::parse_url("https://example.test/latest", &spec.head.url), https::Status::kOk);
  ASSERT_EQ(client.start(spec), https::Status::kOk);
  Millis now{1000};
  https::ClientNext next = client.step(now);
  for (int i = 0; i < 1000 && next.kind != https::ClientNext::Kind::kDone; ++i) {
    if (next.kind == https::ClientNext::Kind::kWaitUntil && next.at > now) now = next.at;
    next = client.step(now);
  }
  ASSERT_EQ(next.kind, https::ClientNext::Kind::kDone);
  EXPECT_EQ(client.result().outcome, Outcome::kSuccess);
  EXPECT_EQ(client.result().status, 200);
  EXPECT_EQ(client.redirects(), 1U);
  EXPECT_EQ(body.bytes, "hello");
}

TEST(AppDefaults, BuildingTheOptionsCallsNoHeapFunction) {
  if (!testing::heap_trap_available()) GTEST_SKIP() << "no heap trap in this build";
  long calls = 0;
  {
    testing::HeapTrap trap;
    RetrySetup retry;
    transfer::DownloadOptions d = download_options(g_buffers);
    transfer::UploadOptions u = upload_options(g_buffers);
    https::ClientOptions c = client_options(g_buffers, kOdd);
    static_cast<void>(d);
    static_cast<void>(u);
    static_cast<void>(c);
    calls = trap.calls();
  }
  EXPECT_EQ(calls, 0) << testing::HeapTrap::describe();
}

}  // namespace
}  // namespace stepback::app

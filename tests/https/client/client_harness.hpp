// The one harness of the Client's tests (tests/https/client/client_*_test.cpp, one binary):
// each test scripts what every connection receives and checks what was sent, the waits asked
// for and the outcome, with a fake clock and a seeded generator. Also the responses and
// helpers more than one of those files uses.
#ifndef STEPBACK_TESTS_HTTPS_CLIENT_CLIENT_HARNESS_HPP_
#define STEPBACK_TESTS_HTTPS_CLIENT_CLIENT_HARNESS_HPP_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stepback/https/client.hpp"
#include "stepback/https/integrity/base64.hpp"
#include "stepback/https/integrity/crc32c.hpp"
#include "tests/support/scripted_connector.hpp"
#include "tests/support/scripted_transport.hpp"
#include "tests/support/string_sink.hpp"

// A named namespace, not an unnamed one: the test files of the binary share one definition of
// each (so one Harness::wall), and their tests, inside it, name the library's types unqualified.
namespace stepback::https::client_test {

using testing::ScriptedConnector;
using testing::ScriptedTransport;
using testing::StringSink;

inline constexpr char kOk[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
inline constexpr char k503[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n";
inline constexpr char kHead10[] = "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 10\r\n\r\n";

inline void record(void* context, const ClientEvent& e) {
  static_cast<std::vector<ClientEvent>*>(context)->push_back(e);
}

// One client with its buffers, a short policy (no jitter: exact waits) and a fake clock.
struct Harness {
  explicit Harness(const char* url = "https://example.test/x", const char* method = "GET") {
    policy.jitter = Jitter::kNone;
    policy.initial_delay = Millis(100);
    policy.max_backoff = Millis(400);
    policy.max_retries = 3;
    timeouts.read = Millis(5000);
    EXPECT_EQ(parse_url(url, &spec.head.url), Status::kOk);
    spec.head.method = method;
  }
  ClientNext start() {
    ClientOptions options;
    options.timeouts = timeouts;
    options.buffers =
        ClientBuffers{MutableBytes{request, sizeof request}, MutableBytes{head, sizeof head},
                      MutableBytes{io, sizeof io}, MutableBytes{error_body, sizeof error_body}};
    options.body = body.sink();
    options.body_limit = body_limit;
    options.events = EventSink{record, &events};
    options.wall_now = [] { return wall; };
    options.max_time = max_time;
    options.credentials = credentials;
    options.max_redirects = max_redirects;
    options.redirect_url = MutableBytes{redirect_url, sizeof redirect_url};
    options.url_refresh = url_refresh;
    options.network = network;
    client = std::make_unique<Client>(connector, context, options);
    if (network_info) client->network_changed(now, *network_info);
    EXPECT_EQ(resume ? client->start(spec, *resume) : client->start(spec), Status::kOk);
    return client->step(now);
  }
  // Steps until done, jumping the clock to each deadline; at most `limit` steps.
  ClientNext run(ClientNext next, int limit = 10000) {
    for (int i = 0; i < limit && next.kind != ClientNext::Kind::kDone; ++i) {
      nexts.push_back(next);
      // A wait that ends at once is the client handing back its turn, not a backoff.
      if (next.kind == ClientNext::Kind::kWaitUntil && next.at > now) {
        waits.push_back((next.at - now).count());
        now = next.at;
      }
      next = client->step(now);
    }
    return next;
  }

  Policy policy;
  Xoshiro128 random{7};
  RetryContext context{policy, random, nullptr};
  Timeouts timeouts;
  static inline Millis wall{1'700'000'000'000};  // The wall clock every Harness reads.
  ScriptedConnector connector;
  RequestSpec spec;
  std::uint8_t request[1024];
  std::uint8_t head[1024];
  std::uint8_t io[64];
  std::uint8_t error_body[512];
  StringSink body;  // body.restartable: whether the sink can start over.
  std::optional<Millis> max_time;
  std::optional<BodyResume> resume;  // start(spec, *resume) instead of start(spec).
  std::uint8_t max_redirects = 0;
  std::uint8_t redirect_url[256];
  std::uint64_t body_limit = 1 << 20;
  Credentials credentials;
  UrlRefresh url_refresh;
  NetworkPolicy network;
  std::optional<NetworkInfo> network_info;  // Told to the client before start().
  std::vector<ClientEvent> events;
  std::vector<std::uint64_t> waits;
  std::vector<ClientNext> nexts;  // Every answer of step() that run() followed.
  Millis now{1000};
  std::unique_ptr<Client> client;
};

// "x-goog-hash: crc32c=BASE64" of `body`, computed by the library's own CRC32C.
inline std::string goog_crc32c(const std::string& body) {
  const std::uint32_t crc =
      crc32c(ConstBytes{reinterpret_cast<const std::uint8_t*>(body.data()), body.size()});
  const std::uint8_t be[4] = {static_cast<std::uint8_t>(crc >> 24),
                              static_cast<std::uint8_t>(crc >> 16),
                              static_cast<std::uint8_t>(crc >> 8), static_cast<std::uint8_t>(crc)};
  char b64[16] = {};
  const std::size_t n = base64_encode(ConstBytes{be, 4}, b64, sizeof b64);
  return "x-goog-hash: crc32c=" + std::string(b64, n) + "\r\n";
}

}  // namespace stepback::https::client_test

#endif  // STEPBACK_TESTS_HTTPS_CLIENT_CLIENT_HARNESS_HPP_

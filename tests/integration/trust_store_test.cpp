// The trust store (stepback/https/tls/trust_store.hpp) in real handshakes against openssl
// s_server on loopback, with the server's CA inside a large store: every root of this
// machine's /etc/ssl/certs plus the test CA (or, without a system store, 150 roots generated
// here), laid out by `openssl rehash` and as one bundle.
//
//   - a GET verifies through mbedTLS's CA callback with the hashed directory and with the
//     bundle, parsing one root; a store without the CA fails verification, once (not retried);
//   - public-key pins: the CA's pin passes, a wrong pin fails with its own message, once;
//   - the heap trap over a whole verified request through the store: no heap call;
//   - the figures: the TLS arena's peak over set-up plus one GET, and the client's CPU per full
//     handshake, for one anchor (add_ca_file), the whole store loaded (add_ca_dir), and the
//     store through the callback (directory and bundle). Printed, and recorded as test
//     properties. STEPBACK_TRUST_BENCH_MODE=anchor|loaded|dir|bundle and
//     STEPBACK_TRUST_BENCH_ROUNDS=N run HandshakeCpu for one mode only (for callgrind; see
//     docs/trust_store.md).
#include <execinfo.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "integration_support.hpp"
#include "stepback/core/random.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tcp/tcp_transport.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/https/tls/trust_store.hpp"
#include "mbedtls/x509_crt.h"
#include "stepback/platform/clock.hpp"
#include "tests/support/counting_sink.hpp"
#include "tests/support/heap_trap.hpp"

namespace stepback::integration {
namespace {

namespace fs = std::filesystem;
using https::Status;

constexpr const char* kSystemCerts = "/etc/ssl/certs";

// The store made once per process: a hashed directory and a bundle holding the system roots
// (or generated ones) and the test CA.
struct Store {
  TempDir dir;  // dir.path(): hashed directory (openssl rehash); bundle.pem beside.
  TempDir bundle_dir;
  TempDir without_ca;  // The same roots without the test CA.
  std::string bundle;
  int roots = 0;
  bool system = false;  // The roots are this machine's.
  bool ok = false;
};

// `openssl rehash dir`, its output in `log`.
bool rehash(const std::string& dir, const std::string& log) {
  return run_command({openssl_path(), "rehash", dir}, log, 60000) == 0;
}

const Store* store() {
  // Destroyed at exit, which removes its folders.
  static const std::unique_ptr<Store> s([] {
    auto* st = new Store;
    std::vector<std::string> pems;
    std::error_code ec;
    if (fs::is_directory(kSystemCerts, ec)) {
      for (const auto& e : fs::directory_iterator(kSystemCerts, ec)) {
        const std::string p = e.path().string();
        if (p.size() > 4 && p.compare(p.size() - 4, 4, ".pem") == 0) pems.push_back(p);
      }
    }
    std::sort(pems.begin(), pems.end());
    st->system = pems.size() >= 50;
    if (!st->system) {
      // No system store: 150 roots made by the openssl CLI (one shared key).
      pems.clear();
      const std::string key = st->bundle_dir.file("decoy.key");
      if (run_command({openssl_path(), "genpkey", "-algorithm", "EC", "-pkeyopt",
                       "ec_paramgen_curve:prime256v1", "-out", key},
                      st->bundle_dir.file("genpkey.txt"), 30000) != 0) {
        return st;
      }
      for (int i = 0; i < 150; ++i) {
        const std::string out = st->bundle_dir.file("decoy" + std::to_string(i) + ".pem");
        if (run_command({openssl_path(), "req", "-x509", "-new", "-key", key, "-days", "3", "-subj",
                         "/CN=stepback decoy root " + std::to_string(i), "-out", out},
                        st->bundle_dir.file("req.txt"), 30000) != 0) {
          return st;
        }
        pems.push_back(out);
      }
    }
    int n = 0;
    for (const std::string& p : pems) {
      const std::string text = read_file(p);
      if (text.find("-----BEGIN CERTIFICATE-----") == std::string::npos) continue;
      const std::string name = "root" + std::to_string(n++) + ".pem";
      write_file(st->dir.file(name), text);
      write_file(st->without_ca.file(name), text);
      st->bundle += text;
    }
    write_file(st->dir.file("stepback-test-ca.pem"), read_file(pki()->ca));
    st->bundle += read_file(pki()->ca);
    write_file(st->bundle_dir.file("bundle.pem"), st->bundle);
    st->roots = n + 1;
    st->ok = rehash(st->dir.path(), st->bundle_dir.file("rehash.txt")) &&
             rehash(st->without_ca.path(), st->bundle_dir.file("rehash-without-ca.txt"));
    return st;
  }());
  return s.get();
}

std::string bundle_path() { return store()->bundle_dir.file("bundle.pem"); }

// How a configuration finds its anchors.
enum class Mode { kAnchor, kLoaded, kDirectory, kBundle };
const char* name(Mode m) {
  switch (m) {
    case Mode::kAnchor:
      return "anchor";
    case Mode::kLoaded:
      return "loaded";
    case Mode::kDirectory:
      return "dir";
    case Mode::kBundle:
      return "bundle";
  }
  return "";
}

// A configuration with its store (which must outlive it).
struct Trust {
  https::TrustStore trust_store;
  https::TlsClientConfig config;
};

// Sets up `t` for `mode`; false (with a test failure) when that fails.
bool set_up(Trust* t, Mode mode, const std::string& dir) {
  ensure_tls_arena();
  if (t->config.init() != Status::kOk) {
    ADD_FAILURE() << "init";
    return false;
  }
  Status s = Status::kError;
  switch (mode) {
    case Mode::kAnchor:
      s = t->config.add_ca_file(pki()->ca.c_str());
      break;
    case Mode::kLoaded:
      s = t->config.add_ca_dir(dir.c_str());
      break;
    case Mode::kDirectory:
      s = t->trust_store.add_directory(dir.c_str());
      if (s == Status::kOk) s = t->config.use_trust_store(t->trust_store);
      break;
    case Mode::kBundle:
      s = t->trust_store.add_bundle(bundle_path().c_str());
      if (s == Status::kOk) s = t->config.use_trust_store(t->trust_store);
      break;
  }
  if (s != Status::kOk) ADD_FAILURE() << "setting up " << name(mode) << ": " << https::to_string(s);
  return s == Status::kOk;
}

class TrustStoreGetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
    ASSERT_TRUE(store()->ok) << "could not build the test store";
    ASSERT_TRUE(server_.start(""));
  }

  RunResult get(https::TlsClientConfig* config, std::uint32_t max_retries = 4) {
    ClientSetup setup;
    setup.url = server_.url("/");
    setup.tls = config;
    setup.policy.max_retries = max_retries;
    return run_client(setup);
  }

  OpensslServer server_;
};

TEST_F(TrustStoreGetTest, GetVerifiesThroughTheHashedDirectory) {
  auto t = std::make_unique<Trust>();
  ASSERT_TRUE(set_up(t.get(), Mode::kDirectory, store()->dir.path()));
  const RunResult run = get(&t->config);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.output();
  EXPECT_EQ(run.result.status, 200);
  EXPECT_EQ(t->trust_store.stats().lookups, 1U);  // Leaf -> test CA: one lookup.
  EXPECT_EQ(t->trust_store.stats().certificates_parsed, 1U);
  std::printf("%d roots (%s), one GET: %u lookup(s), %u file(s) opened, %u parsed\n",
              store()->roots, store()->system ? "this machine's + the test CA" : "generated",
              t->trust_store.stats().lookups, t->trust_store.stats().files_opened,
              t->trust_store.stats().certificates_parsed);
}

TEST_F(TrustStoreGetTest, GetVerifiesThroughTheBundle) {
  auto t = std::make_unique<Trust>();
  ASSERT_TRUE(set_up(t.get(), Mode::kBundle, ""));
  const RunResult run = get(&t->config);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server_.output();
  EXPECT_EQ(t->trust_store.stats().full_scans, 0U);  // Its index led to the CA.
  EXPECT_EQ(t->trust_store.stats().certificates_scanned, 1U);
  EXPECT_EQ(t->trust_store.stats().certificates_parsed, 1U);
}

TEST_F(TrustStoreGetTest, StoreWithoutTheCaFailsVerificationOnce) {
  auto t = std::make_unique<Trust>();
  ASSERT_TRUE(set_up(t.get(), Mode::kDirectory, store()->without_ca.path()));
  const RunResult run = get(&t->config);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.error, Status::kTlsVerify) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U);
  EXPECT_NE(run.message.find("not"), std::string::npos) << run.message;
  EXPECT_EQ(t->trust_store.stats().certificates_parsed, 0U);
}

// A self-signed certificate for 127.0.0.1 (key and PEM in `dir`), and the same certificate with
// its signature broken (the last byte of the DER, inside the signature's s: still DER).
struct SelfSigned {
  std::string key, good, broken;
};
bool make_self_signed(const TempDir& dir, SelfSigned* out) {
  out->key = dir.file("leaf.key");
  out->good = dir.file("leaf.pem");
  out->broken = dir.file("broken.pem");
  const std::string der = dir.file("leaf.der");
  const std::string log = dir.file("openssl.txt");
  if (run_command({openssl_path(), "req", "-x509", "-newkey", "ec", "-pkeyopt",
                   "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", out->key, "-out", out->good,
                   "-days", "3", "-subj", "/CN=localhost", "-addext",
                   "subjectAltName=IP:127.0.0.1,DNS:localhost"},
                  log, 30000) != 0 ||
      run_command({openssl_path(), "x509", "-in", out->good, "-outform", "DER", "-out", der}, log,
                  30000) != 0) {
    return false;
  }
  std::string bytes = read_file(der);
  if (bytes.empty()) return false;
  bytes.back() = static_cast<char>(bytes.back() ^ 0x01);
  write_file(der, bytes);
  return run_command({openssl_path(), "x509", "-inform", "DER", "-in", der, "-out", out->broken},
                     log, 30000) == 0;
}

// A GET from `server` trusting `config`.
RunResult get_from(const OpensslServer& server, https::TlsClientConfig* config) {
  ClientSetup setup;
  setup.url = server.url("/");
  setup.tls = config;
  setup.policy.max_retries = 0;
  return run_client(setup);
}

// A self-signed leaf that is itself one of the anchors, byte for byte, is trusted as the anchor
// it is, its own signature unchecked: mbedTLS's rule for a locally trusted leaf when it holds the
// anchors (add_ca_file) and OpenSSL's. Through the store's CA callback mbedTLS checked that
// signature (one ECDSA verification, 12 M instructions, 29% of a `stepback get` in
// bench/https_bench.sh); the broken signature here shows which rule ran (before: kTlsVerify).
TEST_F(TrustStoreGetTest, ASelfSignedLeafThatIsAnAnchorIsTrustedWithoutItsSignatureChecked) {
  TempDir dir;
  SelfSigned cert;
  ASSERT_TRUE(make_self_signed(dir, &cert)) << read_file(dir.file("openssl.txt"));
  OpensslServer server;
  ASSERT_TRUE(server.start("", {"-cert", cert.broken, "-key", cert.key}));

  auto anchor = std::make_unique<Trust>();  // mbedTLS's own list: its rule, for comparison.
  ensure_tls_arena();
  ASSERT_EQ(anchor->config.init(), Status::kOk);
  ASSERT_EQ(anchor->config.add_ca_file(cert.broken.c_str()), Status::kOk);
  RunResult run = get_from(server, &anchor->config);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server.output();

  auto t = std::make_unique<Trust>();
  ASSERT_EQ(t->config.init(), Status::kOk);
  ASSERT_EQ(t->trust_store.add_bundle(cert.broken.c_str()), Status::kOk);
  ASSERT_EQ(t->config.use_trust_store(t->trust_store), Status::kOk);
  run = get_from(server, &t->config);
  EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << run.summary() << server.output();
  EXPECT_EQ(run.result.status, 200);
  EXPECT_EQ(t->trust_store.stats().lookups, 1U);
}

// The rule is for the anchor's own bytes: an anchor with the same name and key but other bytes
// (here the valid original) is a parent like any other, and the broken signature fails.
TEST_F(TrustStoreGetTest, AnAnchorWithTheLeafsNameAndKeyButOtherBytesStillChecksItsSignature) {
  TempDir dir;
  SelfSigned cert;
  ASSERT_TRUE(make_self_signed(dir, &cert)) << read_file(dir.file("openssl.txt"));
  OpensslServer server;
  ASSERT_TRUE(server.start("", {"-cert", cert.broken, "-key", cert.key}));
  auto t = std::make_unique<Trust>();
  ensure_tls_arena();
  ASSERT_EQ(t->config.init(), Status::kOk);
  ASSERT_EQ(t->trust_store.add_bundle(cert.good.c_str()), Status::kOk);
  ASSERT_EQ(t->config.use_trust_store(t->trust_store), Status::kOk);
  const RunResult run = get_from(server, &t->config);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.error, Status::kTlsVerify) << run.summary();
}

// The pin of the public key of `pem_file`'s first certificate.
https::PublicKeyPin pin_of(const std::string& pem_file) {
  mbedtls_x509_crt crt;
  mbedtls_x509_crt_init(&crt);
  https::PublicKeyPin pin;
  if (mbedtls_x509_crt_parse_file(&crt, pem_file.c_str()) == 0) pin = https::public_key_pin_of(crt);
  mbedtls_x509_crt_free(&crt);
  return pin;
}

TEST_F(TrustStoreGetTest, PinOfTheCaOrTheLeafPasses) {
  // OkHttp's rule: any certificate of the verified chain, here the trust anchor or the leaf.
  for (const std::string* cert : {&pki()->ca, &pki()->server_cert}) {
    auto t = std::make_unique<Trust>();
    ASSERT_TRUE(set_up(t.get(), Mode::kDirectory, store()->dir.path()));
    https::PublicKeyPin pins[2];
    pins[0].sha256[0] = 0x42;  // Some other key first.
    pins[1] = pin_of(*cert);
    t->config.set_public_key_pins(pins, 2);
    const RunResult run = get(&t->config);
    EXPECT_EQ(run.result.outcome, Outcome::kSuccess) << *cert << " " << run.summary();
  }
}

TEST_F(TrustStoreGetTest, PinMismatchFailsOnceWithItsOwnMessage) {
  auto t = std::make_unique<Trust>();
  ASSERT_TRUE(set_up(t.get(), Mode::kDirectory, store()->dir.path()));
  const https::PublicKeyPin pins[1] = {pin_of(pki()->other_ca)};
  t->config.set_public_key_pins(pins, 1);
  const RunResult run = get(&t->config);
  EXPECT_EQ(run.result.outcome, Outcome::kTerminalFailure) << run.summary();
  EXPECT_EQ(run.result.error, Status::kTlsVerify) << run.summary();
  EXPECT_EQ(run.result.attempts, 1U) << "a pin mismatch must never be retried";
  EXPECT_NE(run.message.find("public-key pin mismatch"), std::string::npos) << run.message;
}

TEST_F(TrustStoreGetTest, UntrustedChainReportsTheChainNotThePin) {
  auto t = std::make_unique<Trust>();
  ASSERT_TRUE(set_up(t.get(), Mode::kDirectory, store()->without_ca.path()));
  const https::PublicKeyPin pins[1] = {pin_of(pki()->other_ca)};
  t->config.set_public_key_pins(pins, 1);
  const RunResult run = get(&t->config);
  EXPECT_EQ(run.result.error, Status::kTlsVerify) << run.summary();
  EXPECT_EQ(run.message.find("pin"), std::string::npos) << run.message;
}

// ---------------------------------------------------------------------------------------
// No heap during a request verified through the store.

TEST_F(TrustStoreGetTest, VerifiedRequestThroughTheStoreMakesNoHeapCalls) {
  if (!testing::heap_trap_available()) GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  for (const Mode mode : {Mode::kDirectory, Mode::kBundle}) {
    SCOPED_TRACE(name(mode));
    auto t = std::make_unique<Trust>();
    ASSERT_TRUE(set_up(t.get(), mode, store()->dir.path()));
    https::Url url;
    const std::string url_text = server_.url("/");
    ASSERT_EQ(https::parse_url(url_text, &url), Status::kOk);
    https::RequestSpec spec;
    spec.head.url = url;
    spec.head.user_agent = "stepback-trust-test";
    static std::uint8_t request[2048], head[8192], io[16384], error_body[1024];
    Xoshiro128 random(7);
    const Policy policy = test_policy();
    const RetryContext context{policy, random, nullptr};
    testing::CountingSink body;
    https::FixedResolver no_names;  // The server is on 127.0.0.1.
    https::TcpTlsConnector connector(t->config, no_names);
    https::ClientOptions options;
    options.timeouts = test_timeouts();
    options.buffers = https::ClientBuffers{{request, sizeof request},
                                           {head, sizeof head},
                                           {io, sizeof io},
                                           {error_body, sizeof error_body}};
    options.body = body.sink();
    options.body_limit = 1 << 20;
    options.wall_now = &platform::wall_now;
    https::Client client(connector, context, options);
    ASSERT_EQ(client.start(spec), Status::kOk);
    void* warm[4];
    (void)backtrace(warm, 4);
    (void)platform::monotonic_now();
    (void)platform::wall_now();
    long calls = -1;
    {
      testing::HeapTrap trap;
      const Millis wall_limit = platform::monotonic_now() + Millis(kRunWallLimitMs);
      https::ClientNext next = client.step(platform::monotonic_now());
      while (next.kind != https::ClientNext::Kind::kDone) {
        const Millis now = platform::monotonic_now();
        if (now >= wall_limit) {
          client.cancel();
          break;
        }
        (void)https::poll_wait(next, now, wall_limit - now);
        next = client.step(platform::monotonic_now());
      }
      calls = trap.calls();
    }
    EXPECT_EQ(client.result().outcome, Outcome::kSuccess) << client.result().message;
    EXPECT_GT(body.size, 0U);
    EXPECT_EQ(t->trust_store.stats().certificates_parsed, 1U);
    EXPECT_EQ(calls, 0) << testing::HeapTrap::describe();
  }
}

// ---------------------------------------------------------------------------------------
// Figures.

TEST_F(TrustStoreGetTest, ArenaPeakOfOneGet) {
#if defined(STEPBACK_EMULATED)
  // Figures measured under qemu-user mean nothing; they are taken on the host.
  return;
#endif

  std::size_t peak[4] = {};
  const Mode modes[] = {Mode::kAnchor, Mode::kLoaded, Mode::kDirectory, Mode::kBundle};
  for (const Mode mode : modes) {
    ensure_tls_arena();
    const https::TlsArenaUsage before = https::tls_arena_usage();
    https::tls_arena_reset_peak();
    {
      auto t = std::make_unique<Trust>();
      ASSERT_TRUE(set_up(t.get(), mode, store()->dir.path()));
      const RunResult run = get(&t->config);
      ASSERT_EQ(run.result.outcome, Outcome::kSuccess) << name(mode) << " " << run.summary();
    }
    const https::TlsArenaUsage after = https::tls_arena_usage();
    peak[static_cast<int>(mode)] = after.peak_footprint_bytes() - before.current_bytes -
                                   before.current_blocks * https::kTlsArenaBlockOverheadBytes;
    RecordProperty(std::string("arena_peak_footprint_") + name(mode),
                   std::to_string(peak[static_cast<int>(mode)]));
  }
  std::printf(
      "TLS arena peak of set-up + one GET (footprint with block headers, above the arena's "
      "use before set-up), %d roots:\n"
      "  one anchor (add_ca_file):          %7zu B\n"
      "  whole store loaded (add_ca_dir):   %7zu B\n"
      "  store via callback, hashed dir:    %7zu B\n"
      "  store via callback, bundle:        %7zu B\n",
      store()->roots, peak[0], peak[1], peak[2], peak[3]);
  EXPECT_LE(peak[2], peak[0] + 8 * 1024);
  EXPECT_LE(peak[3], peak[0] + 8 * 1024);
}

// CPU (this process only, CLOCK_PROCESS_CPUTIME_ID) of one full handshake: TlsTransport::start
// and handshake() to the end, over a connected TcpTransport. -1 on failure.
double handshake_cpu_ms(https::TlsClientConfig& config, std::uint16_t port, std::string* error) {
  const Millis deadline = platform::monotonic_now() + Millis(5000);
  https::TcpTransport tcp;
  https::SocketAddress address;
  Status s = https::parse_numeric_address("127.0.0.1", port, &address);
  if (s == Status::kOk) s = tcp.start(&address, 1, platform::monotonic_now(), Millis(2000));
  while (s == Status::kWouldBlock || s == Status::kOk) {
    s = tcp.step_connect(platform::monotonic_now());
    if (s != Status::kWouldBlock) break;
    pollfd p{tcp.fd(), POLLOUT, 0};
    (void)::poll(&p, 1, 100);
    if (platform::monotonic_now() >= deadline) return -1;
  }
  if (s != Status::kOk) return -1;
  timespec a{};
  timespec b{};
  double cpu_ns = 0;
  https::TlsTransport tls;
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  s = tls.start(tcp, config, "127.0.0.1", nullptr);
  while (s == Status::kOk || s == Status::kWouldBlock) {
    s = tls.handshake();
    if (s != Status::kWouldBlock) break;
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    cpu_ns +=
        static_cast<double>(b.tv_sec - a.tv_sec) * 1e9 + static_cast<double>(b.tv_nsec - a.tv_nsec);
    pollfd p{tls.fd(),
             static_cast<short>(tls.wants() == https::IoInterest::kWrite ? POLLOUT : POLLIN), 0};
    (void)::poll(&p, 1, 1000);
    if (platform::monotonic_now() >= deadline) return -1;
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  }
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  cpu_ns +=
      static_cast<double>(b.tv_sec - a.tv_sec) * 1e9 + static_cast<double>(b.tv_nsec - a.tv_nsec);
  if (s != Status::kOk) *error = std::string(https::to_string(s)) + ": " + tls.failure_message();
  tls.close();
  return s == Status::kOk ? cpu_ns / 1e6 : -1;
}

TEST_F(TrustStoreGetTest, HandshakeCpu) {
#if defined(STEPBACK_EMULATED)
  // Figures measured under qemu-user mean nothing; they are taken on the host.
  return;
#endif

  std::vector<Mode> modes = {Mode::kAnchor, Mode::kLoaded, Mode::kDirectory, Mode::kBundle};
  if (const char* only = std::getenv("STEPBACK_TRUST_BENCH_MODE")) {
    modes.erase(std::remove_if(modes.begin(), modes.end(),
                               [only](Mode m) { return std::strcmp(name(m), only) != 0; }),
                modes.end());
    ASSERT_FALSE(modes.empty()) << "STEPBACK_TRUST_BENCH_MODE: anchor, loaded, dir or bundle";
  }
  int rounds = 15;
  if (const char* r = std::getenv("STEPBACK_TRUST_BENCH_ROUNDS")) rounds = std::atoi(r);
  std::vector<std::unique_ptr<Trust>> trusts;
  for (const Mode m : modes) {
    trusts.push_back(std::make_unique<Trust>());
    ASSERT_TRUE(set_up(trusts.back().get(), m, store()->dir.path()));
  }
  std::vector<std::vector<double>> samples(modes.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < modes.size(); ++i) {  // Interleaved: same machine noise.
      std::string error;
      const double ms = handshake_cpu_ms(trusts[i]->config, server_.port(), &error);
      ASSERT_GE(ms, 0) << name(modes[i]) << " handshake failed: " << error << "\n"
                       << server_.output();
      samples[i].push_back(ms);
    }
  }
  std::printf("client CPU per full TLS 1.3 handshake, median of %d (min), %d roots:\n", rounds,
              store()->roots);
  double anchor = 0;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    std::vector<double>& v = samples[i];
    std::sort(v.begin(), v.end());
    const double median = v[v.size() / 2];
    if (modes[i] == Mode::kAnchor) anchor = median;
    std::printf("  %-7s %7.3f ms (%7.3f)%s\n", name(modes[i]), median, v.front(),
                anchor > 0 && modes[i] != Mode::kAnchor
                    ? (" = " + std::to_string(median / anchor).substr(0, 5) + "x anchor").c_str()
                    : "");
    RecordProperty(std::string("handshake_cpu_us_") + name(modes[i]),
                   std::to_string(static_cast<long>(median * 1000)));
  }
}

}  // namespace
}  // namespace stepback::integration

// End-to-end check of the mbedTLS build and its configuration: on the static TLS arena,
// generate an ECDSA P-256 key and a self-signed certificate, then run an mbedTLS client and
// server against each other over an in-memory pipe for TLS 1.3 and TLS 1.2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ecp.h"
#include "mbedtls/entropy.h"
#include "mbedtls/error.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/ssl_ticket.h"
#include "mbedtls/x509_crt.h"
#include "psa/crypto.h"
#include "stepback/https/tls/tls_arena.hpp"

namespace stepback::https {
namespace {

constexpr std::size_t kArenaBytes = std::size_t{128} * 1024;
alignas(16) std::uint8_t g_arena[kArenaBytes];

constexpr const char* kHost = "localhost";

// Error text for test failure messages.
std::string err(int ret) {
  char buf[160];
  mbedtls_strerror(ret, buf, sizeof buf);
  char out[200];
  std::snprintf(out, sizeof out, "-0x%04x %s", static_cast<unsigned>(-ret), buf);
  return out;
}

// One direction of the in-memory connection: a bounded byte queue, smaller than a TLS record,
// so that both sides see partial writes and "would block".
struct Pipe {
  static constexpr std::size_t kCapacity = 1500;
  std::uint8_t bytes[kCapacity] = {};
  std::size_t size = 0;
  std::size_t total = 0;  // Bytes ever sent into the pipe.
};

// The two pipes one endpoint uses.
struct Bio {
  Pipe* in;
  Pipe* out;
};

int bio_send(void* ctx, const unsigned char* buf, std::size_t len) {
  Pipe& out = *static_cast<Bio*>(ctx)->out;
  const std::size_t n = std::min(len, Pipe::kCapacity - out.size);
  if (n == 0) return MBEDTLS_ERR_SSL_WANT_WRITE;
  std::memcpy(out.bytes + out.size, buf, n);
  out.size += n;
  out.total += n;
  return static_cast<int>(n);
}

int bio_recv(void* ctx, unsigned char* buf, std::size_t len) {
  Pipe& in = *static_cast<Bio*>(ctx)->in;
  const std::size_t n = std::min(len, in.size);
  if (n == 0) return MBEDTLS_ERR_SSL_WANT_READ;
  std::memcpy(buf, in.bytes, n);
  std::memmove(in.bytes, in.bytes + n, in.size - n);
  in.size -= n;
  return static_cast<int>(n);
}

// Tickets the servers accepted, to tell a resumed handshake from a full one.
int g_tickets_parsed = 0;

int counting_ticket_parse(void* tickets, mbedtls_ssl_session* session, unsigned char* buf,
                          std::size_t len) {
  const int ret = mbedtls_ssl_ticket_parse(tickets, session, buf, len);
  if (ret == 0) ++g_tickets_parsed;
  return ret;
}

bool would_block(int ret) {
  return ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE;
}

// Arena use attributed to the client and to the server. Only one side runs at a time, so
// what the arena gains during a side's step is that side's; the arena's peak counters, reset
// before each step, give the peak inside the step. (Approximate: PSA's shared key store can
// be grown by one side and shrunk by the other.)
struct Meter {
  struct Side {
    std::int64_t bytes = 0, blocks = 0;            // Now, relative to the start.
    std::int64_t peak_bytes = 0, peak_blocks = 0;  // Highest seen.
    // Peak bytes plus the block headers of the peak block count.
    std::int64_t footprint() const {
      return peak_bytes + peak_blocks * static_cast<std::int64_t>(kTlsArenaBlockOverheadBytes);
    }
  };
  Side client, server;
  std::size_t whole_arena_peak = 0;  // The arena's own peak footprint, set-up included.

  template <typename F>
  int run(bool is_client, F&& step) {
    const TlsArenaUsage before = tls_arena_usage();
    tls_arena_reset_peak();
    const int ret = step();
    const TlsArenaUsage after = tls_arena_usage();
    Side& side = is_client ? client : server;
    const auto diff = [](std::size_t a, std::size_t b) {
      return static_cast<std::int64_t>(a) - static_cast<std::int64_t>(b);
    };
    side.peak_bytes =
        std::max(side.peak_bytes, side.bytes + diff(after.peak_bytes, before.current_bytes));
    side.peak_blocks =
        std::max(side.peak_blocks, side.blocks + diff(after.peak_blocks, before.current_blocks));
    side.bytes += diff(after.current_bytes, before.current_bytes);
    side.blocks += diff(after.current_blocks, before.current_blocks);
    whole_arena_peak = std::max(whole_arena_peak, after.peak_footprint_bytes());
    return ret;
  }
};

// Process-wide state: the arena, PSA, the random generator and the server's credentials.
class TlsSmokeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
#if defined(MBEDTLS_PLATFORM_MEMORY)
    ASSERT_EQ(tls_arena_init(g_arena, sizeof g_arena), Status::kOk);
#else
    // An installed mbedTLS package built with its own configuration: the TLS checks still
    // run, on the system heap, and the arena figures read zero.
    ASSERT_EQ(tls_arena_init(g_arena, sizeof g_arena), Status::kError);
    std::printf("mbedTLS has no MBEDTLS_PLATFORM_MEMORY: running on the system heap\n");
#endif
    ASSERT_EQ(psa_crypto_init(), PSA_SUCCESS);
    mbedtls_entropy_init(&entropy_);
    mbedtls_ctr_drbg_init(&drbg_);
    const char kPers[] = "stepback tls_smoke_test";
    ASSERT_EQ(mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_,
                                    reinterpret_cast<const unsigned char*>(kPers), sizeof kPers),
              0);
    mbedtls_pk_init(&key_);
    mbedtls_x509_crt_init(&cert_);
    make_credentials();
    const TlsArenaUsage u = tls_arena_usage();
    std::printf("arena after set-up (PSA, DRBG, key, certificate): %zu bytes in %zu blocks\n",
                u.current_bytes, u.current_blocks);
  }

  static void TearDownTestSuite() {
    mbedtls_x509_crt_free(&cert_);
    mbedtls_pk_free(&key_);
    mbedtls_ctr_drbg_free(&drbg_);
    mbedtls_entropy_free(&entropy_);
    mbedtls_psa_crypto_free();
    const TlsArenaUsage u = tls_arena_usage();
    EXPECT_EQ(u.current_bytes, 0u) << "arena leak";
    tls_arena_release();
  }

  // An ECDSA P-256 key and a self-signed certificate for CN=localhost, each written as PEM
  // and parsed back, the way the demo makes its server's credentials.
  static void make_credentials() {
    mbedtls_pk_context generated;
    mbedtls_pk_init(&generated);
    ASSERT_EQ(mbedtls_pk_setup(&generated, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)), 0);
    ASSERT_EQ(mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(generated),
                                  mbedtls_ctr_drbg_random, &drbg_),
              0);
    static unsigned char pem[4096];
    ASSERT_EQ(mbedtls_pk_write_key_pem(&generated, pem, sizeof pem), 0);
    mbedtls_pk_free(&generated);
    ASSERT_EQ(mbedtls_pk_parse_key(&key_, pem, std::strlen(reinterpret_cast<char*>(pem)) + 1,
                                   nullptr, 0, mbedtls_ctr_drbg_random, &drbg_),
              0);

    mbedtls_x509write_cert crt;
    mbedtls_x509write_crt_init(&crt);
    mbedtls_x509write_crt_set_version(&crt, MBEDTLS_X509_CRT_VERSION_3);
    mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
    mbedtls_x509write_crt_set_subject_key(&crt, &key_);
    mbedtls_x509write_crt_set_issuer_key(&crt, &key_);
    const unsigned char serial[] = {0x01, 0x23, 0x45};
    ASSERT_EQ(mbedtls_x509write_crt_set_serial_raw(&crt, const_cast<unsigned char*>(serial),
                                                   sizeof serial),
              0);
    ASSERT_EQ(mbedtls_x509write_crt_set_subject_name(&crt, "CN=localhost,O=stepback"), 0);
    ASSERT_EQ(mbedtls_x509write_crt_set_issuer_name(&crt, "CN=localhost,O=stepback"), 0);
    ASSERT_EQ(mbedtls_x509write_crt_set_validity(&crt, "20240101000000", "20991231235959"), 0);
    ASSERT_EQ(mbedtls_x509write_crt_set_basic_constraints(&crt, 1, 0), 0);
    mbedtls_x509_san_list san{};
    san.node.type = MBEDTLS_X509_SAN_DNS_NAME;
    san.node.san.unstructured_name.p = reinterpret_cast<unsigned char*>(const_cast<char*>(kHost));
    san.node.san.unstructured_name.len = std::strlen(kHost);
    ASSERT_EQ(mbedtls_x509write_crt_set_subject_alternative_name(&crt, &san), 0);
    const int written =
        mbedtls_x509write_crt_pem(&crt, pem, sizeof pem, mbedtls_ctr_drbg_random, &drbg_);
    mbedtls_x509write_crt_free(&crt);
    ASSERT_EQ(written, 0) << err(written);
    ASSERT_EQ(mbedtls_x509_crt_parse(&cert_, pem, std::strlen(reinterpret_cast<char*>(pem)) + 1),
              0);
  }

  static mbedtls_entropy_context entropy_;
  static mbedtls_ctr_drbg_context drbg_;
  static mbedtls_pk_context key_;
  static mbedtls_x509_crt cert_;
};

mbedtls_entropy_context TlsSmokeTest::entropy_;
mbedtls_ctr_drbg_context TlsSmokeTest::drbg_;
mbedtls_pk_context TlsSmokeTest::key_;
mbedtls_x509_crt TlsSmokeTest::cert_;

// A client and a server configuration pinned to one TLS version, and connections made from
// them. The client trusts the self-signed certificate and requires verification.
class Endpoints {
 public:
  Endpoints(mbedtls_ssl_protocol_version version, mbedtls_ctr_drbg_context* drbg,
            mbedtls_x509_crt* cert, mbedtls_pk_context* key)
      : version_(version) {
    mbedtls_ssl_config_init(&client_conf_);
    mbedtls_ssl_config_init(&server_conf_);
    mbedtls_ssl_ticket_init(&tickets_);
    setup_ = mbedtls_ssl_config_defaults(&client_conf_, MBEDTLS_SSL_IS_CLIENT,
                                         MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    if (setup_ != 0) return;
    setup_ = mbedtls_ssl_config_defaults(&server_conf_, MBEDTLS_SSL_IS_SERVER,
                                         MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    if (setup_ != 0) return;
    for (mbedtls_ssl_config* conf : {&client_conf_, &server_conf_}) {
      mbedtls_ssl_conf_rng(conf, mbedtls_ctr_drbg_random, drbg);
      mbedtls_ssl_conf_min_tls_version(conf, version);
      mbedtls_ssl_conf_max_tls_version(conf, version);
    }
    mbedtls_ssl_conf_authmode(&client_conf_, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&client_conf_, cert, nullptr);
    mbedtls_ssl_conf_session_tickets(&client_conf_, MBEDTLS_SSL_SESSION_TICKETS_ENABLED);
    mbedtls_ssl_conf_tls13_enable_signal_new_session_tickets(
        &client_conf_, MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_ENABLED);
    // Ask for records no larger than our outgoing buffer (TLS 1.2 servers may honour it).
    setup_ = mbedtls_ssl_conf_max_frag_len(&client_conf_, MBEDTLS_SSL_MAX_FRAG_LEN_4096);
    if (setup_ != 0) return;
    setup_ = mbedtls_ssl_conf_own_cert(&server_conf_, cert, key);
    if (setup_ != 0) return;
    setup_ = mbedtls_ssl_ticket_setup(&tickets_, mbedtls_ctr_drbg_random, drbg,
                                      MBEDTLS_CIPHER_AES_256_GCM, 86400);
    if (setup_ != 0) return;
    mbedtls_ssl_conf_session_tickets_cb(&server_conf_, mbedtls_ssl_ticket_write,
                                        counting_ticket_parse, &tickets_);
  }
  ~Endpoints() {
    mbedtls_ssl_ticket_free(&tickets_);
    mbedtls_ssl_config_free(&server_conf_);
    mbedtls_ssl_config_free(&client_conf_);
  }
  Endpoints(const Endpoints&) = delete;
  Endpoints& operator=(const Endpoints&) = delete;

  int setup_result() const { return setup_; }
  mbedtls_ssl_protocol_version version() const { return version_; }
  // Limits the cipher suites the client offers and the ECDHE groups each side accepts; the
  // lists end in 0 and must outlive the connections.
  void restrict(const int* client_ciphersuites, const std::uint16_t* client_groups,
                const std::uint16_t* server_groups) {
    mbedtls_ssl_conf_ciphersuites(&client_conf_, client_ciphersuites);
    mbedtls_ssl_conf_groups(&client_conf_, client_groups);
    mbedtls_ssl_conf_groups(&server_conf_, server_groups);
  }
  const mbedtls_ssl_config* client_conf() const { return &client_conf_; }
  const mbedtls_ssl_config* server_conf() const { return &server_conf_; }

 private:
  mbedtls_ssl_protocol_version version_;
  int setup_ = -1;
  mbedtls_ssl_config client_conf_{};
  mbedtls_ssl_config server_conf_{};
  mbedtls_ssl_ticket_context tickets_{};
};

// One client-server connection over a fresh pair of pipes.
class Connection {
 public:
  Connection(const Endpoints& ends, const char* host, Meter* meter) : meter_(*meter) {
    mbedtls_ssl_init(&client_);
    mbedtls_ssl_init(&server_);
    setup_ = meter_.run(true, [&] { return mbedtls_ssl_setup(&client_, ends.client_conf()); });
    if (setup_ != 0) return;
    setup_ = meter_.run(false, [&] { return mbedtls_ssl_setup(&server_, ends.server_conf()); });
    if (setup_ != 0) return;
    setup_ = mbedtls_ssl_set_hostname(&client_, host);
    mbedtls_ssl_set_bio(&client_, &client_bio_, bio_send, bio_recv, nullptr);
    mbedtls_ssl_set_bio(&server_, &server_bio_, bio_send, bio_recv, nullptr);
  }
  ~Connection() {
    meter_.run(true, [&] {
      mbedtls_ssl_free(&client_);
      return 0;
    });
    meter_.run(false, [&] {
      mbedtls_ssl_free(&server_);
      return 0;
    });
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int setup_result() const { return setup_; }
  mbedtls_ssl_context* client() { return &client_; }
  mbedtls_ssl_context* server() { return &server_; }

  // Steps both handshakes until both finish or one fails; sets the two results.
  void handshake(int* client_ret, int* server_ret) {
    *client_ret = *server_ret = MBEDTLS_ERR_SSL_WANT_READ;
    for (int i = 0; i < 1000; ++i) {
      if (would_block(*client_ret)) {
        *client_ret = meter_.run(true, [&] { return mbedtls_ssl_handshake(&client_); });
      }
      if (would_block(*server_ret)) {
        *server_ret = meter_.run(false, [&] { return mbedtls_ssl_handshake(&server_); });
      }
      if (!would_block(*client_ret) && !would_block(*server_ret)) return;
      // A failed side sends an alert and stops; once the other has read everything it has
      // failed too, or would wait forever.
      const bool failed = (*client_ret != 0 && !would_block(*client_ret)) ||
                          (*server_ret != 0 && !would_block(*server_ret));
      if (failed && client_pipe_.size == 0 && server_pipe_.size == 0) return;
    }
  }

  // Sends `message` from the client and has the server echo it back; returns what the
  // client read back, or the first error as text.
  std::string echo(const char* message) {
    const std::size_t len = std::strlen(message);
    const auto* bytes = reinterpret_cast<const unsigned char*>(message);
    unsigned char relay[256];  // Read by the server, not yet written back.
    std::size_t relay_size = 0, relay_sent = 0, sent = 0;
    std::string back;
    for (int i = 0; i < 10000 && back.size() < len; ++i) {
      if (sent < len) {
        const int r =
            meter_.run(true, [&] { return mbedtls_ssl_write(&client_, bytes + sent, len - sent); });
        if (r > 0) {
          sent += static_cast<std::size_t>(r);
        } else if (!would_block(r)) {
          return "client write: " + err(r);
        }
      }
      // The server reads only when it has written back all it read before; a retried write
      // keeps the same arguments, as mbedTLS requires.
      const int s = meter_.run(false, [&] {
        return relay_size == 0
                   ? mbedtls_ssl_read(&server_, relay, sizeof relay)
                   : mbedtls_ssl_write(&server_, relay + relay_sent, relay_size - relay_sent);
      });
      if (s > 0 && relay_size == 0) {
        relay_size = static_cast<std::size_t>(s);
        relay_sent = 0;
      } else if (s > 0) {
        relay_sent += static_cast<std::size_t>(s);
        if (relay_sent == relay_size) relay_size = 0;
      } else if (!would_block(s)) {
        return "server: " + err(s);
      }
      unsigned char buf[256];
      const int r = meter_.run(true, [&] { return mbedtls_ssl_read(&client_, buf, sizeof buf); });
      if (r > 0) {
        back.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(r));
      } else if (r == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
        ++tickets_received_;
      } else if (!would_block(r)) {
        return "client read: " + err(r);
      }
    }
    return back;
  }

  int tickets_received() const { return tickets_received_; }
  std::size_t server_to_client_bytes() const { return server_pipe_.total; }

 private:
  Meter& meter_;
  int setup_ = -1;
  int tickets_received_ = 0;
  Pipe client_pipe_;  // Client to server.
  Pipe server_pipe_;  // Server to client.
  Bio client_bio_{&server_pipe_, &client_pipe_};
  Bio server_bio_{&client_pipe_, &server_pipe_};
  mbedtls_ssl_context client_{};
  mbedtls_ssl_context server_{};
};

const char* version_name(mbedtls_ssl_protocol_version v) {
  return v == MBEDTLS_SSL_VERSION_TLS1_3 ? "TLS 1.3" : "TLS 1.2";
}

void print_meter(const char* what, mbedtls_ssl_protocol_version v, const Meter& m) {
  std::printf("peak arena, %s, %s: client %" PRId64 " bytes (%" PRId64
              " with block headers), "
              "server %" PRId64 " (%" PRId64
              "); whole arena (both sides, set-up, headers) "
              "<= %zu of %zu bytes\n",
              version_name(v), what, m.client.peak_bytes, m.client.footprint(), m.server.peak_bytes,
              m.server.footprint(), m.whole_arena_peak, kArenaBytes);
}

class TlsVersionTest : public TlsSmokeTest,
                       public ::testing::WithParamInterface<mbedtls_ssl_protocol_version> {};

TEST_P(TlsVersionTest, HandshakeVerifiesHostAndExchangesBytes) {
  Endpoints ends(GetParam(), &drbg_, &cert_, &key_);
  ASSERT_EQ(ends.setup_result(), 0) << err(ends.setup_result());
  Meter meter;
  const std::size_t idle_bytes = tls_arena_usage().current_bytes;
  {
    Connection conn(ends, kHost, &meter);
    ASSERT_EQ(conn.setup_result(), 0) << err(conn.setup_result());
    int client_ret = 0, server_ret = 0;
    conn.handshake(&client_ret, &server_ret);
    ASSERT_EQ(client_ret, 0) << "client: " << err(client_ret);
    ASSERT_EQ(server_ret, 0) << "server: " << err(server_ret);
    EXPECT_EQ(mbedtls_ssl_get_version_number(conn.client()), GetParam());
    EXPECT_EQ(mbedtls_ssl_get_version_number(conn.server()), GetParam());
    EXPECT_EQ(mbedtls_ssl_get_verify_result(conn.client()), 0u);
    std::printf("%s: %s\n", version_name(GetParam()), mbedtls_ssl_get_ciphersuite(conn.client()));
    EXPECT_EQ(conn.echo("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"),
              "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
    // More than MBEDTLS_SSL_OUT_CONTENT_LEN: mbedTLS splits it into several records.
    std::string big(10000, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
    EXPECT_EQ(conn.echo(big.c_str()), big);
  }
  EXPECT_EQ(tls_arena_usage().current_bytes, idle_bytes) << "a connection leaked arena memory";
  print_meter("full handshake + echo", GetParam(), meter);
}

// Every AEAD and key exchange group the configuration promises, one at a time.
TEST_P(TlsVersionTest, NegotiatesEachCipherAndGroup) {
  static const int kTls13Gcm[] = {MBEDTLS_TLS1_3_AES_128_GCM_SHA256,
                                  MBEDTLS_TLS1_3_AES_256_GCM_SHA384, 0};
  static const int kTls13Chacha[] = {MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256, 0};
  static const int kTls12Gcm[] = {MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
                                  MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, 0};
  static const int kTls12Chacha[] = {MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, 0};
  static const std::uint16_t kX25519[] = {MBEDTLS_SSL_IANA_TLS_GROUP_X25519, 0};
  static const std::uint16_t kP256[] = {MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1, 0};
  // A TLS 1.2 client must also list its server certificate's curve (RFC 8422 5.1.1), so
  // there only the server's list pins the ECDHE group.
  static const std::uint16_t kBoth[] = {MBEDTLS_SSL_IANA_TLS_GROUP_X25519,
                                        MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1, 0};
  const bool tls13 = GetParam() == MBEDTLS_SSL_VERSION_TLS1_3;
  const struct {
    const int* suites;
    const char* cipher;
  } ciphers[] = {{tls13 ? kTls13Gcm : kTls12Gcm, "GCM"},
                 {tls13 ? kTls13Chacha : kTls12Chacha, "CHACHA20-POLY1305"}};
  for (const auto& cipher : ciphers) {
    for (const std::uint16_t* groups : {kX25519, kP256}) {
      SCOPED_TRACE(std::string(cipher.cipher) + (groups == kX25519 ? " X25519" : " P-256"));
      Endpoints ends(GetParam(), &drbg_, &cert_, &key_);
      ASSERT_EQ(ends.setup_result(), 0) << err(ends.setup_result());
      ends.restrict(cipher.suites, tls13 ? groups : kBoth, groups);
      Meter meter;
      Connection conn(ends, kHost, &meter);
      ASSERT_EQ(conn.setup_result(), 0) << err(conn.setup_result());
      int client_ret = 0, server_ret = 0;
      conn.handshake(&client_ret, &server_ret);
      ASSERT_EQ(client_ret, 0) << "client: " << err(client_ret);
      ASSERT_EQ(server_ret, 0) << "server: " << err(server_ret);
      EXPECT_NE(std::strstr(mbedtls_ssl_get_ciphersuite(conn.client()), cipher.cipher), nullptr)
          << mbedtls_ssl_get_ciphersuite(conn.client());
      EXPECT_EQ(conn.echo("abc"), "abc");
    }
  }
}

TEST_P(TlsVersionTest, WrongHostNameFailsVerification) {
  Endpoints ends(GetParam(), &drbg_, &cert_, &key_);
  ASSERT_EQ(ends.setup_result(), 0) << err(ends.setup_result());
  Meter meter;
  Connection conn(ends, "wrong.example", &meter);
  ASSERT_EQ(conn.setup_result(), 0) << err(conn.setup_result());
  int client_ret = 0, server_ret = 0;
  conn.handshake(&client_ret, &server_ret);
  EXPECT_EQ(client_ret, MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) << err(client_ret);
  const std::uint32_t flags = mbedtls_ssl_get_verify_result(conn.client());
  EXPECT_NE(flags & MBEDTLS_X509_BADCERT_CN_MISMATCH, 0u) << "flags 0x" << std::hex << flags;
  EXPECT_EQ(flags & ~static_cast<std::uint32_t>(MBEDTLS_X509_BADCERT_CN_MISMATCH), 0u)
      << "only the host name should fail; flags 0x" << std::hex << flags;
}

TEST_P(TlsVersionTest, ResumesWithSessionTicket) {
  Endpoints ends(GetParam(), &drbg_, &cert_, &key_);
  ASSERT_EQ(ends.setup_result(), 0) << err(ends.setup_result());
  mbedtls_ssl_session session;
  mbedtls_ssl_session_init(&session);
  Meter first;
  std::size_t full_bytes = 0;
  {
    Connection conn(ends, kHost, &first);
    ASSERT_EQ(conn.setup_result(), 0) << err(conn.setup_result());
    int client_ret = 0, server_ret = 0;
    conn.handshake(&client_ret, &server_ret);
    ASSERT_EQ(client_ret, 0) << "client: " << err(client_ret);
    ASSERT_EQ(server_ret, 0) << "server: " << err(server_ret);
    full_bytes = conn.server_to_client_bytes();
    // TLS 1.3 tickets come after the handshake; one echo makes the client read them.
    ASSERT_EQ(conn.echo("ping"), "ping");
    if (GetParam() == MBEDTLS_SSL_VERSION_TLS1_3) {
      EXPECT_GE(conn.tickets_received(), 1);
    }
    const int got = mbedtls_ssl_get_session(conn.client(), &session);
    ASSERT_EQ(got, 0) << err(got);
  }
  Meter resumed;
  const int parsed_before = g_tickets_parsed;
  {
    Connection conn(ends, kHost, &resumed);
    ASSERT_EQ(conn.setup_result(), 0) << err(conn.setup_result());
    const int set = mbedtls_ssl_set_session(conn.client(), &session);
    ASSERT_EQ(set, 0) << err(set);
    int client_ret = 0, server_ret = 0;
    conn.handshake(&client_ret, &server_ret);
    ASSERT_EQ(client_ret, 0) << "client: " << err(client_ret);
    ASSERT_EQ(server_ret, 0) << "server: " << err(server_ret);
    EXPECT_EQ(mbedtls_ssl_get_version_number(conn.client()), GetParam());
    // mbedTLS has no "resumed?" getter: the server accepted the ticket, and sent no
    // certificate (far fewer handshake bytes).
    EXPECT_EQ(g_tickets_parsed, parsed_before + 1) << "the server did not accept the ticket";
    const std::size_t resumed_bytes = conn.server_to_client_bytes();
    EXPECT_LT(resumed_bytes + cert_.raw.len, full_bytes) << "the server sent its certificate again";
    std::printf("%s: server handshake bytes, full %zu, resumed %zu\n", version_name(GetParam()),
                full_bytes, resumed_bytes);
    EXPECT_EQ(conn.echo("pong"), "pong");
  }
  mbedtls_ssl_session_free(&session);
  print_meter("resumed handshake + echo", GetParam(), resumed);
}

INSTANTIATE_TEST_SUITE_P(Versions, TlsVersionTest,
                         ::testing::Values(MBEDTLS_SSL_VERSION_TLS1_3, MBEDTLS_SSL_VERSION_TLS1_2),
                         [](const ::testing::TestParamInfo<mbedtls_ssl_protocol_version>& p) {
                           return std::string(p.param == MBEDTLS_SSL_VERSION_TLS1_3 ? "Tls13"
                                                                                    : "Tls12");
                         });

TEST(TlsArenaTest, RejectsBadBuffersAndReportsNothingWhenAbsent) {
  EXPECT_EQ(tls_arena_init(nullptr, 4096), Status::kInvalidArgument);
  std::uint8_t small[kTlsArenaMinBytes - 1];
  EXPECT_EQ(tls_arena_init(small, sizeof small), Status::kInvalidArgument);
  if (!tls_arena_installed()) {
    EXPECT_EQ(tls_arena_usage().capacity_bytes, 0u);
  }
}

}  // namespace
}  // namespace stepback::https

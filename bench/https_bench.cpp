// Full versus resumed TLS 1.3 handshakes, measured in one process: bench/https_bench.sh runs
// it against its nginx on loopback.
//
//   https_bench HOST PORT CAFILE PATH ROUNDS [SERVER_PID]
//
// Each round opens two connections with TlsTransport over TcpTransport, the TLS arena
// installed: the first with no saved session (a full handshake), which then sends a second
// GET over the same keep-alive connection and saves its session; the second offers that
// session (a resumed handshake). Every phase is timed with CLOCK_PROCESS_CPUTIME_ID (CPU of
// this process, user + system) and CLOCK_MONOTONIC (wall), and printed on stdout as
//
//   sample KIND CPU_NS WALL_NS SERVER_NS   KIND: full_handshake, full_get, keepalive_get,
//                                                resumed_handshake, resumed_get
//   arena KIND PEAK_BYTES PEAK_FOOTPRINT_BYTES     KIND: full, resumed (one line a round)
//
// SERVER_NS is the CPU time the server process SERVER_PID (a single-threaded nginx worker on
// the same machine) ran in the same interval, from the kernel's /proc/PID/schedstat; 0
// without SERVER_PID. On loopback the server's work lies on the client's critical path, so
// wall - CPU - SERVER_NS is the time neither side was running.
//
// A "handshake" is TCP connect plus the TLS handshake; a "get" is that plus one GET request
// and its whole response. The sb_* functions are extern "C" and noinline so that callgrind
// can report their inclusive instruction counts by name. Exits 0, 2 on bad usage, or 1 when
// a connection fails or a resumption offer is not taken up.
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/https/tcp/address.hpp"
#include "stepback/https/tcp/tcp_transport.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_session_record.hpp"
#include "psa/crypto.h"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/https/types.hpp"
#include "stepback/platform/clock.hpp"

namespace {

using stepback::Millis;
using stepback::https::ConstBytes;
using stepback::https::IoInterest;
using stepback::https::MutableBytes;
using stepback::https::Status;
using stepback::https::TcpTransport;
using stepback::https::TlsClientConfig;
using stepback::https::TlsSession;
using stepback::https::TlsTransport;
using stepback::https::Transport;

constexpr int kIoTimeoutMs = 5000;
constexpr std::uint64_t kConnectTimeoutMs = 5000;
constexpr int kMaxRounds = 10000;

// Larger than one connection needs (about 30 KiB) so that a failure is never the arena's.
alignas(16) std::uint8_t g_arena[256 * 1024];
std::uint8_t g_response[16 * 1024];
char g_request[512];
std::size_t g_request_size = 0;

// The target of every connection; set once from argv.
struct Target {
  const char* host = nullptr;
  std::uint16_t port = 0;
};

// One connection: the TLS stream over its TCP socket. Destroying it frees its mbedTLS state.
struct Connection {
  TcpTransport tcp;
  TlsTransport tls;
};

std::int64_t now_ns(clockid_t clock) {
  timespec ts{};
  (void)clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// "/proc/PID/schedstat" of the server, or empty.
char g_server_schedstat[64] = {};

// The server's total CPU time in nanoseconds (the first field of schedstat), or 0.
std::int64_t server_ns() {
  if (g_server_schedstat[0] == '\0') return 0;
  const int fd = ::open(g_server_schedstat, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  (void)::close(fd);
  return n > 0 ? std::strtoll(text, nullptr, 10) : 0;
}

// CPU, wall and server time at one instant, in nanoseconds.
struct Stamp {
  std::int64_t cpu = 0;
  std::int64_t wall = 0;
  std::int64_t server = 0;
};

// The stamp that opens an interval: the server is read before the client's clocks (and
// after them in end_stamp()), so that reading it stays out of the client's figures.
Stamp begin_stamp() {
  Stamp s;
  s.server = server_ns();
  s.cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  s.wall = now_ns(CLOCK_MONOTONIC);
  return s;
}

// The stamp that closes an interval.
Stamp end_stamp() {
  Stamp s;
  s.cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  s.wall = now_ns(CLOCK_MONOTONIC);
  s.server = server_ns();
  return s;
}

// A measured interval; printed after the round, so that printf stays out of the counts.
struct Sample {
  Stamp from = begin_stamp();
  Stamp to;
};

void print_sample(const char* kind, const Sample& s) {
  std::printf("sample %s %lld %lld %lld\n", kind, static_cast<long long>(s.to.cpu - s.from.cpu),
              static_cast<long long>(s.to.wall - s.from.wall),
              static_cast<long long>(s.to.server - s.from.server));
}

void print_arena(const char* kind) {
  const stepback::https::TlsArenaUsage usage = stepback::https::tls_arena_usage();
  std::printf("arena %s %zu %zu\n", kind, usage.peak_bytes, usage.peak_footprint_bytes());
}

// Sleeps in poll() until `t`'s descriptor is ready for what it last asked for; false after
// kIoTimeoutMs or on a poll error.
bool wait_ready(const Transport& t, IoInterest interest) {
  short events = 0;
  if (interest == IoInterest::kRead || interest == IoInterest::kReadWrite) events |= POLLIN;
  if (interest == IoInterest::kWrite || interest == IoInterest::kReadWrite) events |= POLLOUT;
  pollfd fd{t.fd(), events, 0};
  int ready = 0;
  do {
    ready = ::poll(&fd, 1, kIoTimeoutMs);
  } while (ready < 0 && errno == EINTR);
  return ready > 0;
}

bool fail(const char* what, Status status, const char* detail) {
  std::fprintf(stderr, "https_bench: %s: %s%s%s\n", what, stepback::https::to_string(status),
               detail[0] != '\0' ? ": " : "", detail);
  return false;
}

// Connects `c` to `target` and completes the TLS handshake, offering `session` if non-null.
bool open_connection(Connection& c, const Target& target, TlsClientConfig& config,
                     const TlsSession* session) {
  // HOST is an address (the bench measures TLS, not name lookups).
  stepback::https::SocketAddress address;
  Status s = stepback::https::parse_numeric_address(target.host, target.port, &address);
  if (s != Status::kOk) return fail("HOST must be an IP address", s, target.host);
  s = c.tcp.start(&address, 1, stepback::platform::monotonic_now(), Millis(kConnectTimeoutMs));
  if (s != Status::kOk) return fail("connect", s, "");
  while ((s = c.tcp.step_connect(stepback::platform::monotonic_now())) == Status::kWouldBlock) {
    if (!wait_ready(c.tcp, IoInterest::kWrite)) return fail("connect", Status::kTimeout, "");
  }
  if (s != Status::kOk) return fail("connect", s, "");
  s = c.tls.start(c.tcp, config, target.host, session);
  if (s != Status::kOk) return fail("TLS set-up", s, c.tls.failure_message());
  while ((s = c.tls.handshake()) == Status::kWouldBlock) {
    if (!wait_ready(c.tls, c.tls.wants())) return fail("handshake", Status::kTimeout, "");
  }
  if (s != Status::kOk) return fail("handshake", s, c.tls.failure_message());
  return true;
}

// The value of the Content-Length header in `head` (the bytes before the blank line), or -1.
long content_length(std::string_view head) {
  constexpr std::string_view kName = "\r\ncontent-length:";
  for (std::size_t i = 0; i + kName.size() <= head.size(); ++i) {
    bool match = true;
    for (std::size_t j = 0; j < kName.size() && match; ++j) {
      const char c = head[i + j];
      const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      match = lower == kName[j];
    }
    if (match) return std::strtol(head.data() + i + kName.size(), nullptr, 10);
  }
  return -1;
}

// Sends the GET request over `c` and reads the whole 200 response (Content-Length framed,
// as nginx sends static files); false on any failure or another status.
bool exchange(Connection& c) {
  std::size_t done = 0;
  while (done < g_request_size) {
    std::size_t sent = 0;
    const Status s = c.tls.send(
        ConstBytes{reinterpret_cast<const std::uint8_t*>(g_request) + done, g_request_size - done},
        &sent);
    if (s == Status::kWouldBlock) {
      if (!wait_ready(c.tls, c.tls.wants())) return fail("send", Status::kTimeout, "");
      continue;
    }
    if (s != Status::kOk) return fail("send", s, c.tls.failure_message());
    done += sent;
  }
  std::size_t have = 0;
  std::size_t head_end = 0;
  std::size_t total = 0;  // Head plus body, once the head is complete.
  while (head_end == 0 || have < total) {
    std::size_t received = 0;
    // Past the buffer's end the body is only counted: its bytes are read over the start.
    const std::size_t at = have < sizeof g_response ? have : 0;
    const Status s = c.tls.recv(MutableBytes{g_response + at, sizeof g_response - at}, &received);
    if (s == Status::kWouldBlock) {
      if (!wait_ready(c.tls, c.tls.wants())) return fail("receive", Status::kTimeout, "");
      continue;
    }
    if (s != Status::kOk) return fail("receive", s, c.tls.failure_message());
    have += received;
    if (head_end == 0) {
      const std::string_view seen(reinterpret_cast<const char*>(g_response),
                                  have < sizeof g_response ? have : sizeof g_response);
      const std::size_t blank = seen.find("\r\n\r\n");
      if (blank == std::string_view::npos) {
        if (have >= sizeof g_response) return fail("receive", Status::kHeadersTooLarge, "");
        continue;
      }
      if (seen.compare(0, 12, "HTTP/1.1 200") != 0) {
        return fail("response", Status::kProtocol, "status is not 200");
      }
      const long length = content_length(seen.substr(0, blank));
      if (length < 0) return fail("response", Status::kProtocol, "no Content-Length");
      head_end = blank + 4;
      total = head_end + static_cast<std::size_t>(length);
    }
  }
  return have == total ? true : fail("response", Status::kProtocol, "more bytes than announced");
}

}  // namespace

// Connect plus a full handshake (no session offered).
extern "C" __attribute__((noinline, noclone)) bool sb_open_full(Connection& c, const Target& target,
                                                                TlsClientConfig& config) {
  return open_connection(c, target, config, nullptr);
}

// Connect plus a handshake offering `session`; false also when the server declined it.
extern "C" __attribute__((noinline, noclone)) bool sb_open_resumed(Connection& c,
                                                                   const Target& target,
                                                                   TlsClientConfig& config,
                                                                   const TlsSession& session) {
  if (!open_connection(c, target, config, &session)) return false;
  if (!c.tls.resumed()) {
    std::fprintf(stderr, "https_bench: the server did not resume the offered session\n");
    return false;
  }
  return true;
}

// One GET over an established connection.
extern "C" __attribute__((noinline, noclone)) bool sb_exchange(Connection& c) {
  return exchange(c);
}

// A first GET: connect, full handshake (timed into *handshake), request and response
// (*get covers all of it).
extern "C" __attribute__((noinline, noclone)) bool sb_get_full(Connection& c, const Target& target,
                                                               TlsClientConfig& config,
                                                               Sample* handshake, Sample* get) {
  if (!sb_open_full(c, target, config)) return false;
  handshake->to = end_stamp();
  if (!sb_exchange(c)) return false;
  get->to = end_stamp();
  return true;
}

// A retry over a new connection that resumes `session`; timed as sb_get_full().
extern "C" __attribute__((noinline, noclone)) bool sb_get_resumed(Connection& c,
                                                                  const Target& target,
                                                                  TlsClientConfig& config,
                                                                  const TlsSession& session,
                                                                  Sample* handshake, Sample* get) {
  if (!sb_open_resumed(c, target, config, session)) return false;
  handshake->to = end_stamp();
  if (!sb_exchange(c)) return false;
  get->to = end_stamp();
  return true;
}

// A retry over the kept-alive connection `c`: no handshake at all.
extern "C" __attribute__((noinline, noclone)) bool sb_get_keepalive(Connection& c, Sample* get) {
  if (!sb_exchange(c)) return false;
  get->to = end_stamp();
  return true;
}

namespace {

// One round: a full-handshake GET, a keep-alive GET on that connection, then a GET on a new
// connection resuming its session. Each connection is destroyed before the next opens, so
// each arena peak is one connection's (plus the configuration's CA and PSA state).
bool run_round(const Target& target, TlsClientConfig& config) {
  TlsSession session;
  {
    Connection c;
    stepback::https::tls_arena_reset_peak();
    Sample handshake;
    Sample get = handshake;
    if (!sb_get_full(c, target, config, &handshake, &get)) return false;
    Sample keepalive;
    if (!sb_get_keepalive(c, &keepalive)) return false;
    print_sample("full_handshake", handshake);
    print_sample("full_get", get);
    print_sample("keepalive_get", keepalive);
    print_arena("full");
    const Status saved = c.tls.save_session(&session);
    if (saved != Status::kOk) return fail("save session", saved, "no ticket received?");
    c.tls.close();
  }
  Connection c;
  stepback::https::tls_arena_reset_peak();
  Sample handshake;
  Sample get = handshake;
  if (!sb_get_resumed(c, target, config, session, &handshake, &get)) return false;
  print_sample("resumed_handshake", handshake);
  print_sample("resumed_get", get);
  print_arena("resumed");
  c.tls.close();
  return true;
}

// A restarted download's first request, without and with the session kept on disk: a new
// TLS configuration (DRBG seeded, CA file read, as a new process does) and a full-handshake GET,
// whose session is saved as a record; then another new configuration, the record loaded, and a
// GET that resumes it. Each is timed from before the configuration to the response's end.
bool run_restart_round(const Target& target, const char* ca_file) {
  static std::uint8_t record[stepback::https::kTlsSessionRecordMaxBytes];
  std::size_t size = 0;
  const Millis wall(static_cast<std::uint64_t>(now_ns(CLOCK_REALTIME) / 1000000));
  Sample full;
  {
    TlsClientConfig config;
    if (config.init() != Status::kOk || config.add_ca_file(ca_file) != Status::kOk) return false;
    Connection c;
    Sample handshake;
    if (!sb_get_full(c, target, config, &handshake, &full)) return false;
    TlsSession session;
    if (c.tls.save_session(&session) != Status::kOk ||
        stepback::https::save_tls_session_record(session, config, target.host, target.port, wall,
                                                 {record, sizeof record}, &size) !=
            stepback::https::TlsSessionRecordError::kNone) {
      return fail("save the session record", Status::kError, "no ticket received?");
    }
    c.tls.close();
  }
  Sample resumed;
  {
    TlsClientConfig config;
    if (config.init() != Status::kOk || config.add_ca_file(ca_file) != Status::kOk) return false;
    TlsSession session;
    if (stepback::https::load_tls_session_record({record, size}, config, target.host, target.port,
                                                 wall, &session) !=
        stepback::https::TlsSessionRecordError::kNone) {
      return fail("load the session record", Status::kError, "refused");
    }
    Connection c;
    Sample handshake;
    if (!sb_get_resumed(c, target, config, session, &handshake, &resumed)) return false;
    c.tls.close();
  }
  print_sample("restart_full_get", full);
  print_sample("restart_resumed_get", resumed);
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: https_bench ADDRESS PORT CAFILE PATH ROUNDS [SERVER_PID]\n"
               "       https_bench ecdhe ROUNDS\n"
               "       https_bench restart ADDRESS PORT CAFILE PATH ROUNDS\n");
  return 2;
}

// The floor of a psk_dhe_ke resumption: the ECDHE a resumed TLS 1.3 handshake still does, alone,
// with the group the client offers first (P-256, https/src/tls/tls.cpp): a key share generated
// and exported, and the shared secret computed with the server's share. Through PSA, as mbedTLS's
// TLS 1.3 does. Prints CPU ns per exchange; callgrind's count per exchange is the difference of
// two ROUNDS.
extern "C" __attribute__((noinline, noclone)) bool sb_ecdhe(const std::uint8_t* peer,
                                                            std::size_t peer_size) {
  psa_key_attributes_t attributes = PSA_KEY_ATTRIBUTES_INIT;
  psa_set_key_type(&attributes, PSA_KEY_TYPE_ECC_KEY_PAIR(PSA_ECC_FAMILY_SECP_R1));
  psa_set_key_bits(&attributes, 256);
  psa_set_key_usage_flags(&attributes, PSA_KEY_USAGE_DERIVE);
  psa_set_key_algorithm(&attributes, PSA_ALG_ECDH);
  psa_key_id_t key = 0;
  if (psa_generate_key(&attributes, &key) != PSA_SUCCESS) return false;
  std::uint8_t share[65];
  std::uint8_t secret[32];
  std::size_t size = 0;
  const bool ok = psa_export_public_key(key, share, sizeof share, &size) == PSA_SUCCESS &&
                  psa_raw_key_agreement(PSA_ALG_ECDH, key, peer, peer_size, secret, sizeof secret,
                                        &size) == PSA_SUCCESS;
  psa_destroy_key(key);
  return ok;
}

int run_ecdhe(long rounds) {
  if (psa_crypto_init() != PSA_SUCCESS) return 1;
  // The server's share, made once.
  psa_key_attributes_t attributes = PSA_KEY_ATTRIBUTES_INIT;
  psa_set_key_type(&attributes, PSA_KEY_TYPE_ECC_KEY_PAIR(PSA_ECC_FAMILY_SECP_R1));
  psa_set_key_bits(&attributes, 256);
  psa_set_key_usage_flags(&attributes, PSA_KEY_USAGE_DERIVE);
  psa_set_key_algorithm(&attributes, PSA_ALG_ECDH);
  psa_key_id_t server = 0;
  std::uint8_t peer[65];
  std::size_t peer_size = 0;
  if (psa_generate_key(&attributes, &server) != PSA_SUCCESS ||
      psa_export_public_key(server, peer, sizeof peer, &peer_size) != PSA_SUCCESS) {
    return 1;
  }
  const std::int64_t begin = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  for (long i = 0; i < rounds; ++i) {
    if (!sb_ecdhe(peer, peer_size)) return 1;
  }
  const std::int64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - begin;
  std::printf("ecdhe P-256 rounds=%ld cpu_ns_per_exchange=%lld\n", rounds,
              static_cast<long long>(cpu / rounds));
  psa_destroy_key(server);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "ecdhe") == 0) {
    const long rounds = std::strtol(argv[2], nullptr, 10);
    if (rounds <= 0 || rounds > 1000000) return usage();
    if (stepback::https::tls_arena_init(g_arena, sizeof g_arena) != Status::kOk) return 1;
    return run_ecdhe(rounds);
  }
  // restart: the same arguments after the word; the rounds are run_restart_round()'s.
  const bool restart = argc == 7 && std::strcmp(argv[1], "restart") == 0;
  if (restart) {
    ++argv;
    --argc;
  }
  if (argc != 6 && argc != 7) return usage();
  Target target;
  target.host = argv[1];
  const long port = std::strtol(argv[2], nullptr, 10);
  const long rounds = std::strtol(argv[5], nullptr, 10);
  if (port <= 0 || port > 65535 || rounds <= 0 || rounds > kMaxRounds || argv[4][0] != '/') {
    return usage();
  }
  target.port = static_cast<std::uint16_t>(port);
  if (argc == 7) {
    const long pid = std::strtol(argv[6], nullptr, 10);
    if (pid <= 0) return usage();
    std::snprintf(g_server_schedstat, sizeof g_server_schedstat, "/proc/%ld/schedstat", pid);
    if (server_ns() == 0) {
      std::fprintf(stderr, "https_bench: cannot read %s\n", g_server_schedstat);
      return 1;
    }
  }
  const int n = std::snprintf(g_request, sizeof g_request,
                              "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: stepback-https-bench\r\n"
                              "Accept: */*\r\n\r\n",
                              argv[4], argv[1]);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof g_request) return usage();
  g_request_size = static_cast<std::size_t>(n);

  if (stepback::https::tls_arena_init(g_arena, sizeof g_arena) != Status::kOk) {
    std::fprintf(stderr, "https_bench: cannot install the TLS arena\n");
    return 1;
  }
  int result = 0;
  {
    TlsClientConfig config;
    if (config.init() != Status::kOk) {
      std::fprintf(stderr, "https_bench: TLS initialization failed\n");
      return 1;
    }
    if (config.add_ca_file(argv[3]) != Status::kOk) {
      std::fprintf(stderr, "https_bench: no usable certificate in %s\n", argv[3]);
      return 1;
    }
    for (long i = 0; i < rounds && result == 0; ++i) {
      if (!(restart ? run_restart_round(target, argv[3]) : run_round(target, config))) result = 1;
    }
  }
  std::fflush(stdout);
  return result;
}

#include "client_loop.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"

namespace stepback::tools {
namespace {

// Every mbedTLS allocation of the process. Trust anchors are looked up on demand (TrustStore),
// so the arena holds one handshake's state, not the system's roots; mbedTLS's buffer
// allocator zeroes the whole arena at set-up, so every byte of it is resident.
// docs/performance.md gives the measured peaks (`--trace` prints arena_peak): about 36 KiB, 25
// KiB in the small-RAM build (4 KiB TLS records), whose arena leaves room for RSA chains.
constexpr bool kSmall = https::kSmallRamBuild;
constexpr std::size_t kTlsArenaBytes = std::size_t{kSmall ? 48 : 96} * 1024;
alignas(16) std::uint8_t g_tls_arena[kTlsArenaBytes];

// The client's buffers. Static rather than on the stack: together they are 60 KiB (11 KiB
// in the small-RAM build).
std::uint8_t g_request_head[kSmall ? 2 * 1024 : 8 * 1024];
// Response heads up to 32 KiB: Cloud Storage's carry many x-goog-* fields, and some servers
// send large cookies; an app gives the Client the buffer its servers need (Cloud Storage's
// take about 1.5 KiB: 4 KiB in the small-RAM build).
std::uint8_t g_response_head[kSmall ? 4 * 1024 : 32 * 1024];
std::uint8_t g_io[https::kTlsInputBufferBytes];  // One full TLS record per read.
std::uint8_t g_error_body[kSmall ? 512 : 4 * 1024];
std::uint8_t g_redirect_url[kSmall ? 2 * 1024 : 4 * 1024];
// Descriptors one poll() watches: the client's and a peer's (the demo server's listener and
// connections).
constexpr std::size_t kMaxPollFds = 16;

// Set by SIGINT and SIGTERM while a StopSignals is in place.
volatile std::sig_atomic_t g_stop = 0;

void on_stop_signal(int) { g_stop = 1; }

}  // namespace

bool defer_now(const https::RunHint& hint, Millis now, Millis after) {
  if (hint.state == https::RunHint::State::kWaitingForNetwork) return true;
  return hint.state == https::RunHint::State::kWaiting && hint.run_at != Millis::max() &&
         hint.run_at > now && hint.run_at - now > after;
}

void report_deferred(const char* prefix, const https::RunHint& hint, Millis now,
                     std::optional<Millis> trace_at) {
  const bool for_network = hint.state == https::RunHint::State::kWaitingForNetwork;
  const bool timed = !for_network && hint.run_at != Millis::max() && hint.run_at > now;
  const std::uint64_t run_in = timed ? (hint.run_at - now).count() : 0;
  const std::uint64_t left = hint.bytes_left.value_or(0);
  if (trace_at) {
    std::fprintf(stderr, "{\"event\":\"deferred\",\"t_ms\":%llu,\"state\":\"%s\",\"run_in_ms\":",
                 static_cast<unsigned long long>(trace_at->count()),
                 for_network ? "waiting_for_network" : "waiting");
    if (timed) {
      std::fprintf(stderr, "%llu", static_cast<unsigned long long>(run_in));
    } else {
      std::fputs("null", stderr);
    }
    std::fprintf(stderr, ",\"unmetered\":%s,\"not_roaming\":%s,\"bytes_left\":",
                 hint.unmetered ? "true" : "false", hint.not_roaming ? "true" : "false");
    if (hint.bytes_left) {
      std::fprintf(stderr, "%llu}\n", static_cast<unsigned long long>(left));
    } else {
      std::fputs("null}\n", stderr);
    }
    return;
  }
  const char* network = hint.unmetered && hint.not_roaming
                            ? " on an unmetered network that is not roaming"
                        : hint.unmetered   ? " on an unmetered network"
                        : hint.not_roaming ? " on a network that is not roaming"
                        : for_network      ? " when a network is up"
                                           : "";
  if (timed) {
    std::fprintf(stderr, "%sdeferred: run the same command again in %llu.%03llu s%s", prefix,
                 static_cast<unsigned long long>(run_in / 1000),
                 static_cast<unsigned long long>(run_in % 1000), network);
  } else {
    std::fprintf(stderr, "%sdeferred: run the same command again%s", prefix, network);
  }
  if (hint.bytes_left) {
    std::fprintf(stderr, " (%llu bytes left)\n", static_cast<unsigned long long>(left));
  } else {
    std::fputs("\n", stderr);
  }
}

int exit_code(const https::ClientResult& result, bool output_failed) {
  if (output_failed) return kExitLocalIo;
  switch (result.outcome) {
    case Outcome::kSuccess:
      return kExitOk;
    case Outcome::kRetriesExhausted:
    case Outcome::kDeadline:
    case Outcome::kBudgetExhausted:
    case Outcome::kServerDelayTooLong:
      return kExitGaveUp;
    case Outcome::kTerminalStatus:
      return kExitHttpStatus;
    case Outcome::kTerminalFailure:
      if (result.error == https::Status::kRestartRefused) return kExitNoSplice;
      if (result.error == https::Status::kTimeLimit) return kExitTimeLimit;
      if (result.error == https::Status::kIntegrity) return kExitIntegrity;
      if (result.error == https::Status::kRedirect) return kExitRedirect;
      if (result.error == https::Status::kProxyAuth) return kExitProxyAuth;
      return result.error == https::Status::kTlsVerify ? kExitTlsVerify : kExitTransport;
    case Outcome::kNotIdempotent:
      // The last attempt either got an HTTP answer (error kOk) or failed in transport.
      return result.error == https::Status::kOk ? kExitHttpStatus : kExitTransport;
    case Outcome::kOffline:
      return kExitOffline;
    case Outcome::kCancelled:
      break;
  }
  return kExitInternal;
}

int fail_exit_code(const https::ClientResult& result, int code) {
  // error kOk: the last attempt got an answer (a transport failure after it would not be).
  const bool http_error = result.error == https::Status::kOk && result.status >= 400;
  return http_error && (code == kExitHttpStatus || code == kExitGaveUp) ? kExitHttpFail : code;
}

https::ClientBuffers client_buffers() {
  return https::ClientBuffers{{g_request_head, sizeof g_request_head},
                              {g_response_head, sizeof g_response_head},
                              {g_io, sizeof g_io},
                              {g_error_body, sizeof g_error_body}};
}

const char* request_head_too_large() {
  static_assert(sizeof g_request_head == std::size_t{kSmall ? 2U : 8U} * 1024,
                "the message names the size");
  return kSmall ? "the request head does not fit its 2 KiB buffer"
                : "the request head does not fit its 8 KiB buffer";
}

https::Status install_tls_arena() {
  if (https::tls_arena_installed()) return https::Status::kOk;
  return https::tls_arena_init(g_tls_arena, sizeof g_tls_arena);
}

const https::ClientResult& run_client(https::Client& client, Ticker& ticker, LoopPeer* peer) {
  run_steps(Stepper{[](void* c, Millis now) { return static_cast<https::Client*>(c)->step(now); },
                    &client},
            ticker, peer);
  return client.result();
}

void run_steps(Stepper stepper, Ticker& ticker, LoopPeer* peer) {
  Millis now = platform::monotonic_now();
  https::ClientNext next = stepper.step(stepper.context, now);
  while (next.kind != https::ClientNext::Kind::kDone) {
    pollfd fds[kMaxPollFds];
    std::size_t count = 0;
    bool client_polled = false;
    if (next.kind == https::ClientNext::Kind::kWaitIo && next.fd >= 0) {
      fds[count++] = pollfd{next.fd, https::poll_events(next.interest), 0};
      client_polled = true;
    }
    if (peer != nullptr) count += peer->poll_fds(fds + count, kMaxPollFds - count);
    const int timeout = https::poll_timeout(next.at, now, longest_wait(ticker.wants_ticks()));
    // kWaitUntil with nothing else to watch is a plain sleep: poll(nullptr, 0, ms).
    // A signal (Ctrl-C) cuts the sleep short, or came before it: the stepper is asked at
    // once, to see it.
    const bool interrupted =
        (::poll(count == 0 ? nullptr : fds, static_cast<nfds_t>(count), timeout) < 0 &&
         errno == EINTR) ||
        g_stop != 0;
    now = platform::monotonic_now();
    const bool changed = peer != nullptr && peer->serve(now);
    ticker.tick(now);
    const bool ready = client_polled && fds[0].revents != 0;
    if (ready || changed || interrupted || now >= next.at) {
      next = stepper.step(stepper.context, now);
    }
  }
}

StopSignals::StopSignals() {
  g_stop = 0;
  struct sigaction action {};
  action.sa_handler = &on_stop_signal;
  (void)::sigaction(SIGINT, &action, &old_int_);
  (void)::sigaction(SIGTERM, &action, &old_term_);
}

StopSignals::~StopSignals() {
  (void)::sigaction(SIGINT, &old_int_, nullptr);
  (void)::sigaction(SIGTERM, &old_term_, nullptr);
}

bool stop_requested() { return g_stop != 0; }

std::size_t tls_arena_bytes() { return kTlsArenaBytes; }

https::MutableBytes redirect_buffer() { return {g_redirect_url, sizeof g_redirect_url}; }

}  // namespace stepback::tools

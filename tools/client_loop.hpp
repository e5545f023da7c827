// The main loop of the subcommands that make requests (get, upload, demo): the process's
// TLS arena and client buffers, the poll() loop that steps a request or a transfer beside
// anything else the program serves, the stop signals it heeds, and the exit codes.
#ifndef STEPBACK_TOOLS_CLIENT_LOOP_HPP_
#define STEPBACK_TOOLS_CLIENT_LOOP_HPP_

#include <poll.h>

#include <csignal>
#include <cstddef>
#include <optional>

#include "line_meter.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/types.hpp"

namespace stepback::tools {

// Exit codes of `stepback get` and `stepback demo` (also in --help and docs/https.md).
enum ExitCode : int {
  kExitOk = 0,             // The final response was 1xx-3xx.
  kExitInternal = 1,       // The TLS library could not be set up (arena, PSA, entropy).
  kExitUsage = 2,          // A bad option, URL, method, header or CA file/directory.
  kExitGaveUp = 3,         // Retrying stopped: retries, deadline, budget or server delay.
  kExitHttpStatus = 4,     // The final response is an error status that is not retried.
  kExitTlsVerify = 5,      // The server's certificate or host name did not verify.
  kExitTransport = 6,      // Another transport or protocol failure that is not retried.
  kExitLocalIo = 7,        // Reading the --data file or writing the output failed.
  kExitNoSplice = 8,       // The body had to start over and the output (stdout) cannot.
  kExitTimeLimit = 9,      // --max-time passed.
  kExitIntegrity = 10,     // The body's digest differs from the one the server stated.
  kExitRedirect = 14,      // A redirect was not followed: a loop, too many, https to http.
  kExitProxyAuth = 15,     // The proxy answered CONNECT with 407: credentials missing or refused.
  kExitOffline = 16,       // No network the transfer may use came within --offline-limit.
  kExitDeferred = 17,      // --defer-after: saved, to be run again later (the line says when).
  kExitHttpFail = 22,      // get -f: the final response was an HTTP error (curl's code).
  kExitInterrupted = 130,  // SIGINT or SIGTERM ended a transfer (after a checkpoint).
};

// --defer-after: whether a transfer whose RunHint is `hint` at `now` is handed to a scheduler:
// it waits for a network it may use, or has nothing to do for longer than `after`.
bool defer_now(const https::RunHint& hint, Millis now, Millis after);
// Says when to run a deferred transfer again (`hint` at `now`), on what network, and the
// bytes left: a line after `prefix`, or with `trace_at` (time since the start) a JSON event
// {"event":"deferred","t_ms":..,"state":"waiting"|"waiting_for_network","run_in_ms":N|null,
// "unmetered":B,"not_roaming":B,"bytes_left":N|null}.
void report_deferred(const char* prefix, const https::RunHint& hint, Millis now,
                     std::optional<Millis> trace_at);

// The exit code for a finished request; `output_failed` when writing the body failed.
int exit_code(const https::ClientResult& result, bool output_failed);
// curl's -f: kExitHttpFail in place of `code` (exit_code()'s) when the request ended on an
// HTTP error answer, 400 or above (not retried, or retried to the end); else `code`.
int fail_exit_code(const https::ClientResult& result, int code);

// The process's static client buffers (request head, response head, io, error body); one
// client at a time may use them.
https::ClientBuffers client_buffers();

// What to say when a request head does not fit client_buffers().request: its size in words.
const char* request_head_too_large();

// The process's static buffer for the URL a redirect leads to (ClientOptions::redirect_url).
https::MutableBytes redirect_buffer();

// The size of the process's TLS arena, in bytes.
std::size_t tls_arena_bytes();

// Installs the process's static TLS arena unless it already is; call it before any other
// mbedTLS call. kOk, or what https::tls_arena_init() reports.
[[nodiscard]] https::Status install_tls_arena();

// The longest one poll() of a main loop sleeps: a minute, or one tick while a countdown or
// meter is on screen (`ticks`).
constexpr Millis longest_wait(bool ticks) { return ticks ? kTick : https::kLongestPollWait; }

// Something else the main loop serves between the client's steps (the demo's server).
class LoopPeer {
 public:
  // Fills up to `room` entries of `fds` with what to poll; returns how many.
  virtual std::size_t poll_fds(pollfd* fds, std::size_t room) = 0;
  // Does whatever can be done without blocking, at monotonic time `now`; true when what the
  // stepper depends on changed (the network), so that it is stepped at once.
  virtual bool serve(Millis now) = 0;

 protected:
  ~LoopPeer() = default;
};

// Something the loop steps until it answers kDone: a Client, a transfer::Download.
struct Stepper {
  https::ClientNext (*step)(void* context, Millis now) = nullptr;
  void* context = nullptr;
};

// Steps `stepper` (already started) from a poll() loop until it is done, serving `peer` (may
// be null) in the same loop and ticking `ticker`. A stop signal (StopSignals) has the stepper
// asked at once, to see it.
void run_steps(Stepper stepper, Ticker& ticker, LoopPeer* peer);

// run_steps() over `client`; returns the client's result.
const https::ClientResult& run_client(https::Client& client, Ticker& ticker, LoopPeer* peer);

// SIGINT and SIGTERM caught while the object lives (the handlers before it are put back
// after): stop_requested() turns true, for a transfer's stepper to end it, saved.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Whether SIGINT or SIGTERM came while a StopSignals was in place.
bool stop_requested();

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_CLIENT_LOOP_HPP_

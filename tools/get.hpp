// `stepback get`, and what `stepback demo` shares with it: the process's TLS arena, the
// poll() main loop that steps an https::Client, the progress lines and the --trace JSON
// lines, and the exit codes.
#ifndef STEPBACK_TOOLS_GET_HPP_
#define STEPBACK_TOOLS_GET_HPP_

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/tls.hpp"
#include "stepback/https/trust_store.hpp"
#include "stepback/https/types.hpp"
#include "stepback/profiles/active.hpp"

namespace stepback::tools {

// Exit codes of `stepback get` and `stepback demo` (also in --help and the README).
enum ExitCode : int {
  kExitOk = 0,          // The final response was 1xx-3xx.
  kExitInternal = 1,    // The TLS library could not be set up (arena, PSA, entropy).
  kExitUsage = 2,       // A bad option, URL, method, header or CA file/directory.
  kExitGaveUp = 3,      // Retrying stopped: retries, deadline, budget or server delay.
  kExitHttpStatus = 4,  // The final response is an error status that is not retried.
  kExitTlsVerify = 5,   // The server's certificate or host name did not verify.
  kExitTransport = 6,   // Another transport or protocol failure that is not retried.
  kExitLocalIo = 7,     // Reading the --data file or writing the output failed.
  kExitNoSplice = 8,    // The body had to start over and the output (stdout) cannot.
  kExitTimeLimit = 9,   // --max-time passed.
  kExitIntegrity = 10,  // The body's digest differs from the one the server stated.
};

// The exit code for a finished request; `output_failed` when writing the body failed.
int exit_code(const https::ClientResult& result, bool output_failed);

// Shared by the subcommands that make requests (get, upload).

// The retry flags: --profile, --max-retries, --max-backoff, --deadline, --jitter and
// --idempotency, on top of the profile compiled in.
struct RetryFlags {
  const profiles::DeviceProfile* profile = &profiles::active;
  std::optional<std::uint32_t> max_retries;
  std::optional<Millis> max_backoff;
  std::optional<Millis> deadline;
  std::optional<Jitter> jitter;
  https::RequestSpec::Idempotency idempotency = https::RequestSpec::Idempotency::kByMethod;
};
// Whether `flag` is one of RetryFlags' (each takes a value).
bool is_retry_flag(std::string_view flag);
// Takes `value` for the retry flag `flag` into *out; false with *error when it is not valid.
bool parse_retry_flag(std::string_view flag, std::string_view value, RetryFlags* out,
                      std::string* error);
// The profile's retry policy with the flags' overrides; nullopt with *error when they do not
// make a usable policy.
std::optional<Policy> make_policy(const RetryFlags& flags, std::string* error);
class LineBuffer;

// Parses "12", "0.5" or "2.25" seconds (at most millisecond precision); nullopt otherwise.
std::optional<Millis> parse_seconds(std::string_view text);
// `s` without leading and trailing blanks (spaces, tabs).
std::string_view trim(std::string_view s);
// Splits "Name: value"; false when there is no colon or the name is empty or holds blanks.
bool parse_header(std::string_view text, https::Header* out);
// Sets up the trust anchors (a hashed --capath directory, a --cacert bundle, or the system's
// store, looked up on demand) and `pin_count` public-key pins on `tls`; false with *error.
bool load_trust(const char* cacert, const char* capath, const https::PublicKeyPin* pins,
                std::size_t pin_count, https::TlsClientConfig* tls, std::string* error);
// Appends `s` as a JSON string (at most 200 bytes of it), valid whatever the bytes.
void append_json_string(LineBuffer* out, std::string_view s);
// Appends `s` (at most 200 bytes) with every byte outside printable ASCII shown as '?'.
void append_printable(LineBuffer* out, std::string_view s);
// " (Retry-After)" and the like: why a wait lasts as long as it does, for progress lines.
const char* wait_note(WaitReason reason);
// The poll() events for `interest`.
short poll_events(https::IoInterest interest);
// Milliseconds to poll from `now` until `at`: at most a minute, and at most 100 ms while a
// countdown or meter is on screen (`ticks`).
int poll_timeout(Millis now, Millis at, bool ticks);

// Where a response body goes: a stdio stream; records the first failed write.
struct BodyOutput {
  std::FILE* file = nullptr;
  bool failed = false;
  int error = 0;             // errno of the failed write.
  bool restartable = false;  // A regular file that can be emptied and written again.
};

// A ResponseSink that writes to `out`, which must outlive the client.
https::ResponseSink body_sink(BodyOutput* out);

// The process's static client buffers (request head, response head, io, error body); one
// client at a time may use them.
https::ClientBuffers client_buffers();

// The size of the process's TLS arena, in bytes.
std::size_t tls_arena_bytes();

// Installs the process's static TLS arena unless it already is; call it before any other
// mbedTLS call. kOk, or what https::tls_arena_init() reports.
[[nodiscard]] https::Status install_tls_arena();

// A bounded text buffer for output lines: what does not fit is cut, nothing is allocated.
class LineBuffer {
 public:
  // Empties the buffer.
  void clear() {
    size_ = 0;
    text_[0] = '\0';
  }
  // Appends `s`, cut to the room left.
  void append(std::string_view s);
  // Appends printf-style text, cut to the room left.
  void appendf(const char* format, ...) __attribute__((format(printf, 2, 3)));
  // The text, NUL-terminated.
  const char* c_str() const { return text_; }

 private:
  char text_[2048] = {};
  std::size_t size_ = 0;
};

// Turns a Client's events into progress for a person (one line per attempt, with a live
// countdown of the wait when stderr is a terminal) or, with `trace`, one JSON object per
// event. Writes to `err` only, from fixed buffers: no heap while the request runs.
class Reporter {
 public:
  // `prefix` starts the closing message of a failed request ("stepback get: "); `start` is
  // the monotonic time t_ms counts from.
  Reporter(std::FILE* err, bool trace, bool countdown, const char* prefix, Millis start);

  // The sink to give the Client.
  https::EventSink sink() { return https::EventSink{&Reporter::on_event, this}; }
  // Lets the done event carry the client's connection count and resumption.
  void attach(const https::Client* client) { client_ = client; }
  // Whether the main loop should call tick() every 100 ms (a countdown is on screen).
  bool wants_ticks() const { return countdown_ && (waiting_ || metering_); }
  // Redraws the countdown if 100 ms have passed since the last drawing.
  void tick(Millis now);

 private:
  static void on_event(void* self, const https::ClientEvent& event);
  void human(const https::ClientEvent& event);
  void trace(const https::ClientEvent& event);
  void end_line();
  void draw_countdown(Millis now);
  void draw_meter(Millis now);

  std::FILE* err_;
  bool trace_;
  bool countdown_;
  const char* prefix_;
  Millis start_;
  const https::Client* client_ = nullptr;
  LineBuffer line_;               // The current attempt's line, without its newline.
  bool line_open_ = false;        // line_ is started and not yet ended with a newline.
  bool line_has_status_ = false;  // line_ already shows this attempt's status.
  bool metering_ = false;         // A body is arriving and its meter is on screen (terminal).
  Millis meter_start_{};          // When this attempt's body began.
  std::uint64_t meter_from_ = 0;  // Bytes the sink had when it began (a resumed offset).
  bool waiting_ = false;          // A countdown is on screen (terminal mode only).
  Millis wait_end_{};
  Millis last_draw_{};
};

// Something else the main loop serves between the client's steps (the demo's server).
class LoopPeer {
 public:
  // Fills up to `room` entries of `fds` with what to poll; returns how many.
  virtual std::size_t poll_fds(pollfd* fds, std::size_t room) = 0;
  // Does whatever can be done without blocking, at monotonic time `now`.
  virtual void serve(Millis now) = 0;

 protected:
  ~LoopPeer() = default;
};

// Steps `client` (already start()ed) from a poll() loop until it is done, serving `peer` (may
// be null) in the same loop and ticking `reporter`; returns the client's result.
const https::ClientResult& run_client(https::Client& client, Reporter& reporter, LoopPeer* peer);

// Runs `stepback get` with argv[0] == "get"; returns the exit code.
int run_get(int argc, char** argv);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_GET_HPP_

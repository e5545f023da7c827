// Client: one HTTPS (or plain HTTP) request retried per a policy, step-driven from the
// application's main loop. It owns the retry machine, the connection (TCP, TLS over it),
// keep-alive reuse and TLS session resumption; every byte lives in caller buffers.
#ifndef STEPBACK_HTTPS_CLIENT_HPP_
#define STEPBACK_HTTPS_CLIENT_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/core/retry_machine.hpp"
#include "stepback/https/connector.hpp"
#include "stepback/https/request_writer.hpp"
#include "stepback/https/response_parser.hpp"
#include "stepback/https/tls.hpp"
#include "stepback/https/types.hpp"
#include "stepback/profiles/profile.hpp"

namespace stepback::https {

// What the client needs from the main loop next.
struct ClientNext {
  enum class Kind : std::uint8_t {
    kWaitIo,     // Poll `fd` for `interest`, waking at `at` at the latest; then step().
    kWaitUntil,  // Sleep until `at` (monotonic); then step().
    kDone,       // Finished: see Client::result().
  };
  Kind kind = Kind::kDone;
  int fd = -1;
  IoInterest interest = IoInterest::kNone;
  Millis at{};
};

// How a request ended, valid once step() answered kDone.
struct ClientResult {
  Outcome outcome = Outcome::kCancelled;  // Why the retry loop ended.
  std::uint16_t status = 0;               // The last HTTP status, 0 if none arrived.
  Status error = Status::kOk;             // The last attempt's transport or parse failure.
  std::uint32_t attempts = 0;
  const char* message = "";               // Words on the last failure ("" if none).
};

// Something that happened, for progress lines and traces.
struct ClientEvent {
  enum class Kind : std::uint8_t { kAttempt, kResponse, kError, kWait, kDone };
  Kind kind = Kind::kAttempt;
  Millis at{};                     // Monotonic time of the event.
  std::uint32_t attempt = 0;       // 1-based attempt number.
  std::uint16_t status = 0;        // kResponse, kDone: the HTTP status.
  std::string_view reason;         // kResponse: the reason phrase.
  Failure failure = Failure::kNone;  // kError: the failure kind.
  const char* message = "";        // kError: what failed, in words.
  Millis wait{};                   // kWait: its length.
  WaitReason wait_reason = WaitReason::kBackoff;  // kWait: why that long.
  Outcome outcome = Outcome::kSuccess;            // kDone.
};

// Receives events; called synchronously from step().
struct EventSink {
  void (*on_event)(void* context, const ClientEvent& event) = nullptr;
  void* context = nullptr;
};

// The request: method, URL, headers and body, all owned by the caller for the client's life.
struct RequestSpec {
  RequestHead head;
  ConstBytes body;
  // Whether the request may be re-sent after it may have reached the server; by default
  // from the method (GET, HEAD, PUT, DELETE, OPTIONS yes; POST, PATCH no).
  enum class Idempotency : std::uint8_t { kByMethod, kYes, kNo } idempotency = Idempotency::kByMethod;
};

// Caller-owned memory of one client.
struct ClientBuffers {
  MutableBytes request;        // The request head (method line and headers).
  MutableBytes response_head;  // The response status line and headers.
  MutableBytes io;             // Receive scratch; 4-16 KiB is plenty.
  MutableBytes error_body;     // Kept from retryable error responses, to read RetryInfo.
};

// One request with retries. Not copyable; everything it is given must outlive it.
class Client {
 public:
  // Connects with the built-in TcpTlsConnector; `tls` may be null for http:// URLs only.
  // `context` supplies policy, randomness and budget.
  Client(TlsClientConfig* tls, const RetryContext& context, const profiles::Timeouts& timeouts,
         ClientBuffers buffers, BodySink body, std::uint64_t body_limit, EventSink events);
  // Connects through `connector` (the app's own, or a scripted one in tests).
  Client(Connector& connector, const RetryContext& context, const profiles::Timeouts& timeouts,
         ClientBuffers buffers, BodySink body, std::uint64_t body_limit, EventSink events);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Prepares `spec` (writes its head); kInvalidArgument or kBufferTooSmall on a bad request.
  [[nodiscard]] Status start(const RequestSpec& spec);
  // Advances the request at `now` (monotonic); never blocks except in getaddrinfo for names.
  [[nodiscard]] ClientNext step(Millis now);
  // Ends the request with Outcome::kCancelled and closes the connection.
  void cancel();
  // Connectivity has returned: shortens a backoff wait (see RetryMachine).
  void network_available(Millis now) { machine_.network_available(now); }
  // The result; meaningful after step() answered kDone.
  const ClientResult& result() const { return result_; }
  // Whether the last handshake resumed a saved TLS session.
  bool resumed() const { return resumed_; }
  // Connections opened so far (reused keep-alive connections are not counted again).
  std::uint32_t connections() const { return connections_; }

 private:
  enum class Phase : std::uint8_t { kIdle, kConnecting, kSending, kReceiving, kWaiting, kDone };

  Client(TlsClientConfig* tls, Connector* connector, const RetryContext& context,
         const profiles::Timeouts& timeouts, ClientBuffers buffers, BodySink body,
         std::uint64_t body_limit, EventSink events);

  // The phases an attempt goes through, each with its own *_step(); follow() turns the
  // retry machine's answers into attempts, waits and the end.
  ClientNext follow(Millis now, const Next& next);
  ClientNext begin_attempt(Millis now);
  void reset_exchange();
  ClientNext connect(Millis now);
  ClientNext connect_step(Millis now);
  ClientNext send_step(Millis now);
  ClientNext receive_step(Millis now);
  ClientNext end_response(Millis now, bool reusable);
  ClientNext fail_attempt(Millis now, Status status, const char* message);
  ClientNext end_attempt(Millis now, const AttemptResult& result);
  AttemptResult response_result(Millis wall_now) const;
  ClientNext wait_io(int fd, IoInterest interest, Millis deadline);
  Millis io_limit() const;
  Transport& stream();
  void close_connection();
  void emit(const ClientEvent& event) const;
  void note_head(Millis now);
  static bool deliver_body(void* self, ConstBytes data);

  TcpTlsConnector own_connector_;  // Used unless the caller brought a connector.
  Connector* connector_;
  const RetryContext* context_;
  RetryMachine machine_;
  profiles::Timeouts timeouts_;
  ClientBuffers buffers_;
  BodySink body_;
  EventSink events_;
  ResponseParser parser_;
  RequestSpec spec_;
  char host_z_[256] = {};       // NUL-terminated host for getaddrinfo and SNI.
  std::size_t head_size_ = 0;   // Bytes of the request head in buffers_.request.
  std::size_t sent_ = 0;        // Request bytes (head + body) sent this attempt.
  std::size_t error_body_size_ = 0;
  Millis io_deadline_{};        // When the current send or read times out.
  Millis now_{};                // The `now` of the step() under way, for events.
  ClientResult result_;
  Phase phase_ = Phase::kIdle;
  bool connection_open_ = false;  // A connected, handshaken stream kept for reuse.
  bool reused_ = false;           // This attempt runs on a kept connection.
  bool body_decided_ = false;     // Whether this response's body goes to the caller.
  bool capture_error_body_ = false;
  bool idempotent_ = true;
  bool resumed_ = false;
  std::uint32_t connections_ = 0;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_CLIENT_HPP_

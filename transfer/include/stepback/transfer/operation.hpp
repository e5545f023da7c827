// Operation: a mutation that answers with a google.longrunning.Operation (Memorystore for
// Redis instances create, patch, delete, failover, ...), followed until the operation is
// done. Step-driven from the application's main loop like the Client it drives, and
// allocation-free: every byte lives in caller buffers or in the object.
//
//   1. The mutation is sent with the retry policy (one Client request).
//   2. Its 2xx body is read as an Operation (operation_json.hpp) from the caller's buffer.
//   3. Until "done" is true, GET {prefix}{name} is sent after a wait drawn from the polling
//      policy: truncated exponential with jitter, never sooner than its floor, within a total
//      polling deadline counted from the mutation's answer. Each poll is one Client request,
//      so a poll that fails (5xx, 429 and its RetryInfo, a reset, a stall) is retried per the
//      retry policy, and the next poll starts with a fresh retry count.
//   4. Done with "response": the response's JSON goes to the caller's sink. Done with
//      "error": the google.rpc.Status is the result, its code named (9: FAILED_PRECONDITION).
//
// Outcomes stay apart (OperationOutcome): the operation's own error is not a transport
// failure, running out of polling time is not running out of retries, and a create answered
// 409 ALREADY_EXISTS (the re-sent create of a resource the first attempt may have made) is
// neither success nor a plain failure.
#ifndef STEPBACK_TRANSFER_OPERATION_HPP_
#define STEPBACK_TRANSFER_OPERATION_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/polling.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/connector.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/types.hpp"

namespace stepback::transfer {

// How following an operation ended.
enum class OperationOutcome : std::uint8_t {
  kSucceeded,        // Done with "response" (given to the response sink), or with neither
                     // response nor error.
  kFailed,           // Done with "error": OperationResult::error is its google.rpc.Status.
  kPollingDeadline,  // Gave up polling: the polling deadline passed and it was not done.
  kGaveUpRetrying,   // The mutation or a poll gave up retrying (retries exhausted, the retry
                     // deadline, the retry budget, a server delay beyond the policy's).
  kAlreadyExists,    // The mutation was answered 409 ALREADY_EXISTS: the resource exists, made
                     // by an earlier attempt whose answer was lost (OperationResult::resent)
                     // or by someone else; the 409 cannot tell. Get the resource.
  kRequestFailed,    // The mutation or a poll ended otherwise: an HTTP error that is not
                     // retried (404, 403, a second 401), TLS verification, a transport failure
                     // of a request that is not idempotent, max_time.
  kMalformed,        // A 2xx answer that is not an Operation (or has no name to poll, or a name
                     // that cannot be a URL path), or does not fit the operation buffer.
  kCancelled,        // cancel() was called.
};

// The lower-case name of `o` ("succeeded", "failed", "polling_deadline", ...).
const char* to_string(OperationOutcome o);

// Which request is under way, or ended the operation.
enum class OperationPhase : std::uint8_t { kIdle, kMutation, kWaiting, kPoll, kDone };

// The lower-case name of `p` ("mutation", "poll", ...).
const char* to_string(OperationPhase p);

// Longest operation name (decoded) the follower keeps; a longer one is kMalformed.
inline constexpr std::size_t kMaxOperationName = 512;
// Longest poll prefix ("/v1/").
inline constexpr std::size_t kMaxPollPrefix = 64;
// Longest status message kept (decoded, cut at a UTF-8 boundary).
inline constexpr std::size_t kMaxStatusMessage = 512;

// A google.rpc.Status: the operation's error, or the error body of a failed HTTP request.
struct OperationError {
  bool present = false;
  std::int32_t code = 0;  // google.rpc.Code (the HTTP status in an HTTP error body).
  const char* code_name =
      "";                    // rpc_code_name(code) for an operation's error: "FAILED_PRECONDITION".
  std::string_view status;   // An HTTP error body's "status" ("ALREADY_EXISTS"), raw.
  std::string_view message;  // Decoded, at most kMaxStatusMessage bytes; owned by the Operation.
  std::string_view details;  // The "details" array's JSON as sent, in the operation buffer.
};

// How an operation ended; views stay valid until the next start() or the Operation's end.
struct OperationResult {
  OperationOutcome outcome = OperationOutcome::kCancelled;
  OperationPhase phase = OperationPhase::kIdle;  // The request that ended it (mutation or poll).
  std::uint32_t polls = 0;                       // Polls sent.
  https::ClientResult request;                   // The last request's result.
  OperationError error;  // kFailed: the operation's error. kAlreadyExists, kRequestFailed: the
                         // HTTP error body's, when it was a google.rpc.Status.
  bool resent = false;   // The mutation was sent more than once (kAlreadyExists: the 409 may
                         // be the echo of our own first attempt).
  bool response_refused = false;  // kSucceeded: the response sink returned false.
  const char* message = "";       // What happened, in words.
};

// Something that happened, for progress lines and traces.
struct OperationEvent {
  enum class Kind : std::uint8_t {
    kOperation,  // The mutation's answer was read: name, verb, status_detail, done.
    kPoll,       // Poll `poll` is about to be sent.
    kPolled,     // Poll `poll` was answered: done, status_detail.
    kWait,       // The next poll is due at at + wait.
    kDone,       // Finished with `outcome`.
  };
  Kind kind = Kind::kOperation;
  Millis at{};
  std::uint32_t poll = 0;          // 1-based poll number (kPoll, kPolled, kWait: the next one).
  std::string_view name;           // The operation's name (decoded).
  std::string_view verb;           // metadata.verb, raw ("" when absent).
  std::string_view status_detail;  // metadata.statusDetail, raw ("" when absent).
  bool done = false;
  Millis wait{};
  OperationOutcome outcome = OperationOutcome::kSucceeded;
};

// Receives operation events; called synchronously from step(). The views die with the call.
struct OperationEventSink {
  void (*on_event)(void* context, const OperationEvent& event) = nullptr;
  void* context = nullptr;
};

// Everything an Operation is configured with, besides its connector and retry context.
struct OperationOptions {
  // The Client's options (timeouts, buffers, credentials, wall clock, its events). Its body
  // sink and body_limit are the Operation's own: every answer goes to `operation_buffer`.
  https::ClientOptions client;
  // Holds the latest answer whole (the Operation, with its response or error); an answer
  // that does not fit fails as kMalformed. A created instance is a few KiB.
  https::MutableBytes operation_buffer;
  // Gets the "response" value's JSON when the operation is done with one (one write at
  // offset 0). A null write discards it.
  https::ResponseSink response;
  // How often to poll: the device profile's (profiles::active.polling) is the usual choice.
  // The default has the same schedule and no polling deadline.
  PollingPolicy polling;
  OperationEventSink events;
};

// What to do: the mutation, and where the operation is polled.
struct OperationSpec {
  // The mutation. Declare its idempotency: a create that names its resource (?instanceId=)
  // cannot make two, so it may be re-sent (RequestSpec::Idempotency::kYes; see
  // names_its_resource()); Redis v1 has no requestId.
  https::RequestSpec mutation;
  // The path polls put before the operation's name; empty: the first segment of the
  // mutation's target ("/v1/" for "/v1/projects/..."), "/" when it has none.
  std::string_view poll_prefix;
  // Extra header fields of every poll (the mutation's are not repeated: Content-Type and the
  // like belong to its body). Credentials come from the client options, for polls too.
  const https::Header* poll_headers = nullptr;
  std::size_t poll_header_count = 0;
};

// Whether the query of a create's target names the resource it makes, so that a second
// create cannot make a second resource: a non-empty parameter whose name ends in "Id"
// (AIP-133's {resource}Id: instanceId, clusterId; AIP-155's requestId).
bool names_its_resource(std::string_view target);

// One operation followed to its end. Not copyable; everything it is given must outlive it.
// Its Client and the name, poll target and message are fixed storage inside it.
class Operation {
 public:
  Operation(https::Connector& connector, const RetryContext& context,
            const OperationOptions& options);
  // A temporary context would dangle.
  Operation(https::Connector& connector, RetryContext&& context,
            const OperationOptions& options) = delete;
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  // Prepares the mutation; kInvalidArgument (a bad request or poll prefix, no wall clock, no
  // operation buffer) or kBufferTooSmall. The spec's views must outlive the operation.
  [[nodiscard]] https::Status start(const OperationSpec& spec);
  // Advances at `now` (monotonic), doing bounded work; the answer means what a Client's does.
  [[nodiscard]] https::ClientNext step(Millis now);
  // Ends with kCancelled and closes the connection.
  void cancel();
  // The result; meaningful after step() answered kDone.
  const OperationResult& result() const { return result_; }
  // The operation's name once the mutation's answer was read ("" before).
  std::string_view name() const { return std::string_view(name_, name_size_); }
  // What is under way.
  OperationPhase phase() const { return phase_; }
  // Polls sent so far.
  std::uint32_t polls() const { return polls_; }
  // When the next poll is due (meaningful in kWaiting).
  Millis next_poll() const { return wake_; }
  // The client the requests run on (connections(), resumed(), response_header()).
  const https::Client& client() const { return client_; }
  // Connectivity has returned: shortens the current request's backoff (not a polling wait).
  void network_available(Millis now) { client_.network_available(now); }

 private:
  static https::ClientOptions client_options(const OperationOptions& options, Operation* self);
  static bool write_answer(void* self, std::uint64_t offset, https::ConstBytes data);
  static bool restart_answer(void* self);

  // What a phase handler decided: hand `next` to the loop (yield), or go on at once; either
  // way the phase becomes `phase`. step() is the only place that writes phase_.
  struct Step {
    bool yield = false;
    https::ClientNext next;
    OperationPhase phase = OperationPhase::kIdle;
  };
  static Step yield(https::ClientNext next, OperationPhase phase) {
    return Step{true, next, phase};
  }
  static Step go(OperationPhase phase) { return Step{false, https::ClientNext{}, phase}; }

  // The phase handlers: the wait before a poll, and the mutation's or a poll's exchange.
  Step on_waiting(Millis now);
  Step on_request(Millis now);
  Step on_answer(Millis now);
  Step read_operation_answer(Millis now);
  Step schedule_poll(Millis now);
  Step begin_poll(Millis now);
  // Ends the operation; `ended` is the request that ended it (result().phase).
  Step finish(Millis now, OperationOutcome outcome, const char* message, OperationPhase ended);
  void take_error_body();
  void take_status_message(std::string_view raw);
  void emit(const OperationEvent& event) const;

  const RetryContext& context_;
  OperationOptions options_;
  https::Client client_;
  OperationSpec spec_;
  https::RequestSpec poll_;
  std::size_t answer_size_ = 0;   // Bytes of the latest answer in operation_buffer.
  bool answer_overflow_ = false;  // The latest answer did not fit.
  char name_[kMaxOperationName] = {};
  std::size_t name_size_ = 0;
  char target_[kMaxPollPrefix + kMaxOperationName] = {};
  std::size_t target_size_ = 0;
  char message_[kMaxStatusMessage] = {};
  Millis answered_{};                // When the mutation's answer was read.
  Millis deadline_ = Millis::max();  // The polling deadline.
  Millis wake_{};                    // When the next poll is due.
  Millis previous_wait_{};
  std::uint32_t polls_ = 0;
  OperationResult result_;
  OperationPhase phase_ = OperationPhase::kIdle;
};

}  // namespace stepback::transfer

#endif  // STEPBACK_TRANSFER_OPERATION_HPP_

// Upload: Google's resumable upload protocol (Cloud Storage JSON API, Firebase Storage and
// other Google APIs), step-driven from the application's main loop and allocation-free.
//
// One session: a POST to the initiation URL opens it (the session URI is the response's
// Location); the body goes in chunks, each a PUT with "Content-Range: bytes a-b/N"; a 308
// answer says how much the server holds ("Range: bytes=0-K": K+1 bytes, no Range: none);
// after any failure an empty PUT with "Content-Range: bytes */N" asks what it holds, and
// sending goes on from there. The final 200 or 201 carries the object's metadata.
//
// Each HTTP exchange is one request of one https::Client that never retries by itself; the
// retrying is the session's: one RetryMachine decides every wait, and progress (the
// committed offset moved) starts its backoff, retry count and deadline over, as
// google-cloud-cpp does, so a long upload over a flaky network is bounded by how long it
// goes without progress rather than by its length.
#ifndef STEPBACK_TRANSFER_UPLOAD_HPP_
#define STEPBACK_TRANSFER_UPLOAD_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/core/attempt.hpp"
#include "stepback/core/defer.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/progress.hpp"
#include "stepback/core/rate_limit.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/core/timeouts.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/connector.hpp"
#include "stepback/https/integrity/integrity.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/types.hpp"
#include "stepback/transfer/detail/upload_digests.hpp"
#include "stepback/transfer/state.hpp"

namespace stepback::transfer {
namespace detail {
struct Verdict;  // resumable_protocol.hpp: what an answer means for the session.
}  // namespace detail

// Every chunk but the last is a multiple of this many bytes (the protocol's rule).
inline constexpr std::uint64_t kChunkGranularity = std::uint64_t{256} * 1024;
// The most caller headers one upload sends with each request.
inline constexpr std::size_t kMaxUploadHeaders = 32;

// What the upload needs from the main loop next: the Client's vocabulary.
using UploadNext = https::ClientNext;

// Where a known session's retry loop stood when it was saved (TransferState::retries and
// remaining_wait()): the next attempt counts as that retry (its backoff and the retry limit
// go on from there) and waits `wait` first.
struct UploadResume {
  std::uint32_t retries = 0;
  Millis wait{};
  // The CRC-32C of the body's first `crc32c_length` bytes (TransferState::crc32c and
  // ::committed), saving a second read of them before the final chunk; nullopt: they are
  // read again.
  std::optional<std::uint32_t> crc32c;
  std::uint64_t crc32c_length = 0;
};

// What one upload sends; every view and the body source must outlive the upload's use of it
// (until it is done or started again).
struct UploadSpec {
  // The initiation URL (e.g. https://storage.googleapis.com/upload/storage/v1/b/B/o
  // ?uploadType=resumable&name=N); unused when `session` is set.
  https::Url url;
  // A session URI to continue (from an earlier run) instead of opening one; its first
  // exchange asks the server what it holds. Empty: open a new session.
  std::string_view session;
  // The body: read(context, offset, out) from any offset, any number of times. With
  // `size_final` false, body.size is what can be read so far (see Upload::extend()).
  https::BodySource body;
  // Whether body.size is the body's whole length. False: a body still being produced (a
  // recording, a log): whole chunks go as they become available with
  // "Content-Range: bytes a-b/*" (the session POST has no X-Upload-Content-Length), and
  // the length is declared with the chunk or empty PUT after Upload::extend(n, true).
  bool size_final = true;
  // Bytes per chunk: a positive multiple of kChunkGranularity (the last chunk is what is
  // left). Larger chunks mean fewer requests and more to send again after a failure.
  std::uint64_t chunk_size = std::uint64_t{8} * 1024 * 1024;
  // X-Upload-Content-Type of the session POST ("" to omit it).
  std::string_view content_type;
  // The session POST's body, the object's metadata as JSON (sent with Content-Type
  // application/json; charset=UTF-8); empty: none.
  https::ConstBytes metadata;
  // Fields sent with every request (Authorization, ...), at most kMaxUploadHeaders; the
  // upload adds X-Upload-Content-Length and -Type and Content-Range itself.
  const https::Header* headers = nullptr;
  std::size_t header_count = 0;
  std::string_view user_agent;
  // Whether the session POST may be re-sent after it may have reached the server (the
  // Client's rule; a repeated POST at worst leaves an unused session behind). Chunk PUTs
  // and status queries to the session URI are always safe to repeat.
  https::RequestSpec::Idempotency idempotency = https::RequestSpec::Idempotency::kByMethod;
  // How many times an expired session (404 or 410 on the session URI) may be replaced by a
  // new one, sending the whole body again; 0: expiry ends the upload.
  std::uint32_t session_restarts = 0;
  // With `session`: where its retry loop stood (from a saved TransferState).
  UploadResume resume;
  // Integrity: the final chunk carries "x-goog-hash: crc32c=...[,md5=...]" of the whole
  // body, so that the server refuses to store an object whose bytes differ from it, and the
  // digests the server returns for the stored object (its x-goog-hash field, or crc32c and
  // md5Hash in the metadata JSON) are checked against the body's; a difference ends the
  // upload with Status::kIntegrity. The CRC-32C is `crc32c` when the caller knows it, else
  // computed as the body is read (`compute_crc32c`; the bytes of the last chunk, and after a
  // restore without a saved CRC everything before it, are read once more to compute it
  // before the last chunk goes). The MD5 only when the caller gives it (16 bytes).
  bool compute_crc32c = true;
  std::optional<std::uint32_t> crc32c;
  const std::uint8_t* md5 = nullptr;
};

// Something that happened, for progress meters and traces.
struct UploadEvent {
  enum class Kind : std::uint8_t {
    kSession,    // A session POST begins.
    kChunk,      // A chunk PUT begins: bytes [offset, offset + size).
    kQuery,      // A status query begins (after a failure, or to continue a known session).
    kResponse,   // A response head arrived: status, reason.
    kError,      // An exchange failed: failure, message.
    kCommitted,  // The server holds `offset` bytes (from a 308, or all of them at the end).
    kWait,       // A backoff wait of `wait` begins, for `wait_reason`.
    kExpired,    // The session expired (404/410); `offset`: what it held.
    kProgress,   // Body bytes sent: `offset` (of the body, sent, not yet all committed),
                 // `size` (the body's, when final; else 0), `rate` (bytes a second lately).
    kDone,       // The upload ended with `outcome`.
  };
  Kind kind = Kind::kSession;
  Millis at{};                 // Monotonic time of the event.
  std::uint32_t exchange = 0;  // 1-based number of the exchange it belongs to.
  // Retries since the last progress (kWait: the retry number of the attempt after it).
  std::uint32_t retry = 0;
  std::uint64_t offset = 0;          // kChunk: first byte; kCommitted: bytes the server holds.
  std::uint64_t size = 0;            // kChunk: its bytes.
  std::uint16_t status = 0;          // kResponse, kDone: the HTTP status.
  std::string_view reason;           // kResponse: the reason phrase.
  Failure failure = Failure::kNone;  // kError: the failure kind.
  const char* message = "";          // kError, kDone: what failed, in words ("" on success).
  Millis wait{};                     // kWait: its length.
  WaitReason wait_reason = WaitReason::kBackoff;  // kWait: why that long.
  Outcome outcome = Outcome::kSuccess;            // kDone.
  std::uint64_t rate = 0;                         // kProgress.
};

// Receives events; called synchronously from step().
struct UploadEventSink {
  void (*on_event)(void* context, const UploadEvent& event) = nullptr;
  void* context = nullptr;
};

// How an upload ended, valid once step() answered kDone.
struct UploadResult {
  Outcome outcome = Outcome::kCancelled;     // Why the session's retry loop ended.
  std::uint16_t status = 0;                  // The last HTTP status, 0 if none arrived.
  https::Status error = https::Status::kOk;  // The last exchange's failure, or why it stopped.
  bool session_expired = false;              // Ended because the session URI answered 404/410.
  // The body's digests against those the server returned for the stored object (kMatch,
  // kMismatch: error kIntegrity) or kNoExpectation when it returned none or the upload did
  // not finish.
  https::IntegrityResult integrity;
  std::uint32_t exchanges = 0;
  // Words on the last failure ("" if none); valid until the next start() or the upload's end.
  const char* message = "";
};

// Caller-owned memory and settings of one upload.
struct UploadOptions {
  Timeouts timeouts;
  https::ClientBuffers buffers;  // The Client's buffers (see https::ClientBuffers).
  // Holds the session URI (Location of the session POST, or UploadSpec::session); 1-2 KiB
  // fits Google's.
  https::MutableBytes session_uri;
  // Where the final response's body (the object's metadata) goes; restart() is called if a
  // later exchange delivers it again.
  https::ResponseSink metadata;
  std::uint64_t metadata_limit =
      std::uint64_t{64} * 1024;  // Most body bytes one response may carry.
  UploadEventSink events;
  Millis (*wall_now)() = nullptr;  // The wall clock, for HTTP-date Retry-After. Required.
  // The most bytes a second sent (curl's --limit-rate), chunks and heads alike, across every
  // exchange of the session; 0: no limit. A token bucket of an eighth of a second
  // (default_burst()), empty at the start, paces the sends: step() answers kWaitUntil while
  // it is empty.
  std::uint64_t max_rate = 0;
  // How often kProgress events come while a chunk goes out: 64 KiB and 250 ms apart (both)
  // by default, across the session's exchanges; see ProgressPolicy.
  ProgressPolicy progress;
  // Which networks the upload may use (all, by default); see network_changed().
  https::NetworkPolicy network;
  // When an upload whose retries ran out on a retryable failure, with its session open, runs
  // again (UploadSpec::session): run_hint() then answers kDeferred (delay 0, the default:
  // kDone, the give-up is final).
  DeferPolicy defer;
};

// One resumable upload. Not copyable; everything it is given must outlive it.
class Upload {
 public:
  // An upload whose exchanges go through `connector`, retried per `context` (policy,
  // randomness, budget): a retryable failure waits per the policy and then asks the server
  // what it holds. The policy's total deadline and retry limit count from the last progress.
  Upload(https::Connector& connector, const RetryContext& context, const UploadOptions& options);
  // A temporary context would dangle.
  Upload(https::Connector& connector, RetryContext&& context,
         const UploadOptions& options) = delete;
  Upload(const Upload&) = delete;
  Upload& operator=(const Upload&) = delete;

  // Prepares `spec` (ending any upload under way); kInvalidArgument (chunk size, headers,
  // session URI, no wall clock) or kBufferTooSmall (the session URI does not fit) on
  // failure, after which the upload is done and step() answers kDone.
  [[nodiscard]] https::Status start(const UploadSpec& spec);
  // Advances the upload at `now` (monotonic), doing bounded work.
  [[nodiscard]] UploadNext step(Millis now);
  // Ends the upload with Outcome::kCancelled; the session stays open on the server.
  void cancel();
  // Stops the upload at `now`, keeping its session: an exchange under way is given up (its
  // connection closed) and step() answers kWaitUntil(Millis::max()) until resume(). save()
  // still describes it, so the process may also end here and a later one go on. No effect
  // once done or paused.
  void pause(Millis now);
  // Goes on with a paused upload at `now`: the server is asked what it holds (unless nothing
  // was under way) and sending goes on from there, after what is left of a backoff wait the
  // pause cut into. The pause was the app's wait, not the server's: the retry loop starts
  // over, as after progress. No effect when not paused.
  void resume(Millis now);
  // Whether the upload is paused.
  bool paused() const { return phase_ == Phase::kPaused; }
  // A body of unknown size (UploadSpec::size_final false) grew: `available` bytes can now be
  // read, and `final` says that is all of it. Call step() after it. kInvalidArgument (and
  // nothing changes) if `available` is below what was available before, or the size was
  // already final and differs.
  [[nodiscard]] https::Status extend(std::uint64_t available, bool final);
  // Connectivity has returned or the network changed: the exchange's Client drops what
  // belongs to the old network (https::Client::network_available) and a backoff wait shrinks.
  void network_available(Millis now) {
    client_.network_available(now);
    machine_.network_available(now);
  }
  // The device's network changed (https::Client::network_changed): a chunk or status query
  // under way on the old network is abandoned and the upload asks the server what it holds
  // over the new one (a status query), neither a retry nor a failure; the session POST goes
  // again as the Client's idempotency rule allows. On a network UploadOptions::network
  // refuses, or none, the upload waits for one (Timeouts::offline), spending no retry.
  void network_changed(Millis now, const https::NetworkInfo& network);
  // The upload's RunHint (https/client.hpp) after step() answered `next`: kPaused while
  // paused or waiting for extend(), kDeferred once done when UploadOptions::defer deferred it
  // (run_at drawn once, when it ended), the network its NetworkPolicy needs for the body's
  // size, and the bytes the server does not hold yet (when the size is final).
  https::RunHint run_hint(const UploadNext& next) const;
  // When the upload runs again (its run_hint()'s run_at) if it ended deferred, else nullopt.
  std::optional<Millis> deferred_until() const { return deferred_until_; }

  // The result; meaningful after step() answered kDone.
  const UploadResult& result() const { return result_; }
  // The session URI ("" before one is known): keep it to continue the upload later.
  std::string_view session_uri() const { return std::string_view(session_text_, session_size_); }
  // Bytes the server has said it holds.
  std::uint64_t committed() const { return committed_; }
  // Fills the upload's part of `state` at `now` (monotonic) and `wall_now` (ms since the
  // Unix epoch): kind, session URI, sizes, committed offset, retries and the wait under way.
  // The caller adds the URL. False when there is no session yet or its URI does not fit,
  // and for a body whose size is not final (the record has no field for it yet).
  // Meaningful between steps; save after each committed chunk and before each wait.
  bool save(TransferState* state, Millis now, Millis wall_now) const;
  // Body bytes handed to the connection, every chunk and every repeat counted: the cost of
  // the upload, to compare with the body's size.
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  // Sessions opened by this upload (0 when it continued a known one).
  std::uint32_t sessions() const { return sessions_; }
  // The Client of the exchanges (connections(), resumed()).
  const https::Client& client() const { return client_; }

 private:
  // kIdle/kMachine: ask the machine; kNext: begin the next exchange of the same attempt;
  // kExchange: step the Client.
  // kResumeWait: the wait of a restored session, before the machine's first step.
  // kHash: read the body's unhashed bytes before the last chunk (its x-goog-hash).
  // kStarved: a body of unknown size has less than a chunk ready; extend() goes on.
  // kPaused: pause() stopped it; resume() goes on in paused_from_.
  enum class Phase : std::uint8_t {
    kIdle,
    kResumeWait,
    kMachine,
    kNext,
    kHash,
    kStarved,
    kExchange,
    kPaused,
    kDone
  };
  enum class Exchange : std::uint8_t { kNone, kOpen, kChunk, kQuery };

  // What a phase handler decided: hand `next` to the loop (yield), or go on at once; either
  // way the phase becomes `phase`. step() is the only place that writes phase_.
  struct Step {
    bool yield = false;
    UploadNext next;
    Phase phase = Phase::kIdle;
  };
  static Step yield(UploadNext next, Phase phase) { return Step{true, next, phase}; }
  static Step go(Phase phase) { return Step{false, UploadNext{}, phase}; }

  // The phase handlers.
  Step on_idle(Millis now);
  Step on_resume_wait(Millis now);
  Step on_machine(Millis now);
  Step begin_exchange(Millis now);
  Step on_exchange(Millis now);
  // What the exchange that ended means for the session.
  Step end_exchange(Millis now);
  Step on_open(Millis now, std::string_view location);
  Step on_finished(Millis now);
  Step on_held(Millis now, const detail::Verdict& verdict);
  Step on_expired(Millis now);
  Step progress(Millis now);
  Step fail(Millis now, const AttemptResult& attempt, bool query_next);
  Step finish(Millis now, Outcome outcome, https::Status error, const char* message);
  // Hands the loop its turn, then goes on in `phase`.
  Step turn(Millis now, Phase phase);
  void write_upload_length();
  Step hash_ahead(Millis now);
  Step check_integrity(Millis now, Outcome outcome);
  bool store_session(std::string_view uri);
  void fresh_machine();
  void resume(const UploadResume& resume);
  void emit(const UploadEvent& event) const;
  UploadEvent event(UploadEvent::Kind kind, Millis at) const;

  static std::size_t read_chunk(void* self, std::uint64_t offset, https::MutableBytes out);
  static bool write_metadata(void* self, std::uint64_t offset, https::ConstBytes data);
  static void on_client_event(void* self, const https::ClientEvent& event);

  const RetryContext& context_;
  RateLimiter rate_;     // options.max_rate: the Client's send_limit.
  ProgressMeter meter_;  // Paces kProgress over the body's offset, across exchanges.
  bool meter_started_ = false;
  // The session's machine's policy: the caller's, except right after a restore, when the
  // backoff and retry limit go on from the restored retry count until the next progress.
  Policy session_policy_;
  RetryContext session_context_;
  UploadOptions options_;
  // The Client's own policy: the session's, with no retries (an exchange is one attempt)
  // and no budget (the session's machine spends it).
  Policy exchange_policy_;
  RetryContext exchange_context_;
  https::Client client_;
  RetryMachine machine_;
  UploadSpec spec_;
  https::Header headers_[kMaxUploadHeaders + 3];
  char content_range_[64] = {};
  // The body's digests, and those the server returned for the stored object (its
  // x-goog-hash field, the metadata JSON's as it streams to its sink).
  detail::UploadDigests digests_;
  char upload_length_[24] = {};
  char* session_text_ = nullptr;  // options_.session_uri as text.
  std::size_t session_size_ = 0;
  https::Url session_url_;
  std::uint64_t committed_ = 0;
  std::uint64_t chunk_begin_ = 0;  // The chunk under way: [chunk_begin_, chunk_end_).
  std::uint64_t chunk_end_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t metadata_delivered_ = 0;
  UploadResult result_;
  std::uint32_t sessions_ = 0;
  std::uint32_t restarts_left_ = 0;
  std::uint32_t retry_offset_ = 0;     // Retries made before a restore, until the next progress.
  Millis resume_wait_{};               // The restored wait, served at the first step.
  Millis wait_until_{};                // The end of the wait under way (kMachine, kResumeWait).
  bool machine_waiting_ = false;       // The machine is in a backoff wait.
  std::uint16_t response_status_ = 0;  // Of the exchange under way, once its head arrived.
  Phase phase_ = Phase::kIdle;
  Phase paused_from_ = Phase::kIdle;      // Where resume() goes on (kPaused).
  Millis paused_wait_end_{};              // The end of the wait a pause cut into (0: none).
  std::optional<Millis> deferred_until_;  // The end of the deferral, once done deferred.
  Exchange exchange_ = Exchange::kNone;
  bool need_query_ = false;       // The next exchange asks what the server holds.
  bool switched_ = false;         // network_changed() abandoned the exchange under way.
  bool metadata_failed_ = false;  // The metadata sink refused a write or a restart.
  bool metadata_refused_restart_ = false;
};

}  // namespace stepback::transfer

#endif  // STEPBACK_TRANSFER_UPLOAD_HPP_

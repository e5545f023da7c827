// Download: one GET whose position outlives the process, step-driven from the application's
// main loop and allocation-free.
//
// The https::Client does the work of one request (retries, a cut body resumed with Range and
// If-Range, redirects, integrity over every byte); the Download adds what spans processes: a
// checkpoint (TransferState: URL, final URL, validator, generation, total, bytes delivered,
// the running CRC-32C and MD5, the retry wait under way) handed to the application when the
// CheckpointPolicy says one is due, and a start from such a record that asks only for the
// bytes after it. The application keeps the bytes and the record (a file and a record written
// atomically beside it, flash, NVS); it makes the delivered bytes durable before it stores a
// record that counts them.
#ifndef STEPBACK_TRANSFER_DOWNLOAD_HPP_
#define STEPBACK_TRANSFER_DOWNLOAD_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/core/checkpoint.hpp"
#include "stepback/core/defer.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/rate_limit.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/core/timeouts.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/connector.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/transfer/state.hpp"

namespace stepback::transfer {

// What the download needs from the main loop next: the Client's vocabulary.
using DownloadNext = https::ClientNext;

// What one download fetches; every view must outlive the download's use of it.
struct DownloadSpec {
  https::Url url;
  std::string_view url_text;               // The URL as given (kept in the checkpoint).
  const https::Header* headers = nullptr;  // Extra request fields (Authorization, ...).
  std::size_t header_count = 0;
  std::string_view user_agent;
  std::string_view host;  // The Host value; empty: the URL's.
  // A record saved by an earlier download of the same URL whose first `delivered` bytes the
  // sink holds; null: from byte 0. Its retry wait under way is waited out first (the earlier
  // of the time that was left and its wall-clock end, see remaining_wait()).
  const TransferState* resume = nullptr;
  // A pre-signed URL the app replaces when it expires (ClientOptions::url_refresh): the
  // record may name another URL than url_text, since each signing differs; the bytes are
  // still pinned to the object by its validator, generation and length.
  bool url_may_change = false;
};

// What the bytes a sink kept say against the record that counts them (check_kept_bytes()).
enum class KeptBytes : std::uint8_t {
  kUnchecked,   // The record carries no digest of them (none was announced): nothing was read.
  kIntact,      // They hash to the record's running digests: a check at the end covers them.
  kDamaged,     // They do not: they changed on the storage after they were written.
  kUnreadable,  // Fewer than the record's `delivered` bytes could be read.
};

// "unchecked", "intact", "damaged", "unreadable".
const char* to_string(KeptBytes k);

// Reads back the first state.delivered bytes the sink kept, through `kept` (read(context,
// offset, out), as a request body is read; its size is not used), in pieces of `scratch`,
// and hashes them again (CRC-32C, and MD5 when the record runs one), so that "integrity
// verified" at the end is said of the bytes on the storage, not of those once written: a
// flipped bit in a part file below its checkpoint is kDamaged, and the app starts over
// (Download::start without the record) rather than finish a file that differs. Reads every
// kept byte when the record carries a digest; costs nothing (kUnchecked) when it does not.
// Allocation-free; a null read or an empty scratch is kUnreadable.
KeptBytes check_kept_bytes(const TransferState& state, const https::BodySource& kept,
                           https::MutableBytes scratch);

// Receives a due checkpoint, synchronously from step(): make the sink's first
// state.delivered bytes durable (fflush and fsync a file), then store the record (write,
// fsync, rename). Return false when that failed; the download goes on and tries again at the
// next one.
struct CheckpointSink {
  bool (*save)(void* context, const TransferState& state) = nullptr;
  void* context = nullptr;
};

// Everything a Download is configured with besides its connector and retry context.
struct DownloadOptions {
  https::ClientOptions client;  // Buffers, body sink, events, wall clock, credentials, limits.
  CheckpointPolicy checkpoint;
  CheckpointSink checkpoints;  // None: no checkpoints are made.
  // The most bytes a second the response is received at (curl's --limit-rate); 0: no limit
  // (or client.receive_limit, a bucket the app shares between transfers). A token bucket of
  // an eighth of a second (default_burst()), empty at the start, paces the receives: step()
  // answers kWaitUntil while it is empty, and the unread bytes hold the server back.
  std::uint64_t max_rate = 0;
  // Fetches the representation as successive ranged requests of this many bytes (the last
  // may be shorter) on one kept-alive connection, each a finished 206 the next continues
  // (https::Client::continue_body): the same sink, validator, generation and integrity check,
  // so a device whose TLS input buffer holds a few KiB is never sent a larger response, and
  // nothing is spliced. Each piece has its own retries; the events of the pieces after the
  // first say only what went wrong (their first attempt, 206 and done are not passed on).
  // A server that ignores ranges sends the whole body in one 200. 0: one request.
  std::uint64_t range_size = 0;
  // When a download whose retries ran out on a retryable failure runs again, if the record
  // the app holds (the last checkpoint stored, or the one it started from) counts bytes:
  // run_hint() then answers kDeferred (delay 0, the default: kDone, the give-up is final).
  DeferPolicy defer;
};

// One download. Not copyable; everything it is given must outlive it.
class Download {
 public:
  // A download whose request goes through `connector`, retried per `context`.
  Download(https::Connector& connector, const RetryContext& context,
           const DownloadOptions& options);
  // A temporary context would dangle.
  Download(https::Connector& connector, RetryContext&& context,
           const DownloadOptions& options) = delete;
  Download(const Download&) = delete;
  Download& operator=(const Download&) = delete;

  // Prepares `spec`. kInvalidArgument for a bad request, or a resume record that is not a
  // download of this URL or cannot be taken up (see https::Client::start); the message()
  // says which.
  [[nodiscard]] https::Status start(const DownloadSpec& spec);
  // Advances the download at `now` (monotonic), doing bounded work (and a checkpoint when one
  // is due).
  [[nodiscard]] DownloadNext step(Millis now);
  // Ends the download with Outcome::kCancelled after a last checkpoint (a Ctrl-C, an app
  // going to the background for good).
  void cancel(Millis now);
  // See https::Client::network_available.
  void network_available(Millis now) { client_.network_available(now); }
  // The device's network changed (https::Client::network_changed): a body under way on the
  // old network goes on by Range over the new one at once, uncounted; on a network the
  // download may not use (DownloadOptions::client.network: metered, roaming) or none, it
  // waits for one, with a checkpoint first, spending no retry.
  void network_changed(Millis now, const https::NetworkInfo& network) {
    client_.network_changed(now, network);
  }
  // Stops the download at `now` (the user paused it, the app lost its turn): the connection
  // is closed and the checkpoint sink gets a checkpoint, so the process may also end here
  // and a later one go on from it. Until resume(), step() answers
  // kWaitUntil(Millis::max()). No effect once done or paused.
  void pause(Millis now);
  // Goes on with a paused download at `now`: a new request asks for the bytes after those
  // the sink holds (Range and If-Range on the validator, the integrity check carried on), as
  // a start from a checkpoint would, after what is left of a backoff wait the pause cut into.
  // The retry loop starts afresh, as in a new process. kOk, also when not paused; otherwise
  // what https::Client::start refused (message() says so; the download stays paused).
  [[nodiscard]] https::Status resume(Millis now);
  // Whether the download is paused.
  bool paused() const { return phase_ == Phase::kPaused; }
  // The download's RunHint (https/client.hpp) after step() answered `next`: kPaused while
  // paused; kDeferred once done when DownloadOptions::defer deferred it (run_at drawn once,
  // when it ended); else the request's (the bytes left of the whole representation, across
  // pieces).
  https::RunHint run_hint(const DownloadNext& next) const;
  // When the download runs again (its run_hint()'s run_at) if it ended deferred, else nullopt.
  std::optional<Millis> deferred_until() const { return deferred_until_; }

  // The result; meaningful after step() answered kDone.
  const https::ClientResult& result() const { return client_.result(); }
  // Words on why start() refused, "" when it did not.
  const char* message() const { return message_; }
  // Fills `state` with where the download stands at `now` (monotonic) and `wall_now` (ms since
  // the Unix epoch); false when the URL does not fit the record.
  bool save(TransferState* state, Millis now, Millis wall_now) const;
  // Bytes of the representation the sink holds (resumed ones included).
  std::uint64_t delivered() const { return client_.delivered(); }
  // Bytes delivered when the download started (from the resume record).
  std::uint64_t resumed_from() const { return resumed_from_; }
  // Requests made for the pieces (DownloadOptions::range_size) so far; 1 without pieces.
  std::uint32_t pieces() const { return pieces_; }
  // Checkpoints handed to the sink, and how many of those it stored.
  std::uint32_t checkpoints() const { return checkpoints_; }
  std::uint32_t checkpoints_stored() const { return stored_; }
  // The request's Client (connections(), refetched(), expected_size(), ...).
  const https::Client& client() const { return client_; }

 private:
  // kIdle: started, not stepped yet. kRestoreWait: what is left of a wait the record or a
  // pause carried, before the request goes on. kRunning: the Client's request, piece after
  // piece. kPaused: pause() stopped it; resume() goes on. kDone: the request ended.
  enum class Phase : std::uint8_t { kIdle, kRestoreWait, kRunning, kPaused, kDone };

  // What a phase handler decided: hand `next` to the loop (yield), or go on at once; either
  // way the phase becomes `phase`. step() is the only place that writes phase_ while stepping.
  struct Step {
    bool yield = false;
    DownloadNext next;
    Phase phase = Phase::kIdle;
  };
  static Step yield(DownloadNext next, Phase phase) { return Step{true, next, phase}; }
  static Step go(Phase phase) { return Step{false, DownloadNext{}, phase}; }

  // The phase handlers.
  Step on_idle(Millis now);
  Step on_restore_wait(Millis now);
  Step on_running(Millis now);
  // Hands the sink a checkpoint at `now`.
  void checkpoint(Millis now);
  bool due(Millis now) const;
  // Where the next piece ends when a request starts at `offset` (UINT64_MAX: no pieces).
  std::uint64_t piece_end(std::uint64_t offset) const;
  // Whether the request just done was a piece with more to follow.
  bool more_pieces() const;
  static void on_client_event(void* self, const https::ClientEvent& event);

  DownloadOptions options_;
  RandomSource& random_;  // The retry context's: draws the deferral's spread.
  https::EventSink app_events_;
  RateLimiter rate_;  // options_.max_rate; the Client's receive_limit when set.
  https::Client client_;
  https::RequestSpec request_;
  std::string_view url_text_;
  const char* message_ = "";
  Phase phase_ = Phase::kIdle;
  Phase paused_from_ = Phase::kIdle;  // Where pause() stopped it (kPaused).
  std::uint64_t resumed_from_ = 0;
  std::uint64_t saved_delivered_ = 0;  // delivered() at the last checkpoint.
  Millis saved_at_{};                  // When the last checkpoint was made.
  Millis restore_wait_{};              // The record's wait, served from the first step.
  Millis wait_until_{};                // The end of the kRestoreWait wait.
  Millis paused_wait_end_{};           // The end of the wait a pause cut into (0: none).
  // The Client's backoff wait under way, for the checkpoint: the retry number of the attempt
  // after it and when it ends (nullopt: none).
  std::uint32_t retries_ = 0;
  std::optional<Millis> backoff_end_;
  bool wait_checkpoint_due_ = false;  // A wait began: save before sleeping through it.
  bool continuing_ = false;           // A piece after the first is on its first attempt.
  // What resume() pins the rest to, copied out of the Client that start() overwrites.
  char resume_validator_[kMaxStateValidator] = {};
  char resume_generation_[kMaxStateGeneration] = {};
  std::uint32_t checkpoints_ = 0;
  std::uint32_t stored_ = 0;
  std::uint32_t pieces_ = 0;
  // Bytes counted by the record the app holds: the last checkpoint stored, or the one it
  // started from. A give-up is deferred only when it is above 0.
  std::uint64_t record_delivered_ = 0;
  std::optional<Millis> deferred_until_;  // The end of the deferral, once done deferred.
};

}  // namespace stepback::transfer

#endif  // STEPBACK_TRANSFER_DOWNLOAD_HPP_

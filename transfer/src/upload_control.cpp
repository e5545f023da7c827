// What the app does to an Upload between steps: pause and resume, a body that grows, network
// changes, cancel, its RunHint, and the record that outlives the process (save(), and the
// restore of a saved retry loop). The machine that step() runs is in upload.cpp.
#include "stepback/core/backoff.hpp"
#include "stepback/transfer/upload.hpp"

namespace stepback::transfer {

using https::Status;

https::RunHint Upload::run_hint(const UploadNext& next) const {
  https::RunHint hint;
  if (phase_ == Phase::kDone || next.kind == UploadNext::Kind::kDone) {
    if (!deferred_until_) return hint;
    hint.state = https::RunHint::State::kDeferred;
    hint.run_at = *deferred_until_;
  } else if (phase_ == Phase::kExchange) {
    hint = client_.run_hint(next);
  } else if (phase_ == Phase::kPaused || phase_ == Phase::kStarved) {
    hint.state = https::RunHint::State::kPaused;
  } else {
    hint.state = next.kind == UploadNext::Kind::kWaitIo ? https::RunHint::State::kRunning
                                                        : https::RunHint::State::kWaiting;
    hint.run_at = next.at;
  }
  if (spec_.size_final) {
    hint.bytes_left = spec_.body.size > committed_ ? spec_.body.size - committed_ : 0;
  } else {
    hint.bytes_left.reset();
  }
  https::set_network_needs(&hint, options_.network, spec_.size_final ? spec_.body.size : 0);
  return hint;
}

void Upload::network_changed(Millis now, const https::NetworkInfo& network) {
  if (phase_ == Phase::kExchange && exchange_ != Exchange::kOpen) {
    client_.cancel();
    switched_ = true;
  }
  client_.network_changed(now, network);
  if (network.connected && client_.network_usable()) machine_.network_available(now);
}

Status Upload::extend(std::uint64_t available, bool final) {
  if (available < spec_.body.size || (spec_.size_final && available != spec_.body.size)) {
    return Status::kInvalidArgument;
  }
  if (available > 0 && spec_.body.read == nullptr) return Status::kInvalidArgument;
  spec_.body.size = available;
  spec_.size_final = final;
  write_upload_length();
  if (phase_ == Phase::kStarved) {
    // The wait was the caller's, not the server's: the retry loop starts over, as after
    // progress, and the chunk (or the finishing PUT) goes at once.
    fresh_machine();
    phase_ = Phase::kMachine;
  } else if (phase_ == Phase::kPaused && paused_from_ == Phase::kStarved) {
    paused_from_ = Phase::kMachine;  // resume() starts the loop over.
  }
  return Status::kOk;
}

void Upload::pause(Millis now) {
  if (phase_ == Phase::kDone || phase_ == Phase::kPaused) return;
  paused_from_ = phase_;
  paused_wait_end_ = Millis(0);
  const bool backoff = phase_ == Phase::kMachine && machine_waiting_;
  if ((backoff || phase_ == Phase::kResumeWait) && wait_until_ > now) {
    paused_wait_end_ = wait_until_;
  }
  if (phase_ == Phase::kExchange) {
    // What the server kept of the exchange is unknown: resume() asks (a session POST goes
    // again, which at worst leaves an unused session behind).
    client_.cancel();
    need_query_ = session_size_ > 0;
    paused_from_ = Phase::kNext;
  }
  phase_ = Phase::kPaused;
}

void Upload::resume(Millis now) {
  if (phase_ != Phase::kPaused) return;
  switch (paused_from_) {
    case Phase::kIdle:     // Not begun: the first step() begins it.
    case Phase::kHash:     // Reading the body, not talking to the server.
    case Phase::kStarved:  // Waiting for the body, not for the server.
      phase_ = paused_from_;
      return;
    case Phase::kResumeWait:
    case Phase::kMachine:
    case Phase::kNext:
    case Phase::kExchange:
    case Phase::kPaused:
    case Phase::kDone:
      break;
  }
  fresh_machine();
  resume_wait_ = paused_wait_end_ > now ? paused_wait_end_ - now : Millis(0);
  paused_wait_end_ = Millis(0);
  phase_ = Phase::kIdle;  // Serves resume_wait_, then asks the fresh machine.
}

void Upload::cancel() {
  if (phase_ == Phase::kDone) return;
  client_.cancel();
  machine_.cancel();
  deferred_until_.reset();
  result_.outcome = Outcome::kCancelled;
  phase_ = Phase::kDone;
}

void Upload::resume(const UploadResume& resume) {
  resume_wait_ = resume.wait;
  const std::uint32_t r = resume.retries;
  if (r == 0) return;
  // The machine starts at retry 0; its policy starts where retry r would have been: the
  // retries left, and the first wait of the backoff sequence at r.
  const Policy& p = context_.policy;
  retry_offset_ = r;
  session_policy_.max_retries = r < p.max_retries ? p.max_retries - r : 0;
  Millis first = exponential(p, r);
  if (p.total_deadline.count() != 0) first = min(first, p.total_deadline);
  session_policy_.initial_delay = first;
  machine_ = RetryMachine(session_context_, Idempotent::kYes);
}

bool Upload::save(TransferState* state, Millis now, Millis wall_now) const {
  if (!spec_.size_final) return false;
  if (session_size_ == 0 || !state->set_session_uri(session_uri())) return false;
  state->kind = TransferKind::kUpload;
  state->total_size = spec_.body.size;
  state->committed = committed_;
  state->chunk_size = spec_.chunk_size;
  // The CRC-32C of the committed prefix, when the running one ends exactly there.
  state->crc32c = digests_.prefix_crc32c(committed_);
  // A paused upload is described as it stood when paused.
  const Phase phase = phase_ == Phase::kPaused ? paused_from_ : phase_;
  const bool backoff = phase == Phase::kMachine && machine_waiting_;
  const bool waiting = backoff || phase == Phase::kResumeWait;
  // The retry number of the next attempt: one more than the machine's while it waits.
  state->retries = retry_offset_ + machine_.retries() + (backoff ? 1U : 0U);
  state->wait_remaining = waiting ? wait_until_ - now : Millis(0);
  const auto wall = static_cast<std::int64_t>(wall_now.count() & 0x7FFFFFFFFFFFFFFFULL);
  state->saved_wall_ms = wall;
  state->release_wall_ms = wall + static_cast<std::int64_t>(state->wait_remaining.count());
  return true;
}

}  // namespace stepback::transfer

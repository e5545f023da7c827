#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "stepback/app/files.hpp"
#include "stepback/platform/clock.hpp"

namespace stepback::app {
namespace {

// Writes `a` then `b` into out[0, kMaxPath); false when they do not fit.
bool join(char (&out)[kMaxPath], const char* a, const char* b) {
  const int n = std::snprintf(out, sizeof out, "%s%s", a, b);
  return n >= 0 && static_cast<std::size_t>(n) < sizeof out;
}

}  // namespace

DownloadFiles::Open DownloadFiles::open(const char* path, std::string_view url,
                                        const char* state_path, bool url_may_change) {
  (void)part_.close();
  message_[0] = '\0';
  resumed_ = false;
  stored_delivered_ = 0;
  stored_ = 0;
  char default_state[kMaxPath];
  if (path == nullptr || path[0] == '\0' || !join(path_, path, "") ||
      !join(part_path_, path, ".part") || !join(default_state, part_path_, ".state")) {
    return refuse("the output's path is empty or too long");
  }
  if (!state_.set_path(state_path != nullptr ? state_path : default_state)) {
    return refuse(state_.message());
  }
  const Open taken = take_up(url, url_may_change);
  if (taken != Open::kRefused) load_tls_session(url);
  if (taken == Open::kRefused || taken == Open::kResumed) return taken;
  // No record, or one whose part cannot be used: from byte 0.
  if (!part_.open(part_path_, true)) return refuse(part_.message());
  return taken;
}

// Loads the record and opens the part it counts, cut back to it and read back against it.
DownloadFiles::Open DownloadFiles::take_up(std::string_view url, bool url_may_change) {
  switch (state_.load(&record_)) {
    case StateFile::Load::kRefused:
      return refuse(state_.message());
    case StateFile::Load::kAbsent:
      return Open::kFresh;
    case StateFile::Load::kLoaded:
      break;
  }
  if (record_.kind != transfer::TransferKind::kDownload) {
    std::snprintf(message_, sizeof message_,
                  "the state file '%s' is not a download's; remove it (and '%s') or pick another",
                  state_.path(), part_path_);
    return Open::kRefused;
  }
  if (!url_may_change && record_.url() != url) {
    std::snprintf(message_, sizeof message_,
                  "the state file '%s' is for another URL (%.*s); remove it (and '%s') or pick "
                  "another",
                  state_.path(), static_cast<int>(record_.url().size()), record_.url().data(),
                  part_path_);
    return Open::kRefused;
  }
  const std::uint64_t count = record_.delivered;
  if (!part_.open(part_path_, false) || part_.size() < record_.delivered) {
    (void)part_.close();
    std::snprintf(message_, sizeof message_,
                  "'%s' holds fewer bytes than its state file counts (%" PRIu64 "); starting over",
                  part_path_, count);
    return Open::kStartOver;
  }
  // Bytes written after the last checkpoint are not trusted: cut back to it.
  if (!part_.cut(record_.delivered)) {
    (void)part_.close();
    return refuse(part_.message());
  }
  // A digest checked at the end must be of the bytes on the disk: the kept ones are read
  // back and hashed again; a part that changed since its checkpoint starts over.
  const transfer::KeptBytes kept = transfer::check_kept_bytes(
      record_, part_.source(record_.delivered), https::MutableBytes{scratch_, sizeof scratch_});
  if (kept == transfer::KeptBytes::kDamaged || kept == transfer::KeptBytes::kUnreadable) {
    (void)part_.close();
    std::snprintf(message_, sizeof message_,
                  "'%s' %s the %" PRIu64
                  " bytes its state file counts; "
                  "starting over",
                  part_path_,
                  kept == transfer::KeptBytes::kDamaged
                      ? "no longer holds (they hash otherwise than when written)"
                      : "cannot be read back for",
                  count);
    return Open::kStartOver;
  }
  resumed_ = true;
  return Open::kResumed;
}

DownloadFiles::Open DownloadFiles::refuse(const char* message) {
  if (message != message_) std::snprintf(message_, sizeof message_, "%s", message);
  return Open::kRefused;
}

// The record may only count bytes that are on the disk: the data first, then the record.
bool DownloadFiles::save(void* context, const transfer::TransferState& state) {
  auto* files = static_cast<DownloadFiles*>(context);
  if (!files->part_.sync() || !files->state_.store(state)) return false;
  files->stored_delivered_ = state.delivered;
  ++files->stored_;
  files->store_tls_session();
  return true;
}

bool DownloadFiles::finish(bool success) {
  if (success) return commit();
  if (stored_ > 0) return keep();
  discard();
  return true;
}

bool DownloadFiles::commit() {
  const bool synced = part_.sync();
  if (!part_.close() || !synced) {
    std::snprintf(message_, sizeof message_, "%s", part_.message());
    return false;
  }
  if (std::rename(part_path_, path_) != 0) {
    std::snprintf(message_, sizeof message_, "cannot rename '%s' to '%s': %s", part_path_, path_,
                  std::strerror(errno));
    return false;
  }
  if (tls_connector_ != nullptr) (void)tls_session_.remove();
  (void)state_.remove();  // Also makes the rename durable: the same folder is fsync'd.
  return true;
}

bool DownloadFiles::keep() {
  if (part_.close()) return true;
  std::snprintf(message_, sizeof message_, "%s", part_.message());
  return false;
}

void DownloadFiles::discard() {
  (void)part_.close();
  (void)std::remove(part_path_);
  (void)state_.remove();
  if (tls_connector_ != nullptr) (void)tls_session_.remove();
}

void DownloadFiles::keep_tls_session(https::TcpTlsConnector* connector, Millis (*wall_now)()) {
  tls_connector_ = connector;
  wall_now_ = wall_now != nullptr ? wall_now : &platform::wall_now;
}

void DownloadFiles::load_tls_session(std::string_view url) {
  tls_load_ = TlsSessionFile::Load::kAbsent;
  char path[kMaxPath];
  if (tls_connector_ == nullptr || !join(path, path_, ".tls-session") ||
      !tls_session_.set_path(path)) {
    return;
  }
  tls_load_ = tls_session_.load(*tls_connector_, url, wall_now_());
}

// A session that cannot be saved (none yet, a plain http:// download) leaves the file as it was.
void DownloadFiles::store_tls_session() {
  if (tls_connector_ != nullptr && tls_session_.path()[0] != '\0') {
    (void)tls_session_.store(*tls_connector_, wall_now_());
  }
}

}  // namespace stepback::app

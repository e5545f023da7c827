#include "stepback/app/upload_state_file.hpp"

#include <cstdio>
#include <cstring>

#include "stepback/platform/clock.hpp"

namespace stepback::app {

UploadStateFile::UploadStateFile(const char* path, std::string_view url) {
  if (url.size() > sizeof url_) {
    std::snprintf(message_, sizeof message_, "the upload URL is longer than a record keeps (%zu)",
                  sizeof url_);
    return;
  }
  if (!file_.set_path(path)) return;  // message() gives the file's words.
  if (!url.empty()) std::memcpy(url_, url.data(), url.size());
  url_size_ = url.size();
  valid_ = true;
}

StateFile::Load UploadStateFile::load(transfer::TransferState* state) {
  if (!valid_) return StateFile::Load::kRefused;
  const StateFile::Load loaded = file_.load(state);
  if (loaded != StateFile::Load::kLoaded) return loaded;
  // What is on disk needs no second write.
  remember(state->session_uri(), state->committed);
  if (url_size_ == 0 && state->url().size() <= sizeof url_) {
    url_size_ = state->url().size();
    if (url_size_ > 0) std::memcpy(url_, state->url().data(), url_size_);
  }
  return loaded;
}

bool UploadStateFile::maybe_save(const transfer::Upload& upload, Millis now, std::uint32_t waits) {
  const std::string_view uri = upload.session_uri();
  if (uri.empty()) return true;
  const bool same = uri == std::string_view(last_session_, last_session_size_) &&
                    upload.committed() == last_committed_ && waits == last_waits_;
  if (same) return true;
  if (!capture(upload, now) || !file_.store(state_)) return false;
  remember(uri, upload.committed());
  last_waits_ = waits;
  return true;
}

bool UploadStateFile::save_now(const transfer::Upload& upload, Millis now) {
  if (!capture(upload, now) || !file_.store(state_)) return false;
  last_committed_ = upload.committed();
  return true;
}

bool UploadStateFile::save_final(const transfer::Upload& upload, Millis now) {
  if (!capture(upload, now)) return false;
  state_.retries = 0;
  state_.wait_remaining = Millis(0);
  state_.release_wall_ms = state_.saved_wall_ms;
  return file_.store(state_);
}

bool UploadStateFile::capture(const transfer::Upload& upload, Millis now) {
  if (!valid_) return false;  // message_ says why (the constructor wrote it).
  message_[0] = '\0';
  if (upload.save(&state_, now, platform::wall_now()) && state_.set_url(url())) return true;
  std::snprintf(message_, sizeof message_, "the upload's state does not fit a record");
  return false;
}

void UploadStateFile::remember(std::string_view session, std::uint64_t committed) {
  last_session_size_ =
      session.size() < sizeof last_session_ ? session.size() : sizeof last_session_;
  if (last_session_size_ > 0) std::memcpy(last_session_, session.data(), last_session_size_);
  last_committed_ = committed;
}

}  // namespace stepback::app

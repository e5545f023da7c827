#include "stepback/app/upload_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "stepback/platform/clock.hpp"

namespace stepback::app {

UploadFiles::Open UploadFiles::open(const char* path, std::string_view url,
                                    const char* state_path) {
  close();
  state_.reset();
  message_[0] = '\0';
  size_ = 0;
  read_failed_ = false;
  read_error_ = 0;
  resumed_ = false;
  paused_saved_ = false;
  waits_ = 0;
  char default_state[kMaxPath];
  const int n = path == nullptr ? -1 : std::snprintf(path_, sizeof path_, "%s", path);
  const int m = path == nullptr
                    ? -1
                    : std::snprintf(default_state, sizeof default_state, "%s.upload.state", path);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof path_ ||
      (state_path == nullptr && (m < 0 || static_cast<std::size_t>(m) >= sizeof default_state))) {
    return refuse("the file's path is empty or too long");
  }
  fd_ = ::open(path_, O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::snprintf(message_, sizeof message_, "cannot read '%s': %s", path_,
                  fd_ < 0 ? std::strerror(errno) : "not a regular file");
    close();
    return Open::kRefused;
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  state_.emplace(state_path != nullptr ? state_path : default_state, url);
  if (!state_->valid()) return refuse(state_->message());
  return take_up(url);
}

// Loads the record and checks it is this upload's: a session of another body or URL would
// have the server splice two files, or refuse every chunk.
UploadFiles::Open UploadFiles::take_up(std::string_view url) {
  switch (state_->load(&record_)) {
    case StateFile::Load::kRefused:
      return refuse(state_->message());
    case StateFile::Load::kAbsent:
      if (url.empty()) {
        std::snprintf(message_, sizeof message_,
                      "no state file '%s' yet: the first run needs the URL", state_->path());
        return refuse(message_);
      }
      return Open::kFresh;
    case StateFile::Load::kLoaded:
      break;
  }
  if (record_.kind != transfer::TransferKind::kUpload) {
    std::snprintf(message_, sizeof message_,
                  "the state file '%s' is not an upload's; remove it or pick another",
                  state_->path());
  } else if (record_.total_size != size_) {
    std::snprintf(message_, sizeof message_,
                  "the state file '%s' is for a body of %llu bytes, but '%s' has %llu "
                  "(changed?); remove it to start over",
                  state_->path(), static_cast<unsigned long long>(record_.total_size), path_,
                  static_cast<unsigned long long>(size_));
  } else if (!url.empty() && record_.url() != url) {
    std::snprintf(message_, sizeof message_,
                  "the state file '%s' is for another upload URL (%.*s); remove it or pick "
                  "another",
                  state_->path(), static_cast<int>(record_.url().size()), record_.url().data());
  } else {
    resumed_ = true;
    return Open::kResumed;
  }
  return refuse(message_);
}

UploadFiles::Open UploadFiles::refuse(const char* message) {
  if (message != message_) std::snprintf(message_, sizeof message_, "%s", message);
  close();
  return Open::kRefused;
}

void UploadFiles::apply(transfer::UploadSpec* spec) {
  spec->body = body();
  if (!resumed_) return;
  spec->session = record_.session_uri();
  spec->resume.retries = record_.retries;
  spec->resume.wait = transfer::remaining_wait(record_, platform::wall_now());
  spec->resume.crc32c = record_.crc32c;  // Of the first `committed` bytes, when saved.
  spec->resume.crc32c_length = record_.committed;
}

transfer::UploadEventSink UploadFiles::events(transfer::UploadEventSink forward) {
  forward_ = forward;
  return transfer::UploadEventSink{&on_event, this};
}

void UploadFiles::on_event(void* context, const transfer::UploadEvent& event) {
  auto* files = static_cast<UploadFiles*>(context);
  if (event.kind == transfer::UploadEvent::Kind::kWait) ++files->waits_;
  if (files->forward_.on_event != nullptr) files->forward_.on_event(files->forward_.context, event);
}

bool UploadFiles::after_step(const transfer::Upload& upload, Millis now) {
  if (!state_) {
    std::snprintf(message_, sizeof message_, "no upload's files are open");
    return false;
  }
  if (!upload.paused()) {
    paused_saved_ = false;
    return saved(state_->maybe_save(upload, now, waits_));
  }
  if (paused_saved_) return true;
  paused_saved_ = true;
  return saved(state_->save_now(upload, now));
}

bool UploadFiles::finish(const transfer::Upload& upload, Millis now) {
  bool ok = true;
  if (state_ && upload.paused()) {
    ok = paused_saved_ || saved(state_->save_now(upload, now));
  } else if (state_) {
    const transfer::UploadResult& result = upload.result();
    if (result.outcome == Outcome::kSuccess || result.session_expired) {
      (void)state_->remove();
    } else if (!upload.session_uri().empty()) {
      // The retry loop has ended: a later run starts a fresh one, from what the server holds.
      ok = saved(state_->save_final(upload, now));
    }
  }
  close();
  if (ok && read_failed_) {
    std::snprintf(message_, sizeof message_, "cannot read '%s': %s", path_,
                  read_error_ != 0 ? std::strerror(read_error_) : "it shrank while being uploaded");
    return false;
  }
  return ok;
}

bool UploadFiles::saved(bool ok) {
  if (!ok) std::snprintf(message_, sizeof message_, "%s", state_->message());
  return ok;
}

std::size_t UploadFiles::read(void* context, std::uint64_t offset, https::MutableBytes out) {
  auto* files = static_cast<UploadFiles*>(context);
  std::size_t done = 0;
  while (done < out.size) {
    const ssize_t n =
        ::pread(files->fd_, out.data + done, out.size - done, static_cast<off_t>(offset + done));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0) {
      break;  // The file shrank: the Client stops with kBodySource.
    } else if (errno != EINTR) {
      files->read_failed_ = true;
      files->read_error_ = errno;
      return 0;
    }
  }
  if (done < out.size && !files->read_failed_) {
    files->read_failed_ = true;
    files->read_error_ = 0;
  }
  return done;
}

void UploadFiles::close() {
  if (fd_ >= 0) (void)::close(fd_);
  fd_ = -1;
}

}  // namespace stepback::app

#include "state_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "stepback/platform/clock.hpp"

namespace stepback::tools {

StateFile::StateFile(const char* path, std::string_view url, const char* prefix)
    : path_(path), url_(url), prefix_(prefix) {
  tmp_ = std::string(path) + ".tmp";
  const std::string p(path);
  const std::size_t slash = p.rfind('/');
  dir_ = slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
}

StateFile::Load StateFile::load(transfer::TransferState* state, std::string* error) {
  const int fd = ::open(path_, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Load::kAbsent;
    *error = std::string("cannot read the state file '") + path_ + "': " + std::strerror(errno);
    return Load::kRefused;
  }
  std::size_t size = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer_ + size, sizeof buffer_ - size);
    if (n > 0) {
      size += static_cast<std::size_t>(n);
      if (size == sizeof buffer_) break;
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fd);
  const transfer::StateStatus s = transfer::decode_state(https::ConstBytes{buffer_, size}, state);
  if (s != transfer::StateStatus::kOk) {
    *error = std::string("refusing the state file '") + path_ + "': " + transfer::describe(s) +
             "; remove it to start over";
    return Load::kRefused;
  }
  // What is on disk needs no second write.
  const std::string_view uri = state->session_uri();
  last_session_size_ = uri.size() < sizeof last_session_ ? uri.size() : sizeof last_session_;
  std::memcpy(last_session_, uri.data(), last_session_size_);
  last_committed_ = state->committed;
  return Load::kLoaded;
}

void StateFile::maybe_save(const transfer::Upload& upload, Millis now, std::uint32_t waits) {
  const std::string_view uri = upload.session_uri();
  if (uri.empty()) return;
  const bool same = uri == std::string_view(last_session_, last_session_size_) &&
                    upload.committed() == last_committed_ && waits == last_waits_;
  if (same) return;
  if (!upload.save(&state_, now, platform::wall_now()) || !state_.set_url(url_)) return;
  std::size_t n = 0;
  if (transfer::encode_state(state_, https::MutableBytes{buffer_, sizeof buffer_}, &n) !=
      transfer::StateStatus::kOk) {
    return;
  }
  if (!replace(n)) return;
  ++writes_;
  last_session_size_ = uri.size() < sizeof last_session_ ? uri.size() : sizeof last_session_;
  std::memcpy(last_session_, uri.data(), last_session_size_);
  last_committed_ = upload.committed();
  last_waits_ = waits;
}

void StateFile::save_now(const transfer::Upload& upload, Millis now) {
  if (!upload.save(&state_, now, platform::wall_now()) || !state_.set_url(url_)) return;
  if (store(state_)) {
    last_committed_ = upload.committed();
  }
}

void StateFile::save_final(const transfer::Upload& upload, Millis now) {
  if (!upload.save(&state_, now, platform::wall_now()) || !state_.set_url(url_)) return;
  state_.retries = 0;
  state_.wait_remaining = Millis(0);
  state_.release_wall_ms = state_.saved_wall_ms;
  std::size_t n = 0;
  if (transfer::encode_state(state_, https::MutableBytes{buffer_, sizeof buffer_}, &n) ==
          transfer::StateStatus::kOk &&
      replace(n)) {
    ++writes_;
  }
}

bool StateFile::store(const transfer::TransferState& state) {
  std::size_t n = 0;
  if (transfer::encode_state(state, https::MutableBytes{buffer_, sizeof buffer_}, &n) !=
          transfer::StateStatus::kOk ||
      !replace(n)) {
    return false;
  }
  ++writes_;
  return true;
}

void StateFile::remove() {
  if (::unlink(path_) == 0) sync_dir();
}

// Writes buffer_[0, n) to FILE.tmp, flushes it to the disk and renames it over FILE, so
// that FILE is always either the old record or the new one, never a mix or a cut.
bool StateFile::replace(std::size_t n) {
  const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  for (std::size_t done = 0; ok && done < n;) {
    const ssize_t w = ::write(fd, buffer_ + done, n - done);
    if (w > 0) {
      done += static_cast<std::size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      ok = false;
    }
  }
  ok = ok && ::fsync(fd) == 0;
  if (fd >= 0 && ::close(fd) != 0) ok = false;
  ok = ok && ::rename(tmp_.c_str(), path_) == 0;
  if (!ok) {
    if (!warned_) {
      std::fprintf(stderr, "%scannot write the state file '%s': %s; going on without it\n", prefix_,
                   path_, std::strerror(errno));
      warned_ = true;
    }
    (void)::unlink(tmp_.c_str());
    return false;
  }
  sync_dir();
  return true;
}

// Makes a rename or unlink in the folder durable.
void StateFile::sync_dir() {
  const int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  (void)::fsync(dir);
  ::close(dir);
}

}  // namespace stepback::tools

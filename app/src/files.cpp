#include "stepback/app/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "replace_file.hpp"

namespace stepback::app {
namespace {

// Writes `a` then `b` into out[0, kMaxPath); false when they do not fit.
bool join(char (&out)[kMaxPath], const char* a, const char* b = "") {
  const int n = std::snprintf(out, sizeof out, "%s%s", a, b);
  return n >= 0 && static_cast<std::size_t>(n) < sizeof out;
}

// The folder of `path` ("." for a bare name), whose entry a rename changes.
void folder_of(const char* path, char (&out)[kMaxPath]) {
  const char* slash = std::strrchr(path, '/');
  if (slash == nullptr) {
    (void)join(out, ".");
  } else if (slash == path) {
    (void)join(out, "/");
  } else {
    const std::size_t n = static_cast<std::size_t>(slash - path);
    std::memcpy(out, path, n);  // n < strlen(path) < kMaxPath.
    out[n] = '\0';
  }
}

// Makes every byte of `fd` durable: on Apple fsync only hands them to the drive.
bool sync_fd(int fd) {
#if defined(__APPLE__)
  return ::fcntl(fd, F_FULLFSYNC) != -1 || ::fsync(fd) == 0;
#elif defined(__linux__) || defined(__ANDROID__)
  return ::fdatasync(fd) == 0;
#else
  return ::fsync(fd) == 0;
#endif
}

}  // namespace

// ---- StateFile ----

bool StateFile::set_path(const char* path) {
  message_[0] = '\0';
  if (path == nullptr || path[0] == '\0' || !join(path_, path) || !join(tmp_, path, ".tmp")) {
    path_[0] = '\0';
    std::snprintf(message_, sizeof message_, "the state file's path is empty or too long");
    return false;
  }
  folder_of(path_, dir_);
  return true;
}

StateFile::Load StateFile::load(transfer::TransferState* state) {
  message_[0] = '\0';
  const int fd = ::open(path_, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Load::kAbsent;
    std::snprintf(message_, sizeof message_, "cannot read the state file '%s': %s", path_,
                  std::strerror(errno));
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
    std::snprintf(message_, sizeof message_,
                  "refusing the state file '%s': %s; remove it to start over", path_,
                  transfer::describe(s));
    return Load::kRefused;
  }
  return Load::kLoaded;
}

bool StateFile::store(const transfer::TransferState& state) {
  std::size_t n = 0;
  if (transfer::encode_state(state, https::MutableBytes{buffer_, sizeof buffer_}, &n) !=
      transfer::StateStatus::kOk) {
    std::snprintf(message_, sizeof message_, "cannot encode the record for '%s'", path_);
    return false;
  }
  if (!replace(n)) return false;
  ++writes_;
  return true;
}

bool StateFile::remove() {
  if (::unlink(path_) == 0) {
    sync_dir();
    return true;
  }
  return errno == ENOENT;
}

// Writes buffer_[0, n) to PATH.tmp, flushes it to the disk and renames it over PATH.
bool StateFile::replace(std::size_t n) {
  if (!detail::replace_file(tmp_, path_, buffer_, n, /*sync=*/true)) {
    std::snprintf(message_, sizeof message_, "cannot write the state file '%s': %s", path_,
                  std::strerror(errno));
    return false;
  }
  sync_dir();
  return true;
}

// Makes a rename or unlink in the folder durable.
void StateFile::sync_dir() const {
  const int dir = ::open(dir_, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  (void)::fsync(dir);
  ::close(dir);
}

// ---- PartFile ----

bool PartFile::open(const char* path, bool truncate) {
  (void)close();
  failed_ = false;
  error_ = 0;
  message_[0] = '\0';
  if (path == nullptr || !join(path_, path)) {
    path_[0] = '\0';
    std::snprintf(message_, sizeof message_, "the part file's path is empty or too long");
    return false;
  }
  fd_ = ::open(path_, O_RDWR | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
  return fd_ >= 0 || fail("cannot open '%s' for writing: %s");
}

std::uint64_t PartFile::size() const {
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0 || st.st_size < 0) return 0;
  return static_cast<std::uint64_t>(st.st_size);
}

bool PartFile::cut(std::uint64_t size) {
  return ::ftruncate(fd_, static_cast<off_t>(size)) == 0 ||
         fail("cannot cut '%s' back to its checkpoint: %s");
}

bool PartFile::sync() { return sync_fd(fd_) || fail("cannot flush '%s' to the disk: %s"); }

bool PartFile::close() {
  if (fd_ < 0) return !failed_;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && !failed_) {
    failed_ = true;
    error_ = errno;
  }
  if (failed_) {
    std::snprintf(message_, sizeof message_, "cannot write the body to %s: %s", path_,
                  std::strerror(error_));
  }
  return !failed_;
}

https::ResponseSink PartFile::sink() { return https::ResponseSink{&write, &restart, this}; }

https::BodySource PartFile::source(std::uint64_t size) {
  return https::BodySource{&read, this, size};
}

bool PartFile::write(void* context, std::uint64_t offset, https::ConstBytes data) {
  auto* f = static_cast<PartFile*>(context);
  for (std::size_t done = 0; done < data.size;) {
    const ssize_t n =
        ::pwrite(f->fd_, data.data + done, data.size - done, static_cast<off_t>(offset + done));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      f->failed_ = true;
      f->error_ = n < 0 ? errno : ENOSPC;
      return false;
    }
  }
  return true;
}

bool PartFile::restart(void* context) {
  auto* f = static_cast<PartFile*>(context);
  if (::ftruncate(f->fd_, 0) != 0) {
    f->failed_ = true;
    f->error_ = errno;
    return false;
  }
  return true;
}

std::size_t PartFile::read(void* context, std::uint64_t offset, https::MutableBytes out) {
  const auto* f = static_cast<const PartFile*>(context);
  for (;;) {
    const ssize_t n = ::pread(f->fd_, out.data, out.size, static_cast<off_t>(offset));
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) return 0;
  }
}

// Words from `format` (the path, then errno's) into message_; always false.
bool PartFile::fail(const char* format) {
  std::snprintf(message_, sizeof message_, format, path_, std::strerror(errno));
  return false;
}

}  // namespace stepback::app

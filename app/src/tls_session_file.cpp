#include "stepback/app/tls_session_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "replace_file.hpp"
#include "stepback/https/http/url.hpp"

namespace stepback::app {

bool TlsSessionFile::set_path(const char* path) {
  message_[0] = '\0';
  holds_ = false;
  const int n = std::snprintf(path_, sizeof path_, "%s", path == nullptr ? "" : path);
  const int t = std::snprintf(tmp_, sizeof tmp_, "%s.tmp", path_);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof path_ || t < 0 ||
      static_cast<std::size_t>(t) >= sizeof tmp_) {
    path_[0] = '\0';
    std::snprintf(message_, sizeof message_, "the TLS session file's path is empty or too long");
    return false;
  }
  return true;
}

TlsSessionFile::Load TlsSessionFile::load(https::TcpTlsConnector& connector, std::string_view url,
                                          Millis wall_now) {
  message_[0] = '\0';
  holds_ = false;
  https::Url parsed;
  if (path_[0] == '\0' || https::parse_url(url, &parsed) != https::Status::kOk || !parsed.tls) {
    return Load::kAbsent;
  }
  char host[256];
  if (parsed.host.size() >= sizeof host) return Load::kAbsent;
  std::memcpy(host, parsed.host.data(), parsed.host.size());
  host[parsed.host.size()] = '\0';
  const int fd = ::open(path_, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Load::kAbsent;
  std::size_t n = 0;
  while (n < sizeof buffer_) {
    const ssize_t r = ::read(fd, buffer_ + n, sizeof buffer_ - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += static_cast<std::size_t>(r);
  }
  (void)::close(fd);
  const https::TlsSessionRecordError error =
      connector.import_session(https::ConstBytes{buffer_, n}, host, parsed.port, wall_now);
  if (error == https::TlsSessionRecordError::kNone) {
    generation_ = connector.session_generation();
    holds_ = true;
    return Load::kLoaded;
  }
  std::snprintf(message_, sizeof message_, "'%s' not used, removed: %s", path_,
                https::describe(error));
  (void)::unlink(path_);
  return Load::kRefused;
}

bool TlsSessionFile::store(https::TcpTlsConnector& connector, Millis wall_now) {
  connector.refresh_session();
  if (holds_ && generation_ == connector.session_generation()) return true;
  std::size_t n = 0;
  const https::TlsSessionRecordError error =
      connector.export_session(wall_now, https::MutableBytes{buffer_, sizeof buffer_ - 1}, &n);
  if (error != https::TlsSessionRecordError::kNone) {
    std::snprintf(message_, sizeof message_, "'%s' not written: %s", path_, https::describe(error));
    return false;
  }
  if (!replace(n)) return false;
  generation_ = connector.session_generation();
  holds_ = true;
  return true;
}

bool TlsSessionFile::remove() {
  holds_ = false;
  return ::unlink(path_) == 0 || errno == ENOENT;
}

// Written to PATH.tmp (created 0600: only this user may read the secret) and renamed over PATH,
// so PATH is the old record or the new one. Not fsync'd: a record lost or cut by a crash is
// refused by its integrity check and costs one full handshake, not worth a flush per checkpoint.
bool TlsSessionFile::replace(std::size_t n) {
  if (!detail::replace_file(tmp_, path_, buffer_, n, /*sync=*/false)) {
    std::snprintf(message_, sizeof message_, "cannot write the TLS session file '%s': %s", path_,
                  std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace stepback::app

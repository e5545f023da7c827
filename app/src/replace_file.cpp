#include "replace_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace stepback::app::detail {

bool replace_file(const char* tmp, const char* path, const std::uint8_t* data, std::size_t n,
                  bool sync) {
  const int fd = ::open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  bool ok = fd >= 0 && ::fchmod(fd, 0600) == 0;  // A leftover tmp may have other bits.
  for (std::size_t done = 0; ok && done < n;) {
    const ssize_t w = ::write(fd, data + done, n - done);
    if (w > 0) {
      done += static_cast<std::size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      if (w == 0) errno = EIO;
      ok = false;
    }
  }
  ok = ok && (!sync || ::fsync(fd) == 0);
  if (fd >= 0 && ::close(fd) != 0) ok = false;
  ok = ok && ::rename(tmp, path) == 0;
  if (!ok) {
    const int why = errno;
    (void)::unlink(tmp);
    errno = why;
  }
  return ok;
}

}  // namespace stepback::app::detail

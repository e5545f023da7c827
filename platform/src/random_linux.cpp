// OS entropy on Linux: getrandom(2), falling back to /dev/urandom where the system call is
// missing (kernels before 3.17) or blocked by a seccomp filter.
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>

#if __has_include(<sys/random.h>)
#include <sys/random.h>
#define STEPBACK_HAVE_GETRANDOM 1
#endif

#include "entropy.hpp"

namespace stepback::platform::internal {
namespace {

// Reads `size` bytes from /dev/urandom; false on any error.
bool fill_from_urandom(unsigned char* out, std::size_t size) {
  int fd = -1;
  do {
    fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return false;
  while (size > 0) {
    const ssize_t n = read(fd, out, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  close(fd);
  return size == 0;
}

}  // namespace

bool fill_from_os(void* buffer, std::size_t size) {
  auto* out = static_cast<unsigned char*>(buffer);
#ifdef STEPBACK_HAVE_GETRANDOM
  // Flags 0: blocks only until the kernel pool is first initialized early in boot, so a
  // seed is never drawn from an uninitialized pool.
  while (size > 0) {
    const ssize_t n = getrandom(out, size, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // EPERM: some container sandboxes reject unknown system calls that way.
      if (errno == ENOSYS || errno == EPERM) return fill_from_urandom(out, size);
      return false;
    }
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
#else
  return fill_from_urandom(out, size);
#endif
}

}  // namespace stepback::platform::internal

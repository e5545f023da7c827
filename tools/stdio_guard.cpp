#include "stdio_guard.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace stepback::tools {

bool ensure_stdio_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open() returns the lowest free descriptor, which is this one. Read-only for stdout:
    // the user closed it, so a body written there must fail, not vanish.
    const int opened = ::open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
    if (opened != fd) {
      if (opened >= 0) ::close(opened);
      return false;
    }
  }
  return true;
}

void ignore_sigpipe() { (void)std::signal(SIGPIPE, SIG_IGN); }

}  // namespace stepback::tools

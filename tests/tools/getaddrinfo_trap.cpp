// Preloaded into `stepback get` by tests/tools/get_dns_test.py (LD_PRELOAD): any call of the
// system's blocking resolver ends the process with exit code 97 and says so on stderr, so a
// test that passes proves the request never called it.
#include <netdb.h>
#include <unistd.h>

namespace {
[[noreturn]] void trapped(const char* what, unsigned long size) {
  (void)!::write(2, what, size);
  ::_exit(97);
}
}  // namespace

extern "C" int getaddrinfo(const char*, const char*, const addrinfo*, addrinfo**) {
  static const char kWhat[] = "getaddrinfo_trap: getaddrinfo() was called\n";
  trapped(kWhat, sizeof kWhat - 1);
}

extern "C" hostent* gethostbyname(const char*) {
  static const char kWhat[] = "getaddrinfo_trap: gethostbyname() was called\n";
  trapped(kWhat, sizeof kWhat - 1);
}

// `stepback-get`: `stepback get` alone, for footprint-sensitive builds (no demo server,
// no simulator); the same options and exit codes.
#include "client_loop.hpp"
#include "get.hpp"
#include "stdio_guard.hpp"

int main(int argc, char** argv) {
  if (!stepback::tools::ensure_stdio_open()) return stepback::tools::kExitInternal;
  stepback::tools::ignore_sigpipe();
  return stepback::tools::run_get(argc, argv);
}

// OS entropy where libc has arc4random_buf, which never fails: Android (bionic provides it at
// every API level) and macOS / iOS.
#include <stdlib.h>

#include <cstddef>

#include "entropy.hpp"

namespace stepback::platform::internal {

bool fill_from_os(void* buffer, std::size_t size) {
  arc4random_buf(buffer, size);
  return true;
}

}  // namespace stepback::platform::internal

// OS entropy on Android: arc4random_buf, which bionic provides at every API level and
// which never fails.
#include <stdlib.h>

#include <cstddef>

#include "entropy.hpp"

namespace stepback::platform::internal {

bool fill_from_os(void* buffer, std::size_t size) {
  arc4random_buf(buffer, size);
  return true;
}

}  // namespace stepback::platform::internal

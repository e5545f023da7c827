// OS entropy on Windows: BCryptGenRandom with the system-preferred generator (Vista+),
// which needs no algorithm handle.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// windows.h must come first: bcrypt.h uses its types.
#include <bcrypt.h>

#include <cstddef>

#include "entropy.hpp"

namespace stepback::platform::internal {

bool fill_from_os(void* buffer, std::size_t size) {
  auto* out = static_cast<PUCHAR>(buffer);
  // ULONG is 32 bits; callers ask for a few bytes, but the loop keeps any size correct.
  while (size > 0) {
    const ULONG chunk = size > 0x40000000U ? 0x40000000U : static_cast<ULONG>(size);
    const NTSTATUS status = BCryptGenRandom(nullptr, out, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG);
    if (!BCRYPT_SUCCESS(status)) return false;
    out += chunk;
    size -= chunk;
  }
  return true;
}

}  // namespace stepback::platform::internal

// The per-OS entropy primitive behind os_seed(); each random_<os>.cpp defines it.
#ifndef STEPBACK_PLATFORM_SRC_ENTROPY_HPP_
#define STEPBACK_PLATFORM_SRC_ENTROPY_HPP_

#include <cstddef>

namespace stepback::platform::internal {

// Fills all `size` bytes at `buffer` from the OS's cryptographic generator; returns false
// (buffer contents unspecified) if the OS could not supply them.
[[nodiscard]] bool fill_from_os(void* buffer, std::size_t size);

}  // namespace stepback::platform::internal

#endif  // STEPBACK_PLATFORM_SRC_ENTROPY_HPP_

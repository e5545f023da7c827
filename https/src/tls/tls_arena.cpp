#include "stepback/https/tls/tls_arena.hpp"

#include <cstdlib>

#include "mbedtls/build_info.h"
#include "mbedtls/platform.h"
#include "tls/arena_allocator.hpp"

// mbedTLS's allocation can be redirected at run time only when it calls through the platform
// layer's pointers (an installed mbedTLS package may have been built otherwise).
#if defined(MBEDTLS_PLATFORM_MEMORY) && !defined(MBEDTLS_PLATFORM_CALLOC_MACRO) && \
    !defined(MBEDTLS_PLATFORM_FREE_MACRO)
#define STEPBACK_TLS_ARENA_POSSIBLE 1
#endif

namespace stepback::https {
namespace {

detail::ArenaAllocator g_allocator;
std::size_t g_capacity = 0;  // Non-zero while an arena is installed.

#if defined(STEPBACK_TLS_ARENA_POSSIBLE)
void* arena_calloc(std::size_t count, std::size_t size) {
  return g_allocator.allocate_zeroed(count, size);
}

void arena_free(void* pointer) { g_allocator.release(pointer); }
#endif

}  // namespace

Status tls_arena_init(MutableBytes arena) {
  if (arena.data == nullptr || arena.size < kTlsArenaMinBytes) return Status::kInvalidArgument;
  if (g_capacity != 0) return Status::kError;
#if defined(STEPBACK_TLS_ARENA_POSSIBLE)
  if (!g_allocator.init(arena.data, arena.size)) return Status::kInvalidArgument;
  if (mbedtls_platform_set_calloc_free(&arena_calloc, &arena_free) != 0) return Status::kError;
  g_capacity = arena.size;
  return Status::kOk;
#else
  return Status::kError;
#endif
}

Status tls_arena_init(std::uint8_t* data, std::size_t size) {
  return tls_arena_init(MutableBytes{data, size});
}

void tls_arena_release() {
  if (g_capacity == 0) return;
#if defined(STEPBACK_TLS_ARENA_POSSIBLE)
  (void)mbedtls_platform_set_calloc_free(std::calloc, std::free);
  (void)g_allocator.init(nullptr, 0);
#endif
  g_capacity = 0;
}

bool tls_arena_installed() { return g_capacity != 0; }

TlsArenaUsage tls_arena_usage() {
  TlsArenaUsage usage;
  if (g_capacity == 0) return usage;
  const detail::ArenaAllocator::Stats& s = g_allocator.stats();
  usage.capacity_bytes = g_capacity;
  usage.current_bytes = s.current_bytes;
  usage.current_blocks = s.current_blocks;
  usage.peak_bytes = s.peak_bytes;
  usage.peak_blocks = s.peak_blocks;
  return usage;
}

void tls_arena_reset_peak() {
  if (g_capacity != 0) g_allocator.reset_peaks();
}

}  // namespace stepback::https

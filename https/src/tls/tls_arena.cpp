#include "stepback/https/tls/tls_arena.hpp"

#include <cstdlib>

#include "mbedtls/build_info.h"
#include "mbedtls/platform.h"
#if defined(MBEDTLS_MEMORY_BUFFER_ALLOC_C)
#include "mbedtls/memory_buffer_alloc.h"
#endif

namespace stepback::https {
namespace {

std::size_t g_capacity = 0;  // Non-zero while an arena is installed.
#if defined(MBEDTLS_MEMORY_DEBUG)
// Use at the last tls_arena_reset_peak(): mbedTLS restarts its peaks at zero, not at the use
// of the moment, so the true peak since then is the larger of the two.
std::size_t g_reset_bytes = 0;
std::size_t g_reset_blocks = 0;
#endif

}  // namespace

Status tls_arena_init(MutableBytes arena) {
  if (arena.data == nullptr || arena.size < kTlsArenaMinBytes) return Status::kInvalidArgument;
  if (g_capacity != 0) return Status::kError;
#if defined(MBEDTLS_MEMORY_BUFFER_ALLOC_C)
  mbedtls_memory_buffer_alloc_init(arena.data, arena.size);
  g_capacity = arena.size;
#if defined(MBEDTLS_MEMORY_DEBUG)
  g_reset_bytes = 0;
  g_reset_blocks = 0;
#endif
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
#if defined(MBEDTLS_MEMORY_BUFFER_ALLOC_C)
  mbedtls_memory_buffer_alloc_free();
  // mbedtls_memory_buffer_alloc_free() leaves the arena's functions installed.
  (void)mbedtls_platform_set_calloc_free(std::calloc, std::free);
#endif
  g_capacity = 0;
}

bool tls_arena_installed() { return g_capacity != 0; }

TlsArenaUsage tls_arena_usage() {
  TlsArenaUsage usage;
  if (g_capacity == 0) return usage;
  usage.capacity_bytes = g_capacity;
#if defined(MBEDTLS_MEMORY_DEBUG)
  mbedtls_memory_buffer_alloc_cur_get(&usage.current_bytes, &usage.current_blocks);
  mbedtls_memory_buffer_alloc_max_get(&usage.peak_bytes, &usage.peak_blocks);
  if (usage.peak_bytes < g_reset_bytes) usage.peak_bytes = g_reset_bytes;
  if (usage.peak_blocks < g_reset_blocks) usage.peak_blocks = g_reset_blocks;
#endif
  return usage;
}

void tls_arena_reset_peak() {
#if defined(MBEDTLS_MEMORY_DEBUG)
  if (g_capacity == 0) return;
  mbedtls_memory_buffer_alloc_cur_get(&g_reset_bytes, &g_reset_blocks);
  mbedtls_memory_buffer_alloc_max_reset();
#endif
}

}  // namespace stepback::https

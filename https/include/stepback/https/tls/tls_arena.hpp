// The TLS arena: a caller-owned static buffer that serves every mbedTLS allocation, so that
// after set-up the HTTPS layer never touches the system heap.
//
//   alignas(16) static std::uint8_t arena[48 * 1024];
//   if (stepback::https::tls_arena_init({arena, sizeof arena}) != Status::kOk) ...
//   psa_crypto_init();   // then every other mbedTLS call
//
// mbedTLS has one allocator per process, so there is one arena per process. These functions
// are not thread-safe; call them from the thread that uses mbedTLS.
#ifndef STEPBACK_HTTPS_TLS_TLS_ARENA_HPP_
#define STEPBACK_HTTPS_TLS_TLS_ARENA_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/types.hpp"

namespace stepback::https {

// The smallest arena tls_arena_init() accepts, in bytes; a TLS connection needs far more
// (its 16 KiB incoming record buffer alone).
inline constexpr std::size_t kTlsArenaMinBytes = 1024;

// Bytes of bookkeeping the arena spends per block (live or free) on top of the bytes
// handed out: the arena's block header (its size, the previous block's size), on every
// target. (mbedTLS's own buffer allocator, which served the arena before, spent eight
// machine words: 32 B on 32-bit targets, 64 B on 64-bit ones.)
inline constexpr std::size_t kTlsArenaBlockOverheadBytes = 8;

// Routes every mbedTLS allocation into `arena`, which the caller owns and must keep alive, and
// not touch, until tls_arena_release(). Call it before any other mbedTLS call. Returns
// kInvalidArgument for a null or too small buffer, and kError when an arena is already
// installed or the mbedTLS build cannot be given an allocator (MBEDTLS_PLATFORM_MEMORY).
// Blocks are 8-aligned; an allocation takes the best-fitting free block
// (https/src/tls/arena_allocator.hpp).
[[nodiscard]] Status tls_arena_init(MutableBytes arena);

// As tls_arena_init(MutableBytes) for `size` bytes at `data`.
[[nodiscard]] Status tls_arena_init(std::uint8_t* data, std::size_t size);

// Gives mbedTLS back the C library's calloc/free. Only when no mbedTLS object still holds
// arena memory (after mbedtls_psa_crypto_free() and every *_free()); no-op if none installed.
void tls_arena_release();

// Whether an arena is installed.
bool tls_arena_installed();

// Use of the installed arena, all zero when none is installed.
struct TlsArenaUsage {
  std::size_t capacity_bytes = 0;  // The arena's size.
  std::size_t current_bytes = 0;   // Bytes handed out now (rounded to the alignment).
  std::size_t current_blocks = 0;  // Blocks handed out now.
  std::size_t peak_bytes = 0;      // Most bytes handed out at once (since the last reset).
  std::size_t peak_blocks = 0;     // Most blocks handed out at once (since the last reset).
  // An upper bound on the arena the peak needed: peak bytes plus the headers of the peak
  // block count (the two peaks need not coincide). Size arenas from this figure.
  std::size_t peak_footprint_bytes() const {
    return peak_bytes + peak_blocks * kTlsArenaBlockOverheadBytes;
  }
};

// The installed arena's current and peak use.
TlsArenaUsage tls_arena_usage();

// Restarts the peak counters at the current use, to measure one phase (a handshake, a request).
void tls_arena_reset_peak();

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TLS_TLS_ARENA_HPP_

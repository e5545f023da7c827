// Which AES-GCM engine mbedTLS's GCM (MBEDTLS_GCM_ALT, https/mbedtls/gcm/) uses for new keys.
#ifndef STEPBACK_GCM_GCM_HPP_
#define STEPBACK_GCM_GCM_HPP_

#include <cstdint>

#include <mbedtls/gcm.h>

namespace stepback::gcm {

// An implementation of AES-GCM: mbedTLS's own (one block at a time), or a pipelined engine.
enum class Engine : std::uint8_t {
  kSoftware,       // mbedTLS's gcm.c (its AES-NI / Armv8 single-block paths where present)
  kX86AesniClmul,  // x86-64 AES-NI + PCLMULQDQ, eight blocks in flight
  kArmv8AesPmull,  // ARMv8 AES + PMULL, eight blocks in flight
};

// A short name for logs and benchmarks ("software", "x86-aesni-clmul", "armv8-aes-pmull").
const char* to_string(Engine engine);

// The pipelined engine this CPU can run, or kSoftware when it has not the instructions.
Engine detected_engine();

// The engine that AES-128 and AES-256 keys set from now on get: detected_engine(), unless
// software is forced. AES-192 always gets kSoftware.
Engine engine();

// Forces new keys onto mbedTLS's software GCM (true) or lets them use detected_engine()
// (false); for tests and benchmarks. Keys already set keep their engine.
void force_software(bool on);

// The engine `ctx` was keyed with (kSoftware for a context without a key).
Engine engine_of(const mbedtls_gcm_context& ctx);

}  // namespace stepback::gcm

#endif  // STEPBACK_GCM_GCM_HPP_

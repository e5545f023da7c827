// CRC-32C (Castagnoli), the checksum Cloud Storage announces in x-goog-hash: hardware paths
// on x86-64 (SSE4.2 with PCLMULQDQ) and aarch64 (the CRC32 extension), chosen at run time,
// and a slicing-by-8 table everywhere else. Nothing here allocates or throws.
#ifndef STEPBACK_HTTPS_INTEGRITY_CRC32C_HPP_
#define STEPBACK_HTTPS_INTEGRITY_CRC32C_HPP_

#include <cstdint>

#include "stepback/https/types.hpp"

namespace stepback::https {

// CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial value and final XOR
// 0xFFFFFFFF), the CRC of iSCSI, ext4 and Cloud Storage. `crc` is the CRC of the bytes so far
// (0 for none): crc32c_extend(crc32c(a), b) == crc32c(a followed by b). "123456789" gives
// 0xE3069283. Uses the fastest path this CPU has (crc32c_path()).
[[nodiscard]] std::uint32_t crc32c_extend(std::uint32_t crc, ConstBytes bytes);

// The CRC-32C of `bytes`.
[[nodiscard]] inline std::uint32_t crc32c(ConstBytes bytes) { return crc32c_extend(0, bytes); }

// The ways of computing CRC-32C; all give the same values.
enum class Crc32cPath : std::uint8_t {
  kTable,   // Portable slicing-by-8 (8 KiB of tables, computed on first use); every target.
  kSse42,   // x86-64 SSE4.2 crc32q on eight interleaved streams joined with PCLMULQDQ
            // (needs both; GCC and clang).
  kArmCrc,  // AArch64 CRC32 extension crc32cx on three interleaved streams joined with
            // table shifts (GCC and clang).
};

// "table", "sse4.2", "arm-crc".
[[nodiscard]] const char* to_string(Crc32cPath path);

// Whether `path` is compiled into this build and supported by this CPU: kTable always; kSse42
// when CPUID reports SSE4.2 and PCLMULQDQ (or the build targets both); kArmCrc when
// getauxval(AT_HWCAP) has HWCAP_CRC32 on Linux and Android, elsewhere when the build targets
// the extension (__ARM_FEATURE_CRC32). The answer is computed once and cached (a relaxed atomic).
[[nodiscard]] bool crc32c_path_available(Crc32cPath path);

// The path crc32c_extend() takes here: a hardware one when available, else kTable.
[[nodiscard]] Crc32cPath crc32c_path();

// crc32c_extend() through `path` (for tests and benchmarks); a path that is not available
// computes through kTable instead, so the answer is always right.
[[nodiscard]] std::uint32_t crc32c_extend_with(Crc32cPath path, std::uint32_t crc,
                                               ConstBytes bytes);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_INTEGRITY_CRC32C_HPP_

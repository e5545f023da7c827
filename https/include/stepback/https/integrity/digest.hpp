// Digests as they travel in headers and in saved state, apart from the code that computes
// them (integrity.hpp, which needs mbedTLS): a transfer's state record holds an
// IntegrityState without pulling in a hash library.
#ifndef STEPBACK_HTTPS_INTEGRITY_DIGEST_HPP_
#define STEPBACK_HTTPS_INTEGRITY_DIGEST_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/types.hpp"

namespace stepback::https {

enum class HashAlgorithm : std::uint8_t { kCrc32c, kMd5 };

// "crc32c", "md5": the names x-goog-hash uses.
[[nodiscard]] const char* to_string(HashAlgorithm algorithm);

// Bytes of a CRC-32C digest (big-endian, as x-goog-hash carries it) and of an MD5 digest.
inline constexpr std::size_t kCrc32cDigestSize = 4;
inline constexpr std::size_t kMd5DigestSize = 16;

// A digest as it travels in headers: the CRC-32C big-endian, MD5 as its 16 bytes.
struct Digest {
  HashAlgorithm algorithm = HashAlgorithm::kCrc32c;
  std::uint8_t size = 0;  // kCrc32cDigestSize or kMd5DigestSize; 0 for none.
  std::uint8_t bytes[kMd5DigestSize] = {};

  [[nodiscard]] ConstBytes view() const { return {bytes, size}; }
  [[nodiscard]] static Digest crc32c(std::uint32_t crc);
  [[nodiscard]] static Digest md5(const std::uint8_t (&digest)[kMd5DigestSize]);
};

[[nodiscard]] bool operator==(const Digest& a, const Digest& b);
[[nodiscard]] inline bool operator!=(const Digest& a, const Digest& b) { return !(a == b); }

// Bytes of IntegrityState::md5_context: MD5's chaining state (4 x 32 bits), its byte count
// (64 bits) and the block not yet processed (64 bytes), little-endian.
inline constexpr std::size_t kMd5ContextSize = 16 + 8 + 64;

// An IntegrityCheck as plain values, to keep in a transfer's state record so that a later
// process goes on checking the whole body without reading its first part again.
struct IntegrityState {
  std::uint64_t size = 0;    // Body bytes fed.
  std::uint32_t crc32c = 0;  // Their CRC-32C.
  // The announced digests (size 0: none); `*_other` a second, different announcement.
  Digest expected_crc32c;
  Digest other_crc32c;
  Digest expected_md5;
  Digest other_md5;
  bool md5_running = false;  // md5_context covers every byte fed.
  std::uint8_t md5_context[kMd5ContextSize] = {};
};

// Whether `s` is one IntegrityCheck::state() can have made: each digest none or of its
// algorithm and size, a second announcement only beside a first, and a running MD5 only with
// an announced one and over exactly `size` bytes.
[[nodiscard]] inline bool plausible(const IntegrityState& s) {
  const auto well_formed = [](const Digest& d, HashAlgorithm algorithm) {
    return d.size == 0 ||
           (d.algorithm == algorithm &&
            d.size == (algorithm == HashAlgorithm::kCrc32c ? kCrc32cDigestSize : kMd5DigestSize));
  };
  std::uint64_t md5_count = 0;
  for (int i = 7; i >= 0; --i) md5_count = md5_count << 8 | s.md5_context[16 + i];
  return well_formed(s.expected_crc32c, HashAlgorithm::kCrc32c) &&
         well_formed(s.other_crc32c, HashAlgorithm::kCrc32c) &&
         well_formed(s.expected_md5, HashAlgorithm::kMd5) &&
         well_formed(s.other_md5, HashAlgorithm::kMd5) &&
         (s.other_crc32c.size == 0 || s.expected_crc32c.size != 0) &&
         (s.other_md5.size == 0 || s.expected_md5.size != 0) &&
         (!s.md5_running || (s.expected_md5.size != 0 && md5_count == s.size));
}

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_INTEGRITY_DIGEST_HPP_

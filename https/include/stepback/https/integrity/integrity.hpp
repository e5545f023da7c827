// Integrity of a downloaded body: CRC32C (crc32c.hpp: hardware on x86-64 and aarch64, tables
// elsewhere) and MD5 (mbedTLS), checked against the digests a response announces in
// `x-goog-hash` (Cloud Storage: "crc32c=BASE64,md5=BASE64", of the whole object, also on 206)
// or `Content-MD5` (their base64 read by base64.hpp). Nothing here allocates, throws or reads
// anything but the caller's bytes; a header value that does not parse strictly is ignored (no
// expectation), never trusted.
//
// Use: one IntegrityCheck per representation. Feed it each response's fields (add_header(),
// or add_x_goog_hash() / add_content_md5() per field line, since x-goog-hash may come more
// than once), then every body byte delivered to the sink, once and in order across all
// parts of a resumed download (update()); reset() when the sink restarts the representation
// from byte 0, clear() when a different representation replaces it (its expectations no
// longer apply); finish() at the end of the body.
#ifndef STEPBACK_HTTPS_INTEGRITY_INTEGRITY_HPP_
#define STEPBACK_HTTPS_INTEGRITY_INTEGRITY_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/https/integrity/base64.hpp"
#include "stepback/https/integrity/crc32c.hpp"
#include "stepback/https/integrity/digest.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// One algorithm's comparison at finish().
struct DigestComparison {
  bool checked = false;  // An expectation existed and the digest covered every byte.
  bool match = false;    // Meaningful when checked.
  Digest expected;       // What the response announced (the differing one, if it announced two).
  Digest got;            // What the delivered bytes hash to.
};

enum class IntegrityStatus : std::uint8_t {
  kNoExpectation,  // Nothing usable was announced: nothing was verified.
  kMatch,          // Every announced digest matches the delivered bytes.
  kMismatch,       // At least one does not: the body is not what the server announced.
};

// "no_expectation", "match", "mismatch".
[[nodiscard]] const char* to_string(IntegrityStatus status);

struct IntegrityResult {
  IntegrityStatus status = IntegrityStatus::kNoExpectation;
  DigestComparison crc32c;
  DigestComparison md5;
  std::uint64_t size = 0;  // Body bytes covered.
};

// Largest message format_integrity_message() writes, NUL included.
inline constexpr std::size_t kIntegrityMessageMax = 128;

// Writes a NUL-terminated message about `result` to `out` (truncated to capacity - 1
// characters) and returns its untruncated length, like snprintf:
//   "crc32c mismatch: expected AAAAAA==, got BBBBBB=="          (each failing algorithm,
//   "md5 mismatch: expected ..., got ..."                         "; "-separated)
//   "integrity verified: crc32c AAAAAA==, md5 ..."                 (kMatch)
//   "no integrity digest announced"                                (kNoExpectation)
std::size_t format_integrity_message(const IntegrityResult& result, char* out,
                                     std::size_t capacity);

// Expected digests and the running digests of one representation's body; fixed storage,
// copyable. CRC-32C always runs (so a crc32c expectation that arrives late, with a resumed
// part, still covers every byte); MD5 runs only when an md5 expectation exists before the
// first body byte (after construction, reset() or clear()), so an md5 announced only after
// bytes were fed is ignored (finish() reports it unchecked) rather than checked over part of
// the body. When the response(s) announce two different values for one algorithm, the body
// can match at most one: finish() reports a mismatch naming the one it differs from.
class IntegrityCheck {
 public:
  IntegrityCheck();
  ~IntegrityCheck();
  IntegrityCheck(const IntegrityCheck& other);
  IntegrityCheck& operator=(const IntegrityCheck& other);

  // Takes the expectations in one response field if `name` (ASCII case-insensitive) is
  // x-goog-hash or content-md5 (see add_content_md5() about 206); false for other names or
  // when nothing in the value parses.
  bool add_header(std::string_view name, std::string_view value);
  // One x-goog-hash field value: a comma-separated list of name=base64 items ("crc32c=..."
  // of 4 bytes, "md5=..." of 16; names case-insensitive, optional whitespace around items,
  // names and values; empty items skipped). Each item that parses strictly is taken, others
  // (unknown names, bad base64, wrong lengths) are ignored. True when at least one was taken.
  bool add_x_goog_hash(std::string_view value);
  // One Content-MD5 field value (RFC 1864: base64 of the 16-byte digest, optional
  // surrounding whitespace); true when it parses strictly. Feed it from a response carrying
  // the whole representation only: in a 206, Content-MD5 is the digest of the part sent
  // (RFC 2616 14.15), unlike x-goog-hash, which is always the whole object's.
  bool add_content_md5(std::string_view value);
  // Expectations from elsewhere (a manifest, the caller).
  void expect_crc32c(std::uint32_t crc);
  void expect_md5(const std::uint8_t (&digest)[kMd5DigestSize]);

  // Whether any expectation is held.
  [[nodiscard]] bool has_expectation() const { return crc_.present || md5_.present; }

  // Feeds the next body bytes, in order.
  void update(ConstBytes bytes);
  // The representation restarts from byte 0 (the sink restarted): the running digests start
  // over, the expectations stay.
  void reset();
  // A different representation: expectations and running digests are forgotten.
  void clear();

  // Body bytes fed since construction, reset() or clear().
  [[nodiscard]] std::uint64_t size() const { return size_; }
  // The CRC-32C of those bytes.
  [[nodiscard]] std::uint32_t crc32c() const { return crc_value_; }

  // The whole check as plain values (see IntegrityState).
  [[nodiscard]] IntegrityState state() const;
  // Takes up a check saved by state(); false (and the check cleared) when `state` is not one
  // state() can have made (a digest of the wrong algorithm or size, an MD5 byte count that
  // is not `size`).
  [[nodiscard]] bool restore(const IntegrityState& state);

  // Compares the digests of the bytes fed so far with the expectations. Changes nothing:
  // update() may continue after it.
  [[nodiscard]] IntegrityResult finish() const;
  // Compares the expectations with digests computed elsewhere (an upload's body, hashed as
  // it was sent); a null digest is not checked. The result's size is 0.
  [[nodiscard]] IntegrityResult compare_with(const Digest* crc32c, const Digest* md5) const;

 private:
  // Up to two distinct announced values of one algorithm (see the class comment).
  struct Expected {
    bool present = false;
    bool conflict = false;
    Digest first;
    Digest other;
  };
  static void expect(Expected* e, const Digest& d);
  struct Md5;  // The opaque MD5 context's accessors (integrity.cpp).

  Expected crc_;
  Expected md5_;
  std::uint64_t size_ = 0;
  std::uint32_t crc_value_ = 0;
  bool md5_running_ = false;  // The MD5 state has seen every byte since the last restart.
  // Mbed TLS's MD5 context, held opaque so that this header (and client.hpp above it) compiles
  // without Mbed TLS on the include path; integrity.cpp checks that it fits.
  static constexpr std::size_t kMd5Storage = 88;  // sizeof(mbedtls_md5_context) in Mbed TLS 3.6.
  alignas(std::uint64_t) unsigned char md5_ctx_[kMd5Storage] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_INTEGRITY_INTEGRITY_HPP_

// Upload's digests of the body and of the stored object. Not part of the API: a header of its
// own so that Upload can hold their state.
#ifndef STEPBACK_TRANSFER_DETAIL_UPLOAD_DIGESTS_HPP_
#define STEPBACK_TRANSFER_DETAIL_UPLOAD_DIGESTS_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/https/client.hpp"
#include "stepback/https/integrity/integrity.hpp"
#include "stepback/https/types.hpp"
#include "stepback/transfer/detail/metadata_scan.hpp"

namespace stepback::transfer::detail {

// The body's CRC-32C (the caller's, or computed as the body is read) and MD5 (the caller's),
// the x-goog-hash of the last chunk, and the digests the server returns for the stored object
// (its x-goog-hash field, the metadata JSON's "crc32c" and "md5Hash") compared with them.
class UploadDigests {
 public:
  // Starts over for a body whose CRC-32C is `crc32c` when known, else computed as it is read
  // when `compute`; `md5`: its MD5 (16 bytes, outliving the upload's use) or null.
  void start(bool compute, std::optional<std::uint32_t> crc32c, const std::uint8_t* md5);
  // A restored upload: `crc` is the CRC-32C of the body's first `length` bytes.
  void restore(std::uint32_t crc, std::uint64_t length);
  // Whether the CRC-32C is computed here (none was given).
  bool computing() const { return compute_ && !given_; }
  // Bytes of the body the running CRC-32C covers.
  std::uint64_t hashed() const { return hashed_; }
  // The body's bytes at `offset` were read: the running CRC-32C takes those after hashed()
  // (repeats skipped; bytes past a gap are left to hash_ahead()).
  void hash(std::uint64_t offset, https::ConstBytes data);
  // Reads `body` from hashed() on, at most 256 KiB a call, into the running CRC-32C; false
  // when the source gave fewer bytes than asked.
  bool hash_ahead(const https::BodySource& body);
  // The running CRC-32C when it covers exactly the first `length` bytes.
  std::optional<std::uint32_t> prefix_crc32c(std::uint64_t length) const;
  // "crc32c=...,md5=..." of a `size`-byte body, what is known of it ("" for nothing); a view
  // valid until the next call.
  std::string_view goog_hash(std::uint64_t size);

  // A final answer's metadata JSON, in pieces from `offset`; 0 starts it over.
  void metadata(std::uint64_t offset, https::ConstBytes data);
  // The final answer's x-goog-hash field.
  void returned_field(std::string_view x_goog_hash) {
    (void)returned_.add_x_goog_hash(x_goog_hash);
  }
  // The body's digests (of `size` bytes) against those the server returned; its size is the
  // body's.
  https::IntegrityResult compare(std::uint64_t size) const;
  // Words on a kMismatch `result`, valid until the next call.
  const char* mismatch_message(const https::IntegrityResult& result);

 private:
  bool whole_crc32c(std::uint64_t size, std::uint32_t* crc) const;

  bool compute_ = true;
  std::optional<std::uint32_t> given_;
  const std::uint8_t* md5_ = nullptr;
  // The running CRC-32C of the body's first hashed_ bytes (read in order; repeats skipped).
  std::uint32_t crc_ = 0;
  std::uint64_t hashed_ = 0;
  https::IntegrityCheck returned_;
  MetadataDigestScan scan_;
  char goog_hash_[64] = {};  // "crc32c=XXXXXXXX,md5=XXXXXXXXXXXXXXXXXXXXXXXX" at most.
  char message_[https::kIntegrityMessageMax + 64] = {};
};

}  // namespace stepback::transfer::detail

#endif  // STEPBACK_TRANSFER_DETAIL_UPLOAD_DIGESTS_HPP_

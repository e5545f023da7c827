#include "stepback/transfer/detail/upload_digests.hpp"

#include <cstring>

#include "resumable_protocol.hpp"
#include "stepback/https/integrity/base64.hpp"
#include "stepback/https/integrity/crc32c.hpp"
#include "stepback/https/integrity/digest.hpp"

namespace stepback::transfer::detail {

void UploadDigests::start(bool compute, std::optional<std::uint32_t> crc32c,
                          const std::uint8_t* md5) {
  compute_ = compute;
  given_ = crc32c;
  md5_ = md5;
  crc_ = 0;
  hashed_ = 0;
  returned_.clear();
  scan_ = MetadataDigestScan{};
}

void UploadDigests::restore(std::uint32_t crc, std::uint64_t length) {
  crc_ = crc;
  hashed_ = length;
}

void UploadDigests::hash(std::uint64_t offset, https::ConstBytes data) {
  if (!computing() || offset > hashed_ || offset + data.size <= hashed_) return;
  const auto skip = static_cast<std::size_t>(hashed_ - offset);
  crc_ = https::crc32c_extend(crc_, https::ConstBytes{data.data + skip, data.size - skip});
  hashed_ = offset + data.size;
}

bool UploadDigests::hash_ahead(const https::BodySource& body) {
  constexpr std::uint64_t kPerCall = std::uint64_t{256} * 1024;
  std::uint8_t block[4096];
  const std::uint64_t stop = body.size - hashed_ > kPerCall ? hashed_ + kPerCall : body.size;
  while (hashed_ < stop) {
    const std::uint64_t left = stop - hashed_;
    const std::size_t want = left < sizeof block ? static_cast<std::size_t>(left) : sizeof block;
    const std::size_t n = body.read(body.context, hashed_, https::MutableBytes{block, want});
    if (n != want) return false;
    hash(hashed_, https::ConstBytes{block, n});
  }
  return true;
}

std::optional<std::uint32_t> UploadDigests::prefix_crc32c(std::uint64_t length) const {
  if (computing() && hashed_ == length) return crc_;
  return std::nullopt;
}

bool UploadDigests::whole_crc32c(std::uint64_t size, std::uint32_t* crc) const {
  if (given_) {
    *crc = *given_;
    return true;
  }
  if (!compute_ || hashed_ != size) return false;
  *crc = crc_;
  return true;
}

std::string_view UploadDigests::goog_hash(std::uint64_t size) {
  char* at = goog_hash_;
  std::uint32_t crc = 0;
  if (whole_crc32c(size, &crc)) {
    const https::Digest d = https::Digest::crc32c(crc);
    at = write_text(at, "crc32c=");
    at += https::base64_encode(d.view(), at, 12);
  }
  if (md5_ != nullptr) {
    if (at != goog_hash_) *at++ = ',';
    at = write_text(at, "md5=");
    at += https::base64_encode(https::ConstBytes{md5_, https::kMd5DigestSize}, at, 24);
  }
  return std::string_view(goog_hash_, static_cast<std::size_t>(at - goog_hash_));
}

void UploadDigests::metadata(std::uint64_t offset, https::ConstBytes data) {
  if (offset == 0) {
    returned_.clear();
    scan_ = MetadataDigestScan{};
  }
  scan_.feed(data, &returned_);
}

https::IntegrityResult UploadDigests::compare(std::uint64_t size) const {
  std::uint32_t crc = 0;
  const bool have_crc = whole_crc32c(size, &crc);
  const https::Digest crc_digest = https::Digest::crc32c(have_crc ? crc : 0);
  https::Digest md5_digest;
  if (md5_ != nullptr) {
    std::uint8_t raw[https::kMd5DigestSize];
    std::memcpy(raw, md5_, sizeof raw);
    md5_digest = https::Digest::md5(raw);
  }
  https::IntegrityResult result = returned_.compare_with(have_crc ? &crc_digest : nullptr,
                                                         md5_ != nullptr ? &md5_digest : nullptr);
  result.size = size;
  return result;
}

const char* UploadDigests::mismatch_message(const https::IntegrityResult& result) {
  constexpr char kLead[] = "the server stored an object whose digest differs from the body's: ";
  std::memcpy(message_, kLead, sizeof kLead - 1);
  (void)https::format_integrity_message(result, message_ + sizeof kLead - 1,
                                        sizeof message_ - (sizeof kLead - 1));
  return message_;
}

}  // namespace stepback::transfer::detail

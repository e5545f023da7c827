#include "tls/cert_scanner.hpp"

#include <mbedtls/platform.h>

#include <cstring>

#include "tls/x509_name.hpp"

namespace stepback::https {
namespace {

// Whether `a` and `b` hold the same bytes.
bool same_bytes(ConstBytes a, ConstBytes b) {
  return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
}

}  // namespace

void TrustStore::Scan::begin(bool first_only) {
  base_ = 0;
  mode_ = Mode::kDetect;
  line_start_ = true;
  skip_line_ = false;
  in_marker_ = false;
  in_data_ = false;
  first_only_ = first_only;
  done_ = false;
}

void TrustStore::Scan::feed(const std::uint8_t* d, std::size_t n) {
  if (n == 0 || done_) return;
  if (mode_ == Mode::kDetect) {
    // DER starts with a SEQUENCE whose length takes the long form (certificates exceed 127
    // bytes); text never has a byte >= 0x80 second.
    mode_ = d[0] == 0x30 && (n < 2 || d[1] >= 0x81) ? Mode::kDer : Mode::kPemOutside;
    start_certificate();
  }
  if (mode_ == Mode::kDer) {
    feed_der(d, n);
  } else {
    feed_pem(d, n);
  }
  base_ += n;
}

void TrustStore::Scan::start_certificate() {
  der_len_ = 0;
  total_ = 0;
  subject_known_ = false;
  rejected_ = false;
  matched_ = false;
  bits_ = 0;
  acc_ = 0;
  padded_ = false;
}

void TrustStore::Scan::check_subject() {
  if (subject_known_ || rejected_) return;
  ConstBytes subject;
  const Status s = detail::locate_subject(store_.der_, der_len_, &subject, &total_);
  if (s == Status::kWouldBlock) {
    if (der_len_ == kMaxCertificateBytes) rejected_ = true;
    return;
  }
  if (s != Status::kOk || total_ > kMaxCertificateBytes) {
    rejected_ = true;
    return;
  }
  subject_known_ = true;
  ++seen_;
  if (index_ != nullptr) {
    if (index_->count == index_->capacity || cert_offset_ > 0xFFFFFFFFu) {
      index_->overflow = true;
    } else {
      index_->offset[index_->count] = static_cast<std::uint32_t>(cert_offset_);
      index_->key[index_->count++] = detail::index_key(subject, store_.subject_canonical_);
    }
    rejected_ = true;  // Nothing more to decode.
    return;
  }
  ++store_.stats_.certificates_scanned;
  matched_ = matches(subject);
  if (!matched_) rejected_ = true;
}

bool TrustStore::Scan::matches(ConstBytes subject) {
  if (issuer_.size == 0) return false;
  if (same_bytes(subject, issuer_)) return true;
  if (issuer_canonical_ == nullptr) return false;
  std::size_t len = 0;
  if (canonical_name(subject, MutableBytes{store_.subject_canonical_, kMaxCanonicalNameBytes},
                     &len) != Status::kOk) {
    return false;
  }
  return same_bytes(ConstBytes{store_.subject_canonical_, len},
                    ConstBytes{issuer_canonical_, issuer_canonical_len_});
}

void TrustStore::Scan::finish_certificate() {
  if (matched_ && der_len_ >= total_ && status_ == Status::kOk) parse();
  start_certificate();
  if (first_only_) done_ = true;
}

void TrustStore::Scan::parse() {
  if (*out_ == nullptr) {
    *out_ = static_cast<mbedtls_x509_crt*>(mbedtls_calloc(1, sizeof(mbedtls_x509_crt)));
    if (*out_ == nullptr) {
      status_ = Status::kBufferTooSmall;
      return;
    }
    mbedtls_x509_crt_init(*out_);
  }
  const int ret = mbedtls_x509_crt_parse_der(*out_, store_.der_, total_);
  if (ret == 0) {
    ++parsed_;
    ++store_.stats_.certificates_parsed;
  } else if (ret == MBEDTLS_ERR_X509_ALLOC_FAILED) {
    status_ = Status::kBufferTooSmall;
  }
  // Any other error: a root this build cannot use (e.g. an unsupported curve); skip it.
}

void TrustStore::Scan::feed_der(const std::uint8_t* d, std::size_t n) {
  constexpr std::size_t kHeaderBytes = 5;  // 0x30 0x83 and three length bytes at most.
  const std::uint8_t* const chunk = d;
  while (n > 0 && !done()) {
    if (der_len_ == 0) cert_offset_ = base_ + static_cast<std::size_t>(d - chunk);
    if (rejected_ && total_ == 0) {  // Not a certificate: its end cannot be found.
      done_ = true;
      return;
    }
    std::size_t take = total_ != 0 ? total_ - der_len_ : kHeaderBytes - der_len_;
    if (take > n) take = n;
    if (!rejected_) {
      if (take > kMaxCertificateBytes - der_len_) take = kMaxCertificateBytes - der_len_;
      std::memcpy(store_.der_ + der_len_, d, take);
    }
    der_len_ += take;
    d += take;
    n -= take;
    if (!rejected_) check_subject();
    if (total_ != 0 && der_len_ >= total_) {
      finish_certificate();
    } else if (total_ == 0 && der_len_ >= kHeaderBytes) {
      rejected_ = true;
    }
  }
}

void TrustStore::Scan::feed_pem(const std::uint8_t* d, std::size_t n) {
  std::size_t i = 0;
  while (i < n && !done()) {
    if (skip_line_) {
      const void* nl = std::memchr(d + i, '\n', n - i);
      if (nl == nullptr) return;
      i = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nl) - d) + 1;
      skip_line_ = false;
      line_start_ = true;
      continue;
    }
    if (line_start_) {
      line_start_ = false;
      if (d[i] == '-') {
        in_marker_ = true;
        marker_len_ = 0;
        marker_offset_ = base_ + i;
      } else if (mode_ == Mode::kPemBody && !rejected_) {
        in_data_ = true;
      } else {
        skip_line_ = true;
        continue;
      }
    }
    if (in_marker_) {
      for (; i < n; ++i) {
        const char c = static_cast<char>(d[i]);
        if (c == '\n') break;
        if (marker_len_ < detail::kMarkerBytes) marker_[marker_len_++] = c;
      }
      if (i == n) return;  // The line goes on in the next chunk.
      ++i;
      in_marker_ = false;
      line_start_ = true;
      end_marker_line();
      continue;
    }
    if (in_data_) {
      const void* nl = std::memchr(d + i, '\n', n - i);
      const std::size_t stop =
          nl == nullptr ? n : static_cast<std::size_t>(static_cast<const std::uint8_t*>(nl) - d);
      decode(d + i, stop - i);
      check_subject();
      if (nl == nullptr) return;
      i = stop + 1;
      in_data_ = false;
      line_start_ = true;
      continue;
    }
  }
}

void TrustStore::Scan::end_marker_line() {
  if (mode_ == Mode::kPemOutside) {
    if (detail::is_marker(marker_, marker_len_, detail::kBeginMarker)) {
      mode_ = Mode::kPemBody;
      start_certificate();
      cert_offset_ = marker_offset_;
    }
    return;
  }
  // In a body, any line starting with '-' ends it; only END CERTIFICATE completes it, and
  // a BEGIN CERTIFICATE (the previous block was cut short) starts the next one.
  const bool begins = detail::is_marker(marker_, marker_len_, detail::kBeginMarker);
  if (!detail::is_marker(marker_, marker_len_, detail::kEndMarker)) matched_ = false;
  mode_ = Mode::kPemOutside;
  finish_certificate();
  if (begins && !done()) {
    mode_ = Mode::kPemBody;
    cert_offset_ = marker_offset_;
  }
}

void TrustStore::Scan::decode(const std::uint8_t* s, std::size_t n) {
  if (rejected_) return;
  for (std::size_t k = 0; k < n; ++k) {
    const std::int8_t v = detail::kBase64.v[s[k]];
    if (v >= 0) {
      if (padded_) {
        rejected_ = true;
        return;
      }
      acc_ = (acc_ << 6) | static_cast<std::uint32_t>(v);
      bits_ += 6;
      if (bits_ >= 8) {
        bits_ -= 8;
        if (der_len_ == kMaxCertificateBytes) {
          rejected_ = true;
          return;
        }
        store_.der_[der_len_++] = static_cast<std::uint8_t>(acc_ >> bits_);
      }
    } else if (v == -3) {
      padded_ = true;
    } else if (v == -1) {
      rejected_ = true;
      return;
    }
  }
}

}  // namespace stepback::https

#include "stepback/https/integrity/integrity.hpp"

#include <mbedtls/md5.h>

#include <cstring>
#include <new>

#include "stepback/https/detail/text.hpp"

#if !defined(MBEDTLS_MD5_C)
#error "stepback's integrity check needs MD5: define MBEDTLS_MD5_C in the mbedTLS configuration"
#endif

namespace stepback::https {
namespace {

using detail::iequals;
using detail::trim_ows;

// Appends to a bounded buffer, snprintf-like: counts everything, writes what fits.
class Writer {
 public:
  Writer(char* out, std::size_t capacity) : out_(out), capacity_(capacity) {}
  void text(std::string_view s) {
    for (char c : s) put(c);
  }
  void digest(const Digest& d) {
    char b64[((kMd5DigestSize + 2) / 3) * 4];
    text(std::string_view(b64, base64_encode(d.view(), b64, sizeof b64)));
  }
  std::size_t finish() {
    if (capacity_ != 0) out_[length_ < capacity_ ? length_ : capacity_ - 1] = '\0';
    return length_;
  }

 private:
  void put(char c) {
    if (capacity_ != 0 && length_ < capacity_ - 1) out_[length_] = c;
    ++length_;
  }
  char* out_;
  std::size_t capacity_;
  std::size_t length_ = 0;
};

}  // namespace

const char* to_string(HashAlgorithm algorithm) {
  switch (algorithm) {
    case HashAlgorithm::kCrc32c:
      return "crc32c";
    case HashAlgorithm::kMd5:
      return "md5";
  }
  return "?";
}

const char* to_string(IntegrityStatus status) {
  switch (status) {
    case IntegrityStatus::kNoExpectation:
      return "no_expectation";
    case IntegrityStatus::kMatch:
      return "match";
    case IntegrityStatus::kMismatch:
      return "mismatch";
  }
  return "?";
}

Digest Digest::crc32c(std::uint32_t crc) {
  Digest d;
  d.algorithm = HashAlgorithm::kCrc32c;
  d.size = kCrc32cDigestSize;
  for (std::size_t i = 0; i < kCrc32cDigestSize; ++i) {
    d.bytes[i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  }
  return d;
}

Digest Digest::md5(const std::uint8_t (&digest)[kMd5DigestSize]) {
  Digest d;
  d.algorithm = HashAlgorithm::kMd5;
  d.size = kMd5DigestSize;
  std::memcpy(d.bytes, digest, kMd5DigestSize);
  return d;
}

bool operator==(const Digest& a, const Digest& b) {
  return a.algorithm == b.algorithm && a.size == b.size &&
         std::memcmp(a.bytes, b.bytes, a.size) == 0;
}

std::size_t format_integrity_message(const IntegrityResult& result, char* out,
                                     std::size_t capacity) {
  Writer w(out, capacity);
  const DigestComparison* const both[] = {&result.crc32c, &result.md5};
  switch (result.status) {
    case IntegrityStatus::kNoExpectation:
      w.text("no integrity digest announced");
      break;
    case IntegrityStatus::kMismatch: {
      bool first = true;
      for (const DigestComparison* c : both) {
        if (!c->checked || c->match) continue;
        if (!first) w.text("; ");
        first = false;
        w.text(to_string(c->expected.algorithm));
        w.text(" mismatch: expected ");
        w.digest(c->expected);
        w.text(", got ");
        w.digest(c->got);
      }
      break;
    }
    case IntegrityStatus::kMatch: {
      w.text("integrity verified:");
      bool first = true;
      for (const DigestComparison* c : both) {
        if (!c->checked) continue;
        w.text(first ? " " : ", ");
        first = false;
        w.text(to_string(c->got.algorithm));
        w.text(" ");
        w.digest(c->got);
      }
      break;
    }
  }
  return w.finish();
}

struct IntegrityCheck::Md5 {
  static_assert(sizeof(mbedtls_md5_context) <= kMd5Storage,
                "kMd5Storage is smaller than this Mbed TLS's MD5 context");
  static_assert(alignof(mbedtls_md5_context) <= alignof(std::uint64_t),
                "the MD5 context needs a stricter alignment");
  static mbedtls_md5_context* of(IntegrityCheck& c) {
    return std::launder(reinterpret_cast<mbedtls_md5_context*>(c.md5_ctx_));
  }
  static const mbedtls_md5_context* of(const IntegrityCheck& c) {
    return std::launder(reinterpret_cast<const mbedtls_md5_context*>(c.md5_ctx_));
  }
};

IntegrityCheck::IntegrityCheck() {
  new (md5_ctx_) mbedtls_md5_context{};
  mbedtls_md5_init(Md5::of(*this));
  (void)mbedtls_md5_starts(Md5::of(*this));
}

IntegrityCheck::~IntegrityCheck() { mbedtls_md5_free(Md5::of(*this)); }

IntegrityCheck::IntegrityCheck(const IntegrityCheck& other)
    : crc_(other.crc_),
      md5_(other.md5_),
      size_(other.size_),
      crc_value_(other.crc_value_),
      md5_running_(other.md5_running_) {
  new (md5_ctx_) mbedtls_md5_context{};
  mbedtls_md5_init(Md5::of(*this));
  mbedtls_md5_clone(Md5::of(*this), Md5::of(other));
}

IntegrityCheck& IntegrityCheck::operator=(const IntegrityCheck& other) {
  if (this != &other) {
    crc_ = other.crc_;
    md5_ = other.md5_;
    size_ = other.size_;
    crc_value_ = other.crc_value_;
    md5_running_ = other.md5_running_;
    mbedtls_md5_clone(Md5::of(*this), Md5::of(other));
  }
  return *this;
}

void IntegrityCheck::expect(Expected* e, const Digest& d) {
  if (!e->present) {
    e->present = true;
    e->first = d;
  } else if (d != e->first) {
    e->conflict = true;
    e->other = d;
  }
}

void IntegrityCheck::expect_crc32c(std::uint32_t crc) { expect(&crc_, Digest::crc32c(crc)); }

void IntegrityCheck::expect_md5(const std::uint8_t (&digest)[kMd5DigestSize]) {
  expect(&md5_, Digest::md5(digest));
  if (size_ == 0) md5_running_ = true;
}

bool IntegrityCheck::add_x_goog_hash(std::string_view value) {
  bool taken = false;
  // Views are cut by hand: substr() would tie the library to libstdc++'s out_of_range.
  std::size_t begin = 0;
  while (begin < value.size()) {
    std::size_t end = value.find(',', begin);
    if (end == std::string_view::npos) end = value.size();
    const std::string_view item = trim_ows(std::string_view(value.data() + begin, end - begin));
    begin = end + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = trim_ows(std::string_view(item.data(), eq));
    const std::string_view b64 =
        trim_ows(std::string_view(item.data() + eq + 1, item.size() - eq - 1));
    if (iequals(name, "crc32c")) {
      std::uint8_t raw[kCrc32cDigestSize];
      if (base64_decode_exact(b64, raw, sizeof raw)) {
        expect_crc32c(static_cast<std::uint32_t>(raw[0]) << 24 |
                      static_cast<std::uint32_t>(raw[1]) << 16 |
                      static_cast<std::uint32_t>(raw[2]) << 8 | raw[3]);
        taken = true;
      }
    } else if (iequals(name, "md5")) {
      std::uint8_t raw[kMd5DigestSize];
      if (base64_decode_exact(b64, raw, sizeof raw)) {
        expect_md5(raw);
        taken = true;
      }
    }
  }
  return taken;
}

bool IntegrityCheck::add_content_md5(std::string_view value) {
  std::uint8_t raw[kMd5DigestSize];
  if (!base64_decode_exact(trim_ows(value), raw, sizeof raw)) return false;
  expect_md5(raw);
  return true;
}

bool IntegrityCheck::add_header(std::string_view name, std::string_view value) {
  if (iequals(name, "x-goog-hash")) return add_x_goog_hash(value);
  if (iequals(name, "content-md5")) return add_content_md5(value);
  return false;
}

void IntegrityCheck::update(ConstBytes bytes) {
  if (bytes.size == 0) return;
  crc_value_ = crc32c_extend(crc_value_, bytes);
  if (md5_running_) (void)mbedtls_md5_update(Md5::of(*this), bytes.data, bytes.size);
  size_ += bytes.size;
}

void IntegrityCheck::reset() {
  size_ = 0;
  crc_value_ = 0;
  md5_running_ = md5_.present;
  (void)mbedtls_md5_starts(Md5::of(*this));
}

void IntegrityCheck::clear() {
  crc_ = Expected();
  md5_ = Expected();
  reset();
}

namespace {

void put_le32(std::uint8_t* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint32_t get_le32(const std::uint8_t* in) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | in[i];
  return v;
}

}  // namespace

IntegrityState IntegrityCheck::state() const {
  IntegrityState s;
  s.size = size_;
  s.crc32c = crc_value_;
  if (crc_.present) s.expected_crc32c = crc_.first;
  if (crc_.conflict) s.other_crc32c = crc_.other;
  if (md5_.present) s.expected_md5 = md5_.first;
  if (md5_.conflict) s.other_md5 = md5_.other;
  s.md5_running = md5_running_;
  // mbedTLS has no export of a running MD5; its context is three plain arrays.
  for (std::size_t i = 0; i < 4; ++i) {
    put_le32(s.md5_context + 4 * i, Md5::of(*this)->MBEDTLS_PRIVATE(state)[i]);
  }
  put_le32(s.md5_context + 16, Md5::of(*this)->MBEDTLS_PRIVATE(total)[0]);
  put_le32(s.md5_context + 20, Md5::of(*this)->MBEDTLS_PRIVATE(total)[1]);
  std::memcpy(s.md5_context + 24, Md5::of(*this)->MBEDTLS_PRIVATE(buffer), 64);
  return s;
}

bool IntegrityCheck::restore(const IntegrityState& s) {
  clear();
  if (!plausible(s)) return false;
  if (s.expected_crc32c.size != 0) expect(&crc_, s.expected_crc32c);
  if (s.other_crc32c.size != 0) expect(&crc_, s.other_crc32c);
  if (s.expected_md5.size != 0) expect(&md5_, s.expected_md5);
  if (s.other_md5.size != 0) expect(&md5_, s.other_md5);
  size_ = s.size;
  crc_value_ = s.crc32c;
  md5_running_ = s.md5_running;
  if (md5_running_) {
    for (std::size_t i = 0; i < 4; ++i) {
      Md5::of(*this)->MBEDTLS_PRIVATE(state)[i] = get_le32(s.md5_context + 4 * i);
    }
    Md5::of(*this)->MBEDTLS_PRIVATE(total)[0] = get_le32(s.md5_context + 16);
    Md5::of(*this)->MBEDTLS_PRIVATE(total)[1] = get_le32(s.md5_context + 20);
    std::memcpy(Md5::of(*this)->MBEDTLS_PRIVATE(buffer), s.md5_context + 24, 64);
  }
  return true;
}

IntegrityResult IntegrityCheck::finish() const {
  const Digest crc = Digest::crc32c(crc_value_);
  Digest md5;
  if (md5_.present && md5_running_) {
    mbedtls_md5_context copy;
    mbedtls_md5_init(&copy);
    mbedtls_md5_clone(&copy, Md5::of(*this));
    std::uint8_t raw[kMd5DigestSize];
    (void)mbedtls_md5_finish(&copy, raw);
    mbedtls_md5_free(&copy);
    md5 = Digest::md5(raw);
  }
  IntegrityResult result = compare_with(&crc, md5.size != 0 ? &md5 : nullptr);
  result.size = size_;
  return result;
}

IntegrityResult IntegrityCheck::compare_with(const Digest* crc32c, const Digest* md5) const {
  IntegrityResult result;
  const auto compare = [](const Expected& e, const Digest& got, DigestComparison* c) {
    c->checked = true;
    c->got = got;
    if (got != e.first) {
      c->expected = e.first;
    } else if (e.conflict) {
      c->expected = e.other;
    } else {
      c->expected = e.first;
      c->match = true;
    }
  };
  if (crc_.present && crc32c != nullptr) compare(crc_, *crc32c, &result.crc32c);
  if (md5_.present && md5 != nullptr) compare(md5_, *md5, &result.md5);

  if (!result.crc32c.checked && !result.md5.checked) {
    result.status = IntegrityStatus::kNoExpectation;
  } else if ((result.crc32c.checked && !result.crc32c.match) ||
             (result.md5.checked && !result.md5.match)) {
    result.status = IntegrityStatus::kMismatch;
  } else {
    result.status = IntegrityStatus::kMatch;
  }
  return result;
}

}  // namespace stepback::https

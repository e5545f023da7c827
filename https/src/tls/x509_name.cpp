#include "tls/x509_name.hpp"

#include <mbedtls/asn1.h>
#include <mbedtls/asn1write.h>
#include <mbedtls/md5.h>
#include <mbedtls/sha1.h>

#include <cstring>

#include "stepback/https/detail/text.hpp"
#include "stepback/https/tls/trust_store.hpp"

namespace stepback::https {
namespace {

// OpenSSL's canonical name encoding (crypto/x509/x_name.c: x509_name_canon,
// asn1_string_canon, i2d_name_canon).

constexpr unsigned char kTagOid = 0x06;
constexpr unsigned char kTagUtf8 = 0x0C;
constexpr unsigned char kTagPrintable = 0x13;
constexpr unsigned char kTagT61 = 0x14;
constexpr unsigned char kTagIa5 = 0x16;
constexpr unsigned char kTagVisible = 0x1A;
constexpr unsigned char kTagUniversal = 0x1C;
constexpr unsigned char kTagBmp = 0x1E;
constexpr unsigned char kTagSequence = MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE;
constexpr unsigned char kTagSet = MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SET;

constexpr std::size_t kMaxRdns = 64;        // RDNs per name.
constexpr std::size_t kMaxRdnMembers = 16;  // Attributes per (multi-valued) RDN.

// OpenSSL's ossl_isspace: space, \t, \n, \v, \f, \r.
bool is_space(std::uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Appends code point `cp` as UTF-8 at out[*n]; false when it does not fit or is no character
// (a surrogate or beyond U+10FFFF, which OpenSSL's UTF8_putc refuses too).
bool put_utf8(std::uint32_t cp, std::uint8_t* out, std::size_t cap, std::size_t* n) {
  std::uint8_t b[4];
  const std::size_t len = detail::encode_utf8(cp, b);
  if (len == 0 || cap - *n < len) return false;
  std::memcpy(out + *n, b, len);
  *n += len;
  return true;
}

// Whether `s` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF),
// as OpenSSL's UTF8_getc requires of a UTF8String.
bool valid_utf8(const std::uint8_t* s, std::size_t n) {
  std::size_t i = 0;
  while (i < n) {
    const std::uint8_t c = s[i];
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      extra = 1, cp = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, cp = c & 0x07u, min = 0x10000;
    } else {
      return false;
    }
    if (n - i <= extra) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

enum class Canon { kOk, kMalformed, kTooSmall };

// The canonical text of a string value of type `tag` (one of the text types) written to
// `out` (forward): converted to UTF-8 as ASN1_STRING_to_UTF8 does (1-byte types read as
// Latin-1, BMPString as UCS-2, UniversalString as UCS-4), then asn1_string_canon's
// white-space and case rules.
Canon canonical_text(std::uint8_t tag, const std::uint8_t* v, std::size_t n, std::uint8_t* out,
                     std::size_t cap, std::size_t* out_len) {
  std::size_t len = 0;
  switch (tag) {
    case kTagUtf8:
      if (!valid_utf8(v, n)) return Canon::kMalformed;
      if (n > cap) return Canon::kTooSmall;
      std::memcpy(out, v, n);
      len = n;
      break;
    case kTagBmp:
    case kTagUniversal: {
      const std::size_t width = tag == kTagBmp ? 2 : 4;
      if (n % width != 0) return Canon::kMalformed;
      for (std::size_t i = 0; i < n; i += width) {
        std::uint32_t cp = 0;
        for (std::size_t k = 0; k < width; ++k) cp = (cp << 8) | v[i + k];
        if (!put_utf8(cp, out, cap, &len)) {
          return cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ? Canon::kMalformed
                                                                 : Canon::kTooSmall;
        }
      }
      break;
    }
    default:  // PrintableString, T61String, IA5String, VisibleString: one byte a character.
      for (std::size_t i = 0; i < n; ++i) {
        if (!put_utf8(v[i], out, cap, &len)) return Canon::kTooSmall;
      }
      break;
  }
  // asn1_string_canon: drop leading and trailing white space, collapse inner runs to one
  // space, fold ASCII to lower case; bytes >= 0x80 are copied as they are.
  std::size_t from = 0;
  std::size_t end = len;
  while (from < end && is_space(out[from])) ++from;
  while (end > from && is_space(out[end - 1])) --end;
  std::size_t to = 0;
  while (from < end) {
    const std::uint8_t c = out[from];
    if (c >= 0x80) {
      out[to++] = c;
      ++from;
    } else if (is_space(c)) {
      out[to++] = ' ';
      while (from < end && is_space(out[from])) ++from;
    } else {
      out[to++] = (c >= 'A' && c <= 'Z') ? static_cast<std::uint8_t>(c - 'A' + 'a') : c;
      ++from;
    }
  }
  *out_len = to;
  return Canon::kOk;
}

bool canonicalized(std::uint8_t tag) {
  return tag == kTagUtf8 || tag == kTagPrintable || tag == kTagT61 || tag == kTagIa5 ||
         tag == kTagVisible || tag == kTagUniversal || tag == kTagBmp;
}

// One AttributeTypeAndValue of the input.
struct Attribute {
  const std::uint8_t* oid = nullptr;
  std::size_t oid_len = 0;
  std::uint8_t tag = 0;
  const std::uint8_t* value = nullptr;
  std::size_t value_len = 0;
};

// Reads the AttributeTypeAndValue SEQUENCE at *p.
bool read_attribute(std::uint8_t** p, const std::uint8_t* end, Attribute* a) {
  std::size_t len = 0;
  if (mbedtls_asn1_get_tag(p, end, &len, kTagSequence) != 0) return false;
  const std::uint8_t* const seq_end = *p + len;
  if (mbedtls_asn1_get_tag(p, seq_end, &len, kTagOid) != 0) return false;
  a->oid = *p;
  a->oid_len = len;
  *p += len;
  if (*p >= seq_end) return false;
  a->tag = **p;
  ++*p;
  if (mbedtls_asn1_get_len(p, seq_end, &len) != 0) return false;
  a->value = *p;
  a->value_len = len;
  *p += len;
  return *p == seq_end;
}

// Backward writer over [start, p): mbedTLS's ASN.1 writer plus a memmove-based raw write (the
// canonical text is staged at the front of the same buffer, which may overlap).
struct Writer {
  std::uint8_t* start = nullptr;
  std::uint8_t* p = nullptr;
  bool ok = true;

  std::size_t free_bytes() const { return static_cast<std::size_t>(p - start); }
  void raw(const std::uint8_t* data, std::size_t n) {
    if (!ok || free_bytes() < n) {
      ok = false;
      return;
    }
    p -= n;
    std::memmove(p, data, n);
  }
  void header(std::uint8_t tag, std::size_t len) {
    if (!ok) return;
    if (mbedtls_asn1_write_len(&p, start, len) < 0 || mbedtls_asn1_write_tag(&p, start, tag) < 0) {
      ok = false;
    }
  }
};

// Writes the canonical AttributeTypeAndValue of `a` before w->p.
Canon write_attribute(Writer* w, const Attribute& a) {
  const std::uint8_t* const after = w->p;
  if (canonicalized(a.tag)) {
    // Stage the canonical text at the front of the free space, then move it into place.
    std::size_t text_len = 0;
    const Canon c =
        canonical_text(a.tag, a.value, a.value_len, w->start, w->free_bytes(), &text_len);
    if (c != Canon::kOk) return c;
    w->raw(w->start, text_len);
    w->header(kTagUtf8, text_len);
  } else {
    w->raw(a.value, a.value_len);
    w->header(a.tag, a.value_len);
  }
  if (w->ok && mbedtls_asn1_write_oid(&w->p, w->start, reinterpret_cast<const char*>(a.oid),
                                      a.oid_len) < 0) {
    w->ok = false;
  }
  w->header(kTagSequence, static_cast<std::size_t>(after - w->p));
  return w->ok ? Canon::kOk : Canon::kTooSmall;
}

// DER order of SET OF members: bytewise over the common length, then the shorter first.
bool der_less(const std::uint8_t* a, std::size_t a_len, const std::uint8_t* b, std::size_t b_len) {
  const int c = std::memcmp(a, b, a_len < b_len ? a_len : b_len);
  return c != 0 ? c < 0 : a_len < b_len;
}

// Sorts the `count` encoded members lying contiguously in [w->p, w->p + len), using the
// writer's free space as scratch.
bool sort_members(Writer* w, std::size_t count, std::size_t len) {
  if (count < 2) return true;
  if (w->free_bytes() < len) return false;
  std::uint8_t* const copy = w->start;
  std::memcpy(copy, w->p, len);
  const std::uint8_t* at[kMaxRdnMembers];
  std::size_t size[kMaxRdnMembers];
  std::uint8_t* q = copy;
  for (std::size_t i = 0; i < count; ++i) {
    std::uint8_t* body = q;
    std::size_t body_len = 0;
    if (mbedtls_asn1_get_tag(&body, copy + len, &body_len, kTagSequence) != 0) return false;
    at[i] = q;
    size[i] = static_cast<std::size_t>(body - q) + body_len;
    q = body + body_len;
  }
  for (std::size_t i = 1; i < count; ++i) {  // Insertion sort: at most kMaxRdnMembers.
    for (std::size_t j = i; j > 0 && der_less(at[j], size[j], at[j - 1], size[j - 1]); --j) {
      const std::uint8_t* t = at[j];
      at[j] = at[j - 1];
      at[j - 1] = t;
      const std::size_t s = size[j];
      size[j] = size[j - 1];
      size[j - 1] = s;
    }
  }
  std::uint8_t* out = w->p;
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(out, at[i], size[i]);
    out += size[i];
  }
  return true;
}

Status to_status(Canon c) {
  return c == Canon::kMalformed ? Status::kInvalidArgument : Status::kBufferTooSmall;
}

std::uint32_t little_endian32(const std::uint8_t* md) {
  return static_cast<std::uint32_t>(md[0]) | (static_cast<std::uint32_t>(md[1]) << 8) |
         (static_cast<std::uint32_t>(md[2]) << 16) | (static_cast<std::uint32_t>(md[3]) << 24);
}

}  // namespace

namespace detail {

std::uint32_t sha1_hash32(const std::uint8_t* data, std::size_t size) {
  std::uint8_t md[20];
  (void)mbedtls_sha1(data, size, md);
  return little_endian32(md);
}

std::uint32_t md5_hash32(const std::uint8_t* data, std::size_t size) {
  std::uint8_t md[16];
  (void)mbedtls_md5(data, size, md);
  return little_endian32(md);
}

std::uint32_t fnv1a(const std::uint8_t* data, std::size_t size) {
  std::uint32_t h = 2166136261U;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619U;
  return h;
}

std::uint32_t index_key(ConstBytes name, std::uint8_t* scratch) {
  std::size_t len = 0;
  if (canonical_name(name, MutableBytes{scratch, kMaxCanonicalNameBytes}, &len) == Status::kOk) {
    return sha1_hash32(scratch, len);
  }
  return fnv1a(name.data, name.size);
}

}  // namespace detail

Status canonical_name(ConstBytes name, MutableBytes out, std::size_t* size) {
  *size = 0;
  if (name.data == nullptr || out.data == nullptr) return Status::kInvalidArgument;
  auto* p = const_cast<std::uint8_t*>(name.data);
  std::size_t len = 0;
  if (mbedtls_asn1_get_tag(&p, name.data + name.size, &len, kTagSequence) != 0) {
    return Status::kInvalidArgument;
  }
  const std::uint8_t* const end = p + len;
  // Each RDN's contents, so they can be written last to first.
  std::uint8_t* rdn[kMaxRdns];
  std::size_t rdn_len[kMaxRdns];
  std::size_t rdns = 0;
  while (p < end) {
    if (rdns == kMaxRdns) return Status::kBufferTooSmall;
    if (mbedtls_asn1_get_tag(&p, end, &len, kTagSet) != 0) return Status::kInvalidArgument;
    rdn[rdns] = p;
    rdn_len[rdns++] = len;
    p += len;
  }
  Writer w{out.data, out.data + out.size};
  for (std::size_t r = rdns; r-- > 0;) {
    Attribute members[kMaxRdnMembers];
    std::size_t count = 0;
    std::uint8_t* q = rdn[r];
    const std::uint8_t* const rdn_end = q + rdn_len[r];
    while (q < rdn_end) {
      if (count == kMaxRdnMembers) return Status::kBufferTooSmall;
      if (!read_attribute(&q, rdn_end, &members[count++])) return Status::kInvalidArgument;
    }
    if (count == 0) continue;  // An empty RDN has no entries, so OpenSSL encodes nothing.
    const std::uint8_t* const after = w.p;
    for (std::size_t i = count; i-- > 0;) {
      const Canon c = write_attribute(&w, members[i]);
      if (c != Canon::kOk) return to_status(c);
    }
    const auto set_len = static_cast<std::size_t>(after - w.p);
    if (!sort_members(&w, count, set_len)) return Status::kBufferTooSmall;
    w.header(kTagSet, set_len);
    if (!w.ok) return Status::kBufferTooSmall;
  }
  *size = static_cast<std::size_t>(out.data + out.size - w.p);
  std::memmove(out.data, w.p, *size);
  return Status::kOk;
}

Status subject_name_hash(ConstBytes name, std::uint32_t* hash) {
  std::uint8_t canonical[kMaxCanonicalNameBytes];
  std::size_t size = 0;
  const Status s = canonical_name(name, MutableBytes{canonical, sizeof canonical}, &size);
  if (s != Status::kOk) return s;
  *hash = detail::sha1_hash32(canonical, size);
  return Status::kOk;
}

Status subject_name_hash_old(ConstBytes name, std::uint32_t* hash) {
  if (name.data == nullptr || name.size == 0) return Status::kInvalidArgument;
  *hash = detail::md5_hash32(name.data, name.size);
  return Status::kOk;
}

}  // namespace stepback::https

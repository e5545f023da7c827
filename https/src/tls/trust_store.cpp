#include "stepback/https/tls/trust_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)  // Linux and Android: getdents64 lists a directory without the heap.
#include <sys/syscall.h>
#endif

#include <mbedtls/asn1.h>
#include <mbedtls/asn1write.h>
#include <mbedtls/base64.h>
#include <mbedtls/md5.h>
#include <mbedtls/platform.h>
#include <mbedtls/sha1.h>
#include <mbedtls/sha256.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

namespace stepback::https {
namespace {

// ---------------------------------------------------------------------------------------
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
  std::size_t len = 0;
  if (cp < 0x80) {
    b[len++] = static_cast<std::uint8_t>(cp);
  } else if (cp < 0x800) {
    b[len++] = static_cast<std::uint8_t>(0xC0 | (cp >> 6));
    b[len++] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    if (cp >= 0xD800 && cp <= 0xDFFF) return false;
    b[len++] = static_cast<std::uint8_t>(0xE0 | (cp >> 12));
    b[len++] = static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    b[len++] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
  } else if (cp < 0x110000) {
    b[len++] = static_cast<std::uint8_t>(0xF0 | (cp >> 18));
    b[len++] = static_cast<std::uint8_t>(0x80 | ((cp >> 12) & 0x3F));
    b[len++] = static_cast<std::uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    b[len++] = static_cast<std::uint8_t>(0x80 | (cp & 0x3F));
  } else {
    return false;
  }
  if (cap - *n < len) return false;
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

// 32-bit FNV-1a, the index key of a name that has no canonical form here.
std::uint32_t fnv1a(const std::uint8_t* data, std::size_t size) {
  std::uint32_t h = 2166136261U;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619U;
  return h;
}

// The index key of a name: its subject-name hash when it has a canonical form (so names that
// match only canonically share a key), else FNV-1a of its bytes. `scratch` holds
// kMaxCanonicalNameBytes.
std::uint32_t index_key(ConstBytes name, std::uint8_t* scratch) {
  std::size_t len = 0;
  if (canonical_name(name, MutableBytes{scratch, kMaxCanonicalNameBytes}, &len) == Status::kOk) {
    return sha1_hash32(scratch, len);
  }
  return fnv1a(name.data, name.size);
}

bool same_bytes(ConstBytes a, ConstBytes b) {
  return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
}

// ---------------------------------------------------------------------------------------
// Certificates in a byte stream.

// Reads a DER header (tag and length) at der[*at] without requiring its contents: kOk,
// kWouldBlock when more bytes are needed, kInvalidArgument when malformed.
Status read_header(const std::uint8_t* der, std::size_t avail, std::size_t* at, std::uint8_t tag,
                   std::size_t* len) {
  if (*at >= avail) return Status::kWouldBlock;
  if (der[*at] != tag) return Status::kInvalidArgument;
  if (*at + 1 >= avail) return Status::kWouldBlock;
  const std::uint8_t first = der[*at + 1];
  std::size_t pos = *at + 2;
  if (first < 0x80) {
    *len = first;
  } else {
    const std::size_t n = first & 0x7Fu;
    if (n == 0 || n > 3) return Status::kInvalidArgument;  // Certificates stay under 16 MB.
    if (pos + n > avail) return Status::kWouldBlock;
    std::size_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | der[pos + i];
    *len = v;
    pos += n;
  }
  *at = pos;
  return Status::kOk;
}

// Skips the whole TLV with `tag` at der[*at]; its contents must be available.
Status skip_tlv(const std::uint8_t* der, std::size_t avail, std::size_t* at, std::uint8_t tag) {
  std::size_t pos = *at;
  std::size_t len = 0;
  const Status s = read_header(der, avail, &pos, tag, &len);
  if (s != Status::kOk) return s;
  if (pos + len > avail) return Status::kWouldBlock;
  *at = pos + len;
  return Status::kOk;
}

// Finds the subject Name of the certificate whose first `avail` DER bytes are `der`:
// kOk with *subject and *total (the certificate's whole length), kWouldBlock when more bytes
// are needed, kInvalidArgument when it is no certificate.
Status locate_subject(const std::uint8_t* der, std::size_t avail, ConstBytes* subject,
                      std::size_t* total) {
  std::size_t at = 0;
  std::size_t len = 0;
  Status s = read_header(der, avail, &at, kTagSequence, &len);  // Certificate.
  if (s != Status::kOk) return s;
  *total = at + len;
  s = read_header(der, avail, &at, kTagSequence, &len);  // TBSCertificate.
  if (s != Status::kOk) return s;
  if (at >= avail) return Status::kWouldBlock;
  if (der[at] == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED | 0)) {
    s = skip_tlv(der, avail, &at, der[at]);  // [0] version.
    if (s != Status::kOk) return s;
  }
  const std::uint8_t fields[] = {MBEDTLS_ASN1_INTEGER, kTagSequence, kTagSequence, kTagSequence};
  for (const std::uint8_t tag : fields) {  // serialNumber, signature, issuer, validity.
    s = skip_tlv(der, avail, &at, tag);
    if (s != Status::kOk) return s;
  }
  const std::size_t subject_at = at;
  s = skip_tlv(der, avail, &at, kTagSequence);
  if (s != Status::kOk) return s;
  *subject = ConstBytes{der + subject_at, at - subject_at};
  return Status::kOk;
}

// -1: not base64 (ends the certificate as malformed), -2: ignored white space, -3: padding.
struct Base64Table {
  std::int8_t v[256];
  constexpr Base64Table() : v() {
    for (int i = 0; i < 256; ++i) v[i] = -1;
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i)
      v[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
    v[static_cast<unsigned char>(' ')] = -2;
    v[static_cast<unsigned char>('\t')] = -2;
    v[static_cast<unsigned char>('\r')] = -2;
    v[static_cast<unsigned char>('=')] = -3;
  }
};
constexpr Base64Table kBase64;

constexpr char kBeginMarker[] = "-----BEGIN CERTIFICATE-----";
constexpr char kEndMarker[] = "-----END CERTIFICATE-----";
constexpr std::size_t kMarkerBytes = 40;  // Longest marker line kept for comparison.

// Whether the collected line `line` (n bytes, \r and trailing blanks allowed) is `marker`.
bool is_marker(const char* line, std::size_t n, const char* marker) {
  while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) --n;
  const std::size_t m = std::strlen(marker);
  return n == m && std::memcmp(line, marker, m) == 0;
}

bool is_hex_lower(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Whether `name` is "<8 hex digits>.<digits>", a c_rehash certificate link.
bool is_hash_name(const char* name) {
  for (int i = 0; i < 8; ++i) {
    if (!is_hex_lower(name[i])) return false;
  }
  if (name[8] != '.' || name[9] < '0' || name[9] > '9') return false;
  for (const char* c = name + 10; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return false;
  }
  return true;
}

bool is_directory(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_readable_file(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISREG(st.st_mode) && ::access(path, R_OK) == 0;
}

// Whether directory `path` holds a file named like a c_rehash link. Where listing needs the
// heap (opendir), it cannot be checked and counts as yes. `buffer` is scratch.
bool has_hash_names(const char* path, std::uint8_t* buffer, std::size_t size) {
#if defined(__linux__) && defined(SYS_getdents64)
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool found = false;
  for (;;) {
    const auto n = ::syscall(SYS_getdents64, fd, buffer, size);
    if (n <= 0) break;
    // struct linux_dirent64: u64 d_ino, s64 d_off, u16 d_reclen, u8 d_type, char d_name[].
    for (std::remove_cv_t<decltype(n)> at = 0; at < n && !found;) {
      std::uint16_t reclen = 0;
      std::memcpy(&reclen, buffer + at + 16, sizeof reclen);
      if (reclen == 0) break;
      found = is_hash_name(reinterpret_cast<const char*>(buffer + at + 19));
      at += reclen;
    }
    if (found) break;
  }
  ::close(fd);
  return found;
#else
  (void)path;
  (void)buffer;
  (void)size;
  return true;
#endif
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public functions.

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
  *hash = sha1_hash32(canonical, size);
  return Status::kOk;
}

Status subject_name_hash_old(ConstBytes name, std::uint32_t* hash) {
  if (name.data == nullptr || name.size == 0) return Status::kInvalidArgument;
  *hash = md5_hash32(name.data, name.size);
  return Status::kOk;
}

Status parse_public_key_pin(const char* text, PublicKeyPin* pin) {
  if (text == nullptr || pin == nullptr) return Status::kInvalidArgument;
  constexpr char kPrefix[] = "sha256/";
  if (std::strncmp(text, kPrefix, sizeof kPrefix - 1) == 0) text += sizeof kPrefix - 1;
  const std::size_t n = std::strlen(text);
  if (n != 44 || text[43] != '=' || text[42] == '=') return Status::kInvalidArgument;
  std::uint8_t out[48];
  std::size_t got = 0;
  if (mbedtls_base64_decode(out, sizeof out, &got, reinterpret_cast<const unsigned char*>(text),
                            n) != 0 ||
      got != sizeof pin->sha256) {
    return Status::kInvalidArgument;
  }
  std::memcpy(pin->sha256, out, sizeof pin->sha256);
  return Status::kOk;
}

PublicKeyPin public_key_pin_of(const mbedtls_x509_crt& cert) {
  PublicKeyPin pin;
  (void)mbedtls_sha256(cert.pk_raw.p, cert.pk_raw.len, pin.sha256, 0);
  return pin;
}

bool matches_pin(const mbedtls_x509_crt& cert, const PublicKeyPin* pins, std::size_t count) {
  if (pins == nullptr || count == 0 || cert.pk_raw.p == nullptr) return false;
  const PublicKeyPin own = public_key_pin_of(cert);
  for (std::size_t i = 0; i < count; ++i) {
    if (std::memcmp(own.sha256, pins[i].sha256, sizeof own.sha256) == 0) return true;
  }
  return false;
}

bool chain_matches_pins(const mbedtls_x509_crt* chain, const PublicKeyPin* pins,
                        std::size_t count) {
  for (const mbedtls_x509_crt* c = chain; c != nullptr; c = c->next) {
    if (c->version != 0 && matches_pin(*c, pins, count)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------
// The scanner: certificates in PEM text (BEGIN/END CERTIFICATE blocks among any other text)
// or concatenated DER, fed in chunks of any size. For each certificate it decodes only as
// far as the subject; when the subject is not the one looked up, the rest of the block is
// skipped without decoding, so a bundle costs one pass of memchr() for most of its bytes.

// Where an indexing scan records each certificate: its offset and its subject's index key.
struct IndexBuild {
  std::uint32_t* offset = nullptr;
  std::uint32_t* key = nullptr;
  std::size_t capacity = 0;
  std::size_t count = 0;
  bool overflow = false;
};

class TrustStore::Scan {
 public:
  // `issuer` empty: count certificates only. `issuer_canonical` null: byte-for-byte only.
  Scan(TrustStore& store, ConstBytes issuer, const std::uint8_t* issuer_canonical,
       std::size_t issuer_canonical_len, mbedtls_x509_crt** out)
      : store_(store),
        issuer_(issuer),
        issuer_canonical_(issuer_canonical),
        issuer_canonical_len_(issuer_canonical_len),
        out_(out) {}

  // Records every certificate into `index` instead of matching (set-up of bundles).
  void set_index(IndexBuild* index) { index_ = index; }

  // Starts a new file or buffer; `first_only` stops after its first certificate.
  void begin(bool first_only) {
    base_ = 0;
    mode_ = Mode::kDetect;
    line_start_ = true;
    skip_line_ = false;
    in_marker_ = false;
    in_data_ = false;
    first_only_ = first_only;
    done_ = false;
  }

  void feed(const std::uint8_t* d, std::size_t n) {
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

  // Whether this source needs no more bytes.
  bool done() const { return done_ || full(); }
  // Whether kMaxCandidates were found or the arena ran out.
  bool full() const { return parsed_ >= kMaxCandidates || status_ != Status::kOk; }
  Status status() const { return status_; }
  // Certificates whose subject was read, over all sources.
  std::uint32_t seen() const { return seen_; }

 private:
  enum class Mode : std::uint8_t { kDetect, kDer, kPemOutside, kPemBody };

  void start_certificate() {
    der_len_ = 0;
    total_ = 0;
    subject_known_ = false;
    rejected_ = false;
    matched_ = false;
    bits_ = 0;
    acc_ = 0;
    padded_ = false;
  }

  // Decides as soon as the subject has been decoded.
  void check_subject() {
    if (subject_known_ || rejected_) return;
    ConstBytes subject;
    const Status s = locate_subject(store_.der_, der_len_, &subject, &total_);
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
        index_->key[index_->count++] = index_key(subject, store_.subject_canonical_);
      }
      rejected_ = true;  // Nothing more to decode.
      return;
    }
    ++store_.stats_.certificates_scanned;
    matched_ = matches(subject);
    if (!matched_) rejected_ = true;
  }

  bool matches(ConstBytes subject) {
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

  // The certificate ended: parse it if it matched.
  void finish_certificate() {
    if (matched_ && der_len_ >= total_ && status_ == Status::kOk) parse();
    start_certificate();
    if (first_only_) done_ = true;
  }

  void parse() {
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

  // Concatenated DER certificates: each one's length comes from its first header, so only
  // the header is taken before the length is known, and never more than one certificate.
  void feed_der(const std::uint8_t* d, std::size_t n) {
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

  void feed_pem(const std::uint8_t* d, std::size_t n) {
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
          if (marker_len_ < kMarkerBytes) marker_[marker_len_++] = c;
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

  void end_marker_line() {
    if (mode_ == Mode::kPemOutside) {
      if (is_marker(marker_, marker_len_, kBeginMarker)) {
        mode_ = Mode::kPemBody;
        start_certificate();
        cert_offset_ = marker_offset_;
      }
      return;
    }
    // In a body, any line starting with '-' ends it; only END CERTIFICATE completes it, and
    // a BEGIN CERTIFICATE (the previous block was cut short) starts the next one.
    const bool begins = is_marker(marker_, marker_len_, kBeginMarker);
    if (!is_marker(marker_, marker_len_, kEndMarker)) matched_ = false;
    mode_ = Mode::kPemOutside;
    finish_certificate();
    if (begins && !done()) {
      mode_ = Mode::kPemBody;
      cert_offset_ = marker_offset_;
    }
  }

  // Base64 of a data line into the store's DER buffer.
  void decode(const std::uint8_t* s, std::size_t n) {
    if (rejected_) return;
    for (std::size_t k = 0; k < n; ++k) {
      const std::int8_t v = kBase64.v[s[k]];
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

  TrustStore& store_;
  const ConstBytes issuer_;
  const std::uint8_t* const issuer_canonical_;
  const std::size_t issuer_canonical_len_;
  mbedtls_x509_crt** const out_;
  IndexBuild* index_ = nullptr;
  Status status_ = Status::kOk;
  unsigned parsed_ = 0;
  std::uint32_t seen_ = 0;

  // The source.
  std::size_t base_ = 0;  // Bytes of the source fed before the current chunk.
  Mode mode_ = Mode::kDetect;
  bool first_only_ = false;
  bool done_ = false;
  bool line_start_ = true;
  bool skip_line_ = false;
  bool in_marker_ = false;
  bool in_data_ = false;
  char marker_[kMarkerBytes] = {};
  std::size_t marker_len_ = 0;
  std::size_t marker_offset_ = 0;  // Where the marker line starts in the source.

  // The certificate.
  std::size_t cert_offset_ = 0;  // Where it starts in the source (its BEGIN line for PEM).
  std::size_t der_len_ = 0;
  std::size_t total_ = 0;  // Its whole DER length, once the subject is known.
  bool subject_known_ = false;
  bool rejected_ = false;  // Not wanted (or malformed, or too big): skip the rest.
  bool matched_ = false;
  bool padded_ = false;
  unsigned bits_ = 0;
  std::uint32_t acc_ = 0;
};

// ---------------------------------------------------------------------------------------
// TrustStore.

Status TrustStore::add_path(Kind kind, const char* path, DirectoryHash hash) {
  if (path == nullptr) return Status::kInvalidArgument;
  const std::size_t len = std::strlen(path);
  if (len == 0 || len >= kMaxPathBytes) return Status::kInvalidArgument;
  if (count_ == kMaxSources) return Status::kBufferTooSmall;
  Source& s = sources_[count_];
  s = Source{};
  s.kind = kind;
  s.hash = hash;
  std::memcpy(s.path, path, len + 1);
  // "dir/" and "dir" name the same folder; keep one form.
  if (kind == Kind::kDirectory && len > 1 && s.path[len - 1] == '/') s.path[len - 1] = '\0';
  ++count_;
  return Status::kOk;
}

Status TrustStore::add_directory(const char* path, DirectoryHash hash) {
  if (path == nullptr || std::strlen(path) >= kMaxPathBytes || !is_directory(path)) {
    return Status::kInvalidArgument;
  }
  if (!has_hash_names(path, read_, sizeof read_)) return Status::kInvalidArgument;
  return add_path(Kind::kDirectory, path, hash);
}

Status TrustStore::add_bundle(const char* path) {
  if (path == nullptr || std::strlen(path) >= kMaxPathBytes || !is_readable_file(path)) {
    return Status::kInvalidArgument;
  }
  Status s = add_path(Kind::kBundle, path, DirectoryHash::kSubjectHash);
  if (s == Status::kOk) s = index_source(&sources_[count_ - 1]);
  if (s != Status::kOk && count_ > 0 && sources_[count_ - 1].kind == Kind::kBundle) --count_;
  return s;
}

Status TrustStore::add_memory(ConstBytes certificates) {
  if (certificates.data == nullptr || certificates.size == 0) return Status::kInvalidArgument;
  if (count_ == kMaxSources) return Status::kBufferTooSmall;
  Source& source = sources_[count_++];
  source = Source{};
  source.kind = Kind::kMemory;
  source.memory = certificates;
  const Status s = index_source(&source);
  if (s != Status::kOk) --count_;
  return s;
}

// Reads the source once, recording each certificate's offset and subject key. kInvalidArgument
// when it holds no certificate. A source that does not fit the index stays unindexed (scanned
// whole on each lookup).
Status TrustStore::index_source(Source* source) {
  mbedtls_x509_crt* none = nullptr;
  Scan scan(*this, ConstBytes{}, nullptr, 0, &none);
  IndexBuild index{index_offset_ + indexed_, index_key_ + indexed_, kMaxIndexed - indexed_};
  scan.set_index(&index);
  scan.begin(false);
  if (source->kind == Kind::kMemory) {
    scan.feed(source->memory.data, source->memory.size);
  } else {
    const int fd = ::open(source->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::kInvalidArgument;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return Status::kInvalidArgument;
    }
    source->size = static_cast<std::int64_t>(st.st_size);
    source->mtime = static_cast<std::int64_t>(st.st_mtime);
    source->inode = static_cast<std::uint64_t>(st.st_ino);
    read_all(fd, scan);
    ::close(fd);
  }
  if (scan.seen() == 0) return Status::kInvalidArgument;
  source->indexed = !index.overflow;
  if (source->indexed) {
    source->first = static_cast<std::uint16_t>(indexed_);
    source->count = static_cast<std::uint16_t>(index.count);
    indexed_ += index.count;
  }
  return Status::kOk;
}

Status TrustStore::add_platform_default() {
#if defined(__ANDROID__)
  // Android 14+ reads the roots from the Conscrypt APEX (updatable); earlier releases from
  // /system. Both name files with the old (MD5) subject hash.
  static const char* const kDirectories[] = {"/apex/com.android.conscrypt/cacerts",
                                             "/system/etc/security/cacerts"};
  for (const char* dir : kDirectories) {
    if (add_directory(dir, DirectoryHash::kSubjectHashOld) == Status::kOk) return Status::kOk;
  }
  return Status::kInvalidArgument;
#elif defined(__linux__)
  static const char* const kDirectories[] = {
      "/etc/ssl/certs",                                  // Debian, Ubuntu, Alpine, Arch, SUSE.
      "/etc/pki/ca-trust/extracted/pem/directory-hash",  // Fedora, RHEL 9.
  };
  for (const char* dir : kDirectories) {
    if (add_directory(dir, DirectoryHash::kSubjectHash) == Status::kOk) return Status::kOk;
  }
  static const char* const kBundles[] = {
      "/etc/ssl/certs/ca-certificates.crt",                 // Debian, Ubuntu, Gentoo, Arch.
      "/etc/pki/tls/certs/ca-bundle.crt",                   // Fedora, RHEL 6.
      "/etc/ssl/ca-bundle.pem",                             // OpenSUSE.
      "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // CentOS, RHEL 7.
      "/etc/ssl/cert.pem",                                  // Alpine.
  };
  for (const char* bundle : kBundles) {
    if (add_bundle(bundle) == Status::kOk) return Status::kOk;
  }
  return Status::kInvalidArgument;
#else
  // Apple and Windows keep their roots behind an API: see the top of trust_store.hpp.
  return Status::kInvalidArgument;
#endif
}

const char* TrustStore::source_path(std::size_t i) const {
  return i < count_ ? sources_[i].path : "";
}

void TrustStore::read_all(int fd, Scan& scan) {
  for (;;) {
    const ssize_t n = ::read(fd, read_, sizeof read_);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    scan.feed(read_, static_cast<std::size_t>(n));
    if (scan.done()) break;
  }
}

Status TrustStore::search_file(const char* path, Scan& scan) {
  int fd = -1;
  do {
    fd = ::open(path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno == ENOENT ? Status::kClosed : Status::kError;
  ++stats_.files_opened;
  read_all(fd, scan);
  ::close(fd);
  return Status::kOk;
}

Status TrustStore::search_bundle(const Source& source, std::uint32_t key, Scan& scan) {
  int fd = -1;
  do {
    fd = ::open(source.path, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Status::kError;
  ++stats_.files_opened;
  struct stat st {};
  const bool unchanged = source.indexed && ::fstat(fd, &st) == 0 &&
                         static_cast<std::int64_t>(st.st_size) == source.size &&
                         static_cast<std::int64_t>(st.st_mtime) == source.mtime &&
                         static_cast<std::uint64_t>(st.st_ino) == source.inode;
  if (!unchanged) {
    ++stats_.full_scans;
    scan.begin(false);
    read_all(fd, scan);
  } else {
    for (std::size_t i = source.first; i < source.first + source.count && !scan.full(); ++i) {
      if (index_key_[i] != key) continue;
      if (::lseek(fd, static_cast<off_t>(index_offset_[i]), SEEK_SET) < 0) break;
      scan.begin(/*first_only=*/true);
      read_all(fd, scan);
    }
  }
  ::close(fd);
  return Status::kOk;
}

void TrustStore::search_memory(const Source& source, std::uint32_t key, Scan& scan) {
  if (!source.indexed) {
    ++stats_.full_scans;
    scan.begin(false);
    scan.feed(source.memory.data, source.memory.size);
    return;
  }
  for (std::size_t i = source.first; i < source.first + source.count && !scan.full(); ++i) {
    if (index_key_[i] != key || index_offset_[i] >= source.memory.size) continue;
    scan.begin(/*first_only=*/true);
    scan.feed(source.memory.data + index_offset_[i], source.memory.size - index_offset_[i]);
  }
}

Status TrustStore::search_directory(const Source& source, std::uint32_t hash, Scan& scan) {
  // "<dir>/<8 hex digits>.<n>", built by hand: no snprintf on the lookup path.
  char path[kMaxPathBytes + 16];
  const std::size_t dir_len = std::strlen(source.path);
  std::memcpy(path, source.path, dir_len);
  std::size_t at = dir_len;
  path[at++] = '/';
  static const char kHex[] = "0123456789abcdef";
  for (int shift = 28; shift >= 0; shift -= 4) path[at++] = kHex[(hash >> shift) & 0xF];
  path[at++] = '.';
  for (unsigned n = 0; n < kMaxHashCollisions && !scan.full(); ++n) {
    std::size_t end = at;
    if (n >= 10) path[end++] = static_cast<char>('0' + n / 10);
    path[end++] = static_cast<char>('0' + n % 10);
    path[end] = '\0';
    scan.begin(/*first_only=*/true);  // c_rehash links one certificate per name.
    const Status s = search_file(path, scan);
    if (s == Status::kClosed) break;  // No <hash>.<n>: no more collisions.
  }
  return Status::kOk;
}

Status TrustStore::find_issuers(ConstBytes issuer, mbedtls_x509_crt** candidates) {
  ++stats_.lookups;
  if (candidates == nullptr || issuer.data == nullptr || issuer.size == 0) {
    return Status::kInvalidArgument;
  }
  std::size_t canonical_len = 0;
  const bool have_canonical =
      canonical_name(issuer, MutableBytes{issuer_canonical_, sizeof issuer_canonical_},
                     &canonical_len) == Status::kOk;
  bool hashed = false;
  bool hashed_old = false;
  std::uint32_t hash = 0;
  std::uint32_t hash_old = 0;
  if (have_canonical) {
    hash = sha1_hash32(issuer_canonical_, canonical_len);
    hashed = true;
  }
  // The index key: the same function as index_key() computed at set-up.
  const std::uint32_t key = have_canonical ? hash : fnv1a(issuer.data, issuer.size);
  Scan scan(*this, issuer, have_canonical ? issuer_canonical_ : nullptr, canonical_len, candidates);
  for (std::size_t i = 0; i < count_ && !scan.full(); ++i) {
    const Source& source = sources_[i];
    switch (source.kind) {
      case Kind::kDirectory:
        if (source.hash != DirectoryHash::kSubjectHashOld && hashed) {
          (void)search_directory(source, hash, scan);
        }
        if (source.hash != DirectoryHash::kSubjectHash) {
          if (!hashed_old) hash_old = md5_hash32(issuer.data, issuer.size);
          hashed_old = true;
          (void)search_directory(source, hash_old, scan);
        }
        break;
      case Kind::kBundle:
        (void)search_bundle(source, key, scan);
        break;
      case Kind::kMemory:
        search_memory(source, key, scan);
        break;
    }
  }
  // A chain head that nothing was parsed into is no candidate.
  if (*candidates != nullptr && (*candidates)->version == 0) {
    mbedtls_x509_crt_free(*candidates);
    mbedtls_free(*candidates);
    *candidates = nullptr;
  }
  return scan.status();
}

int TrustStore::ca_callback(void* store, const mbedtls_x509_crt* child,
                            mbedtls_x509_crt** candidates) {
  *candidates = nullptr;
  auto* self = static_cast<TrustStore*>(store);
  const Status s =
      self->find_issuers(ConstBytes{child->issuer_raw.p, child->issuer_raw.len}, candidates);
  // Nothing found is not an error: mbedTLS then reports the chain as not trusted. Running out
  // of arena is (mbedTLS turns any non-zero value into MBEDTLS_ERR_X509_FATAL_ERROR).
  return s == Status::kBufferTooSmall ? MBEDTLS_ERR_X509_ALLOC_FAILED : 0;
}

}  // namespace stepback::https

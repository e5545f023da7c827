// libFuzzer target for the digest announcements a response carries: IntegrityCheck's
// x-goog-hash and Content-MD5 readers (https/src/integrity/integrity.cpp) and the upload's scan of
// the object metadata JSON for "crc32c" and "md5Hash" (transfer/src/metadata_scan.cpp).
// The input's first 3 bytes choose where the scan's input is cut into pieces; the rest is
// the field value and the JSON body. The target aborts unless:
//   - add_x_goog_hash() and add_content_md5() (directly and through add_header()) take
//     exactly what a reference written here apart takes: comma-separated name=base64 items,
//     names case-insensitive, optional whitespace, strict canonical base64 of 4 (crc32c) or
//     16 (md5) bytes, two different values of one algorithm remembered as a conflict; the
//     check's state is read back through compare_with() with probe digests;
//   - the scan leaves the same expectations whether the body comes whole, in the chosen
//     pieces, or byte by byte (it is streamed in pieces of any size);
//   - a top-level "crc32c" or "md5Hash" string (without quotes, backslashes or commas, at
//     most 32 characters) in an object resource is taken as add_x_goog_hash() takes
//     "crc32c=VALUE" or "md5=VALUE", and the same value nested one level down is not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepback/https/integrity/integrity.hpp"
#include "stepback/transfer/detail/metadata_scan.hpp"

namespace {

using stepback::https::ConstBytes;
using stepback::https::Digest;
using stepback::https::DigestComparison;
using stepback::https::IntegrityCheck;
using stepback::https::IntegrityResult;
using stepback::https::IntegrityStatus;
using stepback::https::kCrc32cDigestSize;
using stepback::https::kMd5DigestSize;
using stepback::transfer::detail::MetadataDigestScan;

void require(bool condition) {
  if (!condition) std::abort();
}

// ---- Reference base64 and x-goog-hash ----------------------------------------------------

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string encode(const std::uint8_t* bytes, std::size_t size) {
  std::string out;
  for (std::size_t i = 0; i < size; i += 3) {
    const std::size_t n = size - i < 3 ? size - i : 3;
    std::uint32_t bits = std::uint32_t{bytes[i]} << 16;
    if (n > 1) bits |= std::uint32_t{bytes[i + 1]} << 8;
    if (n > 2) bits |= bytes[i + 2];
    out += kAlphabet[bits >> 18 & 63];
    out += kAlphabet[bits >> 12 & 63];
    out += n > 1 ? kAlphabet[bits >> 6 & 63] : '=';
    out += n > 2 ? kAlphabet[bits & 63] : '=';
  }
  return out;
}

// Strict decoding, by the one property that defines it: `text` is accepted exactly when it
// is the encoding of some `size` bytes. Those bytes are read leniently from the text's
// leading characters (anything outside the alphabet as 0) and encoded again.
bool decode(std::string_view text, std::uint8_t* out, std::size_t size) {
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t k = 0;
  for (std::size_t j = 0; k < size; ++j) {
    if (j >= text.size()) return false;
    const char* at = std::strchr(kAlphabet, text[j]);
    const std::uint32_t v =
        at != nullptr && text[j] != '\0' ? static_cast<std::uint32_t>(at - kAlphabet) : 0;
    acc = (acc << 6 | v) & 0xFFFFFFu;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[k++] = static_cast<std::uint8_t>(acc >> bits);
    }
  }
  return encode(out, size) == text;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool equals_lower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// What an IntegrityCheck holds for one algorithm, as its header documents it.
struct Expectation {
  bool present = false;
  bool conflict = false;
  Digest first;
  Digest other;  // The last announced value that differs from the first.

  void add(const Digest& d) {
    if (!present) {
      present = true;
      first = d;
    } else if (d != first) {
      conflict = true;
      other = d;
    }
  }
};

struct Model {
  Expectation crc32c;
  Expectation md5;
};

Digest crc_digest(const std::uint8_t (&raw)[kCrc32cDigestSize]) {
  return Digest::crc32c(std::uint32_t{raw[0]} << 24 | std::uint32_t{raw[1]} << 16 |
                        std::uint32_t{raw[2]} << 8 | raw[3]);
}

// Returns whether an item was taken.
bool reference_x_goog_hash(std::string_view value, Model* m) {
  bool taken = false;
  for (;;) {
    const std::size_t comma = value.find(',');
    const std::string_view item = trim(value.substr(0, comma));
    const std::size_t eq = item.find('=');
    if (eq != std::string_view::npos) {
      const std::string_view name = trim(item.substr(0, eq));
      const std::string_view b64 = trim(item.substr(eq + 1));
      if (equals_lower(name, "crc32c")) {
        std::uint8_t raw[kCrc32cDigestSize];
        if (decode(b64, raw, sizeof raw)) {
          m->crc32c.add(crc_digest(raw));
          taken = true;
        }
      } else if (equals_lower(name, "md5")) {
        std::uint8_t raw[kMd5DigestSize];
        if (decode(b64, raw, sizeof raw)) {
          m->md5.add(Digest::md5(raw));
          taken = true;
        }
      }
    }
    if (comma == std::string_view::npos) return taken;
    value.remove_prefix(comma + 1);
  }
}

bool reference_content_md5(std::string_view value, Model* m) {
  std::uint8_t raw[kMd5DigestSize];
  if (!decode(trim(value), raw, sizeof raw)) return false;
  m->md5.add(Digest::md5(raw));
  return true;
}

// ---- Reading a check's state back ----------------------------------------------------------

Digest filled(bool crc, std::uint8_t byte) {
  if (crc) return Digest::crc32c(byte == 0 ? 0u : 0xFFFFFFFFu);
  std::uint8_t raw[kMd5DigestSize];
  std::memset(raw, byte, sizeof raw);
  return Digest::md5(raw);
}

IntegrityResult probe(const IntegrityCheck& c, bool crc, const Digest& d) {
  return crc ? c.compare_with(&d, nullptr) : c.compare_with(nullptr, &d);
}

// Requires `c` to hold what `e` says for one algorithm (and nothing for the other, `none`).
void require_algorithm(const IntegrityCheck& c, bool crc, const Expectation& e) {
  std::vector<Digest> probes = {filled(crc, 0), filled(crc, 0xFF)};
  if (e.present) probes.push_back(e.first);
  if (e.conflict) probes.push_back(e.other);
  for (const Digest& p : probes) {
    const IntegrityResult r = probe(c, crc, p);
    const DigestComparison& got = crc ? r.crc32c : r.md5;
    require(!(crc ? r.md5 : r.crc32c).checked);
    require(got.checked == e.present);
    if (!e.present) {
      require(r.status == IntegrityStatus::kNoExpectation);
      continue;
    }
    const bool match = p == e.first && !e.conflict;
    const Digest& expected = p != e.first ? e.first : e.conflict ? e.other : e.first;
    require(got.got == p && got.match == match && got.expected == expected);
    require(r.status == (match ? IntegrityStatus::kMatch : IntegrityStatus::kMismatch));
  }
}

void require_state(const IntegrityCheck& c, const Model& m) {
  require(c.has_expectation() == (m.crc32c.present || m.md5.present));
  require_algorithm(c, true, m.crc32c);
  require_algorithm(c, false, m.md5);
}

bool same(const DigestComparison& a, const DigestComparison& b) {
  return a.checked == b.checked && a.match == b.match && a.expected == b.expected && a.got == b.got;
}

// Requires `b` to answer every probe as `a` does; the probes include what `a` reports as
// expected, so any difference in the held values shows.
void require_same_state(const IntegrityCheck& a, const IntegrityCheck& b) {
  require(a.has_expectation() == b.has_expectation());
  for (const bool crc : {true, false}) {
    std::vector<Digest> probes = {filled(crc, 0), filled(crc, 0xFF)};
    for (std::size_t i = 0; i < 2; ++i) {
      const IntegrityResult r = probe(a, crc, probes[i]);
      const DigestComparison& got = crc ? r.crc32c : r.md5;
      if (got.checked) probes.push_back(got.expected);
    }
    for (const Digest& p : probes) {
      const IntegrityResult ra = probe(a, crc, p);
      const IntegrityResult rb = probe(b, crc, p);
      require(ra.status == rb.status && same(ra.crc32c, rb.crc32c) && same(ra.md5, rb.md5));
    }
  }
}

// ---- The metadata scan ----------------------------------------------------------------------

void scan(const std::uint8_t* body, std::size_t size, const std::size_t* cuts,
          std::size_t cut_count, IntegrityCheck* out) {
  MetadataDigestScan s;
  std::size_t begin = 0;
  for (std::size_t k = 0; k <= cut_count; ++k) {
    const std::size_t end = k < cut_count ? cuts[k] : size;
    s.feed(ConstBytes{body + begin, end - begin}, out);
    begin = end;
  }
}

void scan_text(const std::string& body, IntegrityCheck* out) {
  MetadataDigestScan s;
  s.feed(ConstBytes{reinterpret_cast<const std::uint8_t*>(body.data()), body.size()}, out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kParams = 3;
  if (size < kParams) return 0;
  const std::uint8_t* body = data + kParams;
  const std::size_t n = size - kParams;
  const std::string_view text(reinterpret_cast<const char*>(body), n);

  // The field readers against the reference.
  {
    IntegrityCheck check;
    Model model;
    const bool expected = reference_x_goog_hash(text, &model);
    require(check.add_x_goog_hash(text) == expected);
    require_state(check, model);
    IntegrityCheck by_name;
    require(by_name.add_header("X-Goog-Hash", text) == expected);
    require_state(by_name, model);
    // A second field line adds to the first.
    const bool again = reference_x_goog_hash(text, &model);
    require(check.add_x_goog_hash(text) == again);
    require_state(check, model);
  }
  {
    IntegrityCheck check;
    Model model;
    const bool expected = reference_content_md5(text, &model);
    require(check.add_content_md5(text) == expected);
    require_state(check, model);
    IntegrityCheck by_name;
    require(by_name.add_header("content-MD5", text) == expected);
    require_state(by_name, model);
    IntegrityCheck other;
    require(!other.add_header("x-goog-hashes", text) && !other.has_expectation());
  }

  // The scan: whole, in pieces, byte by byte.
  std::size_t cuts[kParams];
  for (std::size_t i = 0; i < kParams; ++i) {
    std::size_t cut = data[i] * n / 255;
    if (i > 0 && cut < cuts[i - 1]) cut = cuts[i - 1];
    cuts[i] = cut;
  }
  IntegrityCheck whole;
  scan(body, n, nullptr, 0, &whole);
  IntegrityCheck pieces;
  scan(body, n, cuts, kParams, &pieces);
  require_same_state(whole, pieces);
  require_same_state(pieces, whole);
  if (n <= 512) {
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < n; ++i) every.push_back(i);
    IntegrityCheck bytewise;
    scan(body, n, every.data(), every.size(), &bytewise);
    require_same_state(whole, bytewise);
  }

  // The text as the digest values of an object resource.
  if (n <= 32 && text.find_first_of("\"\\,") == std::string_view::npos) {
    const std::string value(text);
    for (const bool crc : {true, false}) {
      const std::string key = crc ? "crc32c" : "md5Hash";
      Model model;
      (void)reference_x_goog_hash((crc ? "crc32c=" : "md5=") + value, &model);
      IntegrityCheck top;
      scan_text(R"({"kind":"storage#object","name":"a/b.txt","size":"12",")" + key + R"(":")" +
                    value + R"(","metadata":{"k":"v"}})",
                &top);
      require_state(top, model);
      IntegrityCheck nested;
      scan_text(R"({"kind":"storage#object","metadata":{")" + key + R"(":")" + value + R"("}})",
                &nested);
      require(!nested.has_expectation());
    }
  }
  return 0;
}

// google.rpc.RetryInfo from a JSON error body: one validating pass over the caller's bytes
// (RFC 8259), with an explicit stack of at most kJsonMaxDepth levels instead of recursion.
// Strings are never copied whole: as each one streams past, its decoded characters are
// compared with the two keys of interest, the tail of a type URL is kept, and the first 32
// characters are kept for a possible "retryDelay" value.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>

#include "stepback/https/retry_info.hpp"

namespace stepback::https {
namespace {

constexpr std::size_t kUrlTail = 21;  // Length of "/google.rpc.RetryInfo".
// Longer than any valid Duration string ("315576000000.000000000s" is 23 characters).
constexpr std::size_t kDelayText = 32;
// Stands for every character outside ASCII: no key or value of interest contains one.
constexpr std::uint8_t kNonAscii = 0xFF;

// What a decoded string turned out to be, learned while it streamed past.
class StringProbe {
 public:
  // Takes the next decoded character (a Unicode code point).
  void add(std::uint32_t code_point) {
    const auto c = code_point < 0x80 ? static_cast<std::uint8_t>(code_point) : kNonAscii;
    type_key_.add(c);
    delay_key_.add(c);
    if (size_ >= kUrlTail) {
      std::memmove(tail_, tail_ + 1, kUrlTail - 1);
      tail_[kUrlTail - 1] = c;
    } else {
      tail_[size_] = c;
    }
    if (size_ < kDelayText) text_[size_] = c;
    ++size_;
  }
  // Whether the string is exactly "@type".
  bool is_type_key() const { return type_key_.matched(); }
  // Whether the string is exactly "retryDelay".
  bool is_delay_key() const { return delay_key_.matched(); }
  // Whether the string is a RetryInfo type URL.
  bool is_retry_info_url() const {
    return is_retry_info_type_url(ConstBytes{tail_, size_ < kUrlTail ? size_ : kUrlTail});
  }
  // The string read as a Duration; nullopt when it is too long to be one.
  std::optional<Millis> duration() const {
    if (size_ > kDelayText) return std::nullopt;
    return parse_duration_string(ConstBytes{text_, size_});
  }

 private:
  // Compares a stream of characters with a fixed word.
  class Word {
   public:
    explicit Word(const char* word) : word_(word) {}
    void add(std::uint8_t c) {
      ok_ = ok_ && word_[at_] != '\0' && static_cast<std::uint8_t>(word_[at_]) == c;
      if (ok_) ++at_;
    }
    bool matched() const { return ok_ && word_[at_] == '\0'; }

   private:
    const char* word_;
    std::size_t at_ = 0;
    bool ok_ = true;
  };

  Word type_key_{"@type"};
  Word delay_key_{"retryDelay"};
  std::uint8_t tail_[kUrlTail] = {};
  std::uint8_t text_[kDelayText] = {};
  std::size_t size_ = 0;
};

// Which key of an object the next value belongs to.
enum class Key : std::uint8_t { kOther, kType, kDelay };

// One open array or object, with what an object has said about itself so far.
struct Level {
  bool is_object = false;
  Key key = Key::kOther;          // Objects: the key of the value being read.
  bool names_retry_info = false;  // Objects: "@type" is a RetryInfo URL (last one wins).
  bool has_delay = false;         // Objects: "retryDelay" is a valid Duration string.
  Millis delay{};
};

static_assert(sizeof(Level) <= 16, "kJsonMaxDepth levels must stay small on the stack");

// What the scanner expects next.
enum class Expect : std::uint8_t {
  kValue,         // Any value.
  kValueOrClose,  // Right after '[': a value or ']'.
  kKeyOrClose,    // Right after '{': a key or '}'.
  kKey,           // After ',' in an object.
  kColon,         // After a key.
  kCommaOrClose,  // After a value inside a container.
};

class Scanner {
 public:
  explicit Scanner(ConstBytes body) : p_(body.data), end_(body.data + body.size) {}

  // Validates the whole document and returns the first RetryInfo delay it holds.
  std::optional<Millis> run() {
    skip_byte_order_mark();
    Expect expect = Expect::kValue;
    for (;;) {
      skip_whitespace();
      if (depth_ == 0 && done_) return p_ == end_ ? found_ : std::nullopt;
      if (p_ == end_) return std::nullopt;
      bool ok = false;
      switch (expect) {
        case Expect::kValueOrClose:
          if (*p_ == ']') {
            ++p_;
            ok = close(false, expect);
            break;
          }
          [[fallthrough]];
        case Expect::kValue:
          ok = value(expect);
          break;
        case Expect::kKeyOrClose:
          if (*p_ == '}') {
            ++p_;
            ok = close(true, expect);
            break;
          }
          [[fallthrough]];
        case Expect::kKey:
          ok = key();
          expect = Expect::kColon;
          break;
        case Expect::kColon:
          ok = *p_++ == ':';
          expect = Expect::kValue;
          break;
        case Expect::kCommaOrClose:
          ok = comma_or_close(expect);
          break;
      }
      if (!ok) return std::nullopt;
    }
  }

 private:
  Level& top() { return stack_[depth_ - 1]; }

  void skip_byte_order_mark() {
    if (end_ - p_ >= 3 && p_[0] == 0xEF && p_[1] == 0xBB && p_[2] == 0xBF) p_ += 3;
  }
  void skip_whitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  // Reads one value, or opens a container; sets what comes next.
  bool value(Expect& expect) {
    const std::uint8_t c = *p_;
    if (c == '{' || c == '[') {
      if (depth_ == kJsonMaxDepth) return false;
      forget_key();  // A container is never a valid "@type" or "retryDelay".
      ++p_;
      stack_[depth_++] = Level{c == '{'};
      expect = c == '{' ? Expect::kKeyOrClose : Expect::kValueOrClose;
      return true;
    }
    bool ok = false;
    if (c == '"') {
      ++p_;
      StringProbe probe;
      ok = string(probe);
      if (ok) record_string(probe);
    } else {
      ok = (c == '-' || (c >= '0' && c <= '9')) ? number() : literal();
      if (ok) forget_key();
    }
    after_value(expect);
    return ok;
  }

  // Reads an object key and remembers whether it is one of interest.
  bool key() {
    if (*p_++ != '"') return false;
    StringProbe probe;
    if (!string(probe)) return false;
    top().key = probe.is_type_key() ? Key::kType : probe.is_delay_key() ? Key::kDelay : Key::kOther;
    return true;
  }

  bool comma_or_close(Expect& expect) {
    const std::uint8_t c = *p_++;
    const bool in_object = top().is_object;
    if (c == ',') {
      expect = in_object ? Expect::kKey : Expect::kValue;
      return true;
    }
    if ((in_object && c == '}') || (!in_object && c == ']')) return close(in_object, expect);
    return false;
  }

  // Closes the innermost container, which must be an object when `object` says so; a
  // closing object that named RetryInfo and carried a valid delay answers the search.
  bool close(bool object, Expect& expect) {
    const Level& level = top();
    if (level.is_object != object) return false;
    if (object && level.names_retry_info && level.has_delay && !found_) found_ = level.delay;
    --depth_;
    after_value(expect);
    return true;
  }

  void after_value(Expect& expect) {
    if (depth_ == 0) {
      done_ = true;
    } else {
      expect = Expect::kCommaOrClose;
    }
  }

  // The value for the current key was not a string: it can neither name nor delay.
  void forget_key() {
    if (depth_ == 0 || !top().is_object) return;
    Level& level = top();
    if (level.key == Key::kType) level.names_retry_info = false;
    if (level.key == Key::kDelay) level.has_delay = false;
    level.key = Key::kOther;
  }

  void record_string(const StringProbe& probe) {
    if (depth_ == 0 || !top().is_object) return;
    Level& level = top();
    if (level.key == Key::kType) level.names_retry_info = probe.is_retry_info_url();
    if (level.key == Key::kDelay) {
      const std::optional<Millis> delay = probe.duration();
      level.has_delay = delay.has_value();
      level.delay = delay.value_or(Millis{});
    }
    level.key = Key::kOther;
  }

  // Reads the rest of a string after its opening quote, feeding decoded characters to
  // `probe`.
  bool string(StringProbe& probe) {
    while (p_ != end_) {
      const std::uint8_t c = *p_++;
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') {
        probe.add(c);
        continue;
      }
      std::uint32_t code_point = 0;
      if (!escape(code_point)) return false;
      probe.add(code_point);
    }
    return false;
  }

  // Reads an escape after its backslash; \uXXXX surrogate pairs are joined and a lone
  // surrogate is malformed.
  bool escape(std::uint32_t& code_point) {
    if (p_ == end_) return false;
    switch (*p_++) {
      case '"':
        code_point = '"';
        return true;
      case '\\':
        code_point = '\\';
        return true;
      case '/':
        code_point = '/';
        return true;
      case 'b':
        code_point = '\b';
        return true;
      case 'f':
        code_point = '\f';
        return true;
      case 'n':
        code_point = '\n';
        return true;
      case 'r':
        code_point = '\r';
        return true;
      case 't':
        code_point = '\t';
        return true;
      case 'u':
        break;
      default:
        return false;
    }
    if (!hex4(code_point)) return false;
    if (code_point >= 0xDC00 && code_point <= 0xDFFF) return false;
    if (code_point < 0xD800 || code_point > 0xDBFF) return true;
    std::uint32_t low = 0;
    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
    p_ += 2;
    if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
    code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
    return true;
  }

  bool hex4(std::uint32_t& out) {
    if (end_ - p_ < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const std::uint8_t c = *p_++;
      std::uint32_t digit = 0;
      if (c >= '0' && c <= '9') {
        digit = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
      out = (out << 4) | digit;
    }
    return true;
  }

  // number = [ "-" ] ( "0" / 1-9 *DIGIT ) [ "." 1*DIGIT ] [ ( "e" / "E" ) [ "+" / "-" ] 1*DIGIT ]
  bool number() {
    if (*p_ == '-') ++p_;
    if (p_ == end_) return false;
    if (*p_ == '0') {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    if (p_ != end_ && *p_ == '.') {
      ++p_;
      if (!digits()) return false;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    return true;
  }

  // One or more decimal digits.
  bool digits() {
    const std::uint8_t* start = p_;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ != start;
  }

  bool literal() {
    for (const char* word : {"true", "false", "null"}) {
      const std::size_t n = std::strlen(word);
      if (static_cast<std::size_t>(end_ - p_) >= n && std::memcmp(p_, word, n) == 0) {
        p_ += n;
        return true;
      }
    }
    return false;
  }

  const std::uint8_t* p_;
  const std::uint8_t* const end_;
  Level stack_[kJsonMaxDepth];
  std::size_t depth_ = 0;
  bool done_ = false;
  std::optional<Millis> found_;
};

}  // namespace

std::optional<Millis> retry_delay_from_status_json(ConstBytes body) {
  if (body.data == nullptr) return std::nullopt;
  return Scanner(body).run();
}

}  // namespace stepback::https

// google.rpc.RetryInfo from a JSON error body: one validating pass over the caller's bytes
// (RFC 8259), with an explicit stack of at most kJsonMaxDepth levels instead of recursion;
// the tokens are read by JsonCursor (stepback/https/detail/json_cursor.hpp).
// Strings are never copied whole: as each one streams past, its decoded characters are
// compared with the two keys of interest, the tail of a type URL is kept, and the first 32
// characters are kept for a possible "retryDelay" value.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "stepback/https/detail/json_cursor.hpp"
#include "stepback/https/http/retry_info.hpp"

namespace stepback::https {
namespace {

constexpr std::size_t kUrlTail = kRetryInfoTypeUrlTail;
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

class Scanner : JsonCursor {
 public:
  explicit Scanner(ConstBytes body) : JsonCursor(body.data, body.data + body.size) {}

  // Validates the whole document and returns the first RetryInfo delay it holds.
  std::optional<Millis> run() { return walk(*this) ? found_ : std::nullopt; }

 private:
  friend class JsonCursor;  // walk() calls value, key, close, in_object and finished.

  Level& top() { return stack_[depth_ - 1]; }
  bool in_object() { return top().is_object; }
  bool finished() const { return depth_ == 0 && done_; }

  // Reads one value, or opens a container; sets what comes next.
  bool value(JsonExpect& expect) {
    const std::uint8_t c = *p_;
    if (c == '{' || c == '[') {
      if (depth_ == kJsonMaxDepth) return false;
      forget_key();  // A container is never a valid "@type" or "retryDelay".
      ++p_;
      stack_[depth_++] = Level{c == '{'};
      expect = c == '{' ? JsonExpect::kKeyOrClose : JsonExpect::kValueOrClose;
      return true;
    }
    bool ok = false;
    if (c == '"') {
      ++p_;
      StringProbe probe;
      ok = json_string(&probe);
      if (ok) record_string(probe);
    } else {
      ok = (c == '-' || (c >= '0' && c <= '9')) ? json_number()
                                                : json_literal() != JsonLiteral::kNone;
      if (ok) forget_key();
    }
    after_value(expect);
    return ok;
  }

  // Reads an object key and remembers whether it is one of interest.
  bool key() {
    if (*p_++ != '"') return false;
    StringProbe probe;
    if (!json_string(&probe)) return false;
    top().key = probe.is_type_key() ? Key::kType : probe.is_delay_key() ? Key::kDelay : Key::kOther;
    return true;
  }

  // Closes the innermost container, which must be an object when `object` says so; a
  // closing object that named RetryInfo and carried a valid delay answers the search.
  bool close(bool object, JsonExpect& expect) {
    const Level& level = top();
    if (level.is_object != object) return false;
    if (object && level.names_retry_info && level.has_delay && !found_) found_ = level.delay;
    --depth_;
    after_value(expect);
    return true;
  }

  void after_value(JsonExpect& expect) {
    if (depth_ == 0) {
      done_ = true;
    } else {
      expect = JsonExpect::kCommaOrClose;
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

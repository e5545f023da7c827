// The tokens of JSON (RFC 8259) read in place from a byte range: strings (escapes decoded as
// they stream past, surrogate pairs joined, a lone surrogate refused), numbers, the three
// literals, white space and a UTF-8 byte order mark, and walk() over the grammar of one
// document. The library's two validating streaming readers are built on it:
// google.rpc.RetryInfo in error bodies (https/src/http/retry_info_json.cpp) and
// google.longrunning.Operation (transfer/src/operation_json.cpp). Each derives from
// JsonCursor and keeps its own stack of open containers and what it remembers of them.
// Internal to the library: not a general JSON API.
#ifndef STEPBACK_HTTPS_DETAIL_JSON_CURSOR_HPP_
#define STEPBACK_HTTPS_DETAIL_JSON_CURSOR_HPP_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace stepback::https {

// The literal json_literal() read.
enum class JsonLiteral : std::uint8_t { kNone, kTrue, kFalse, kNull };

// What JsonCursor::walk() expects next.
enum class JsonExpect : std::uint8_t {
  kValue,         // Any value.
  kValueOrClose,  // Right after '[': a value or ']'.
  kKeyOrClose,    // Right after '{': a key or '}'.
  kKey,           // After ',' in an object.
  kColon,         // After a key.
  kCommaOrClose,  // After a value inside a container.
};

class JsonCursor {
 protected:
  JsonCursor(const std::uint8_t* begin, const std::uint8_t* end) : p_(begin), end_(end) {}

  // Reads one document (after an optional byte order mark, white space around it and nothing
  // after it), calling on the reader, which derives from JsonCursor (and befriends it):
  //   bool value(JsonExpect& next)  at a value: opens a container (setting `next` to
  //                                 kKeyOrClose or kValueOrClose) or reads a scalar (then
  //                                 kCommaOrClose), with p_ at its first byte;
  //   bool key()                    at an object key, p_ at its opening quote;
  //   bool close(bool object, JsonExpect& next)  after a ']' (object false) or '}';
  //   bool in_object()              whether the innermost open container is an object;
  //   bool finished()               whether the top-level value has been read.
  // False when the bytes are not that, or when a call returns false.
  template <typename Reader>
  bool walk(Reader& reader) {
    skip_byte_order_mark();
    JsonExpect expect = JsonExpect::kValue;
    for (;;) {
      skip_whitespace();
      if (reader.finished()) return p_ == end_;
      if (p_ == end_) return false;
      bool ok = false;
      switch (expect) {
        case JsonExpect::kValueOrClose:
          if (*p_ == ']') {
            ++p_;
            ok = reader.close(false, expect);
            break;
          }
          [[fallthrough]];
        case JsonExpect::kValue:
          ok = reader.value(expect);
          break;
        case JsonExpect::kKeyOrClose:
          if (*p_ == '}') {
            ++p_;
            ok = reader.close(true, expect);
            break;
          }
          [[fallthrough]];
        case JsonExpect::kKey:
          ok = reader.key();
          expect = JsonExpect::kColon;
          break;
        case JsonExpect::kColon:
          ok = *p_++ == ':';
          expect = JsonExpect::kValue;
          break;
        case JsonExpect::kCommaOrClose: {
          const std::uint8_t c = *p_++;
          const bool object = reader.in_object();
          if (c == ',') {
            expect = object ? JsonExpect::kKey : JsonExpect::kValue;
            ok = true;
          } else if ((object && c == '}') || (!object && c == ']')) {
            ok = reader.close(object, expect);
          }
          break;
        }
      }
      if (!ok) return false;
    }
  }

  void skip_byte_order_mark() {
    if (end_ - p_ >= 3 && p_[0] == 0xEF && p_[1] == 0xBB && p_[2] == 0xBF) p_ += 3;
  }
  void skip_whitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  // Reads the rest of a string after its opening quote, handing each decoded character to
  // probe->add(std::uint32_t) when `probe` is not null: a Unicode code point for an escape,
  // the byte itself otherwise (bytes of UTF-8 sequences one by one).
  template <typename Probe>
  bool json_string(Probe* probe) {
    while (p_ != end_) {
      const std::uint8_t c = *p_++;
      if (c == '"') return true;
      if (c < 0x20) return false;
      std::uint32_t code_point = c;
      if (c == '\\' && !escape(code_point)) return false;
      if (probe != nullptr) probe->add(code_point);
    }
    return false;
  }

  // number = [ "-" ] ( "0" / 1-9 *DIGIT ) [ "." 1*DIGIT ] [ ( "e" / "E" ) [ "+" / "-" ] 1*DIGIT ]
  // Needs p_ != end_. *integral (when given) becomes false when a fraction or an exponent
  // follows.
  bool json_number(bool* integral = nullptr) {
    if (*p_ == '-') ++p_;
    if (p_ == end_) return false;
    if (*p_ == '0') {
      ++p_;
    } else if (!digits()) {
      return false;
    }
    if (p_ != end_ && *p_ == '.') {
      ++p_;
      if (integral != nullptr) *integral = false;
      if (!digits()) return false;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (integral != nullptr) *integral = false;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    return true;
  }

  // true, false or null; kNone (nothing read) for anything else.
  JsonLiteral json_literal() {
    for (const JsonLiteral literal :
         {JsonLiteral::kTrue, JsonLiteral::kFalse, JsonLiteral::kNull}) {
      const char* word = literal == JsonLiteral::kTrue    ? "true"
                         : literal == JsonLiteral::kFalse ? "false"
                                                          : "null";
      const std::size_t n = std::strlen(word);
      if (static_cast<std::size_t>(end_ - p_) >= n && std::memcmp(p_, word, n) == 0) {
        p_ += n;
        return literal;
      }
    }
    return JsonLiteral::kNone;
  }

  const std::uint8_t* p_;
  const std::uint8_t* const end_;

 private:
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

  // One or more decimal digits.
  bool digits() {
    const std::uint8_t* start = p_;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ != start;
  }
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_DETAIL_JSON_CURSOR_HPP_

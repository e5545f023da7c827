// The Operation and google.rpc.Status JSON reader: one validating pass (RFC 8259) over the
// caller's bytes with an explicit stack of at most kOperationJsonMaxDepth levels, as the
// RetryInfo reader does it (https/src/http/retry_info_json.cpp), on the same tokens (JsonCursor,
// stepback/https/detail/json_cursor.hpp). Each level knows what its object
// is (the document's top, metadata, error, or anything else) and which kept field the value
// being read belongs to; kept values are remembered as views, never copied.
#include "stepback/transfer/operation_json.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "stepback/https/detail/json_cursor.hpp"
#include "stepback/https/detail/text.hpp"

namespace stepback::transfer {
namespace {

// The longest key of interest ("statusDetail") with room to spare; longer keys never match.
constexpr std::size_t kKeyMax = 16;

// What an object is, by its place in the document.
enum class Role : std::uint8_t { kOther, kRoot, kMetadata, kError };

// The kept fields; each has a bit in Level::seen, so a repeated one is caught.
enum class Field : std::uint8_t {
  kNone,
  kName,
  kDone,
  kMetadata,
  kResponse,
  kError,
  kVerb,
  kStatusDetail,
  kCode,
  kMessage,
  kStatus,
  kDetails,
};

// Fields of metadata (a free-form message): a value of another type is ignored, not an error.
constexpr bool is_soft(Field f) { return f == Field::kVerb || f == Field::kStatusDetail; }

// A key as its decoded characters stream past: the first kKeyMax bytes, and whether it was
// longer (then it matches nothing).
class KeyProbe {
 public:
  void add(std::uint32_t code_point) {
    if (code_point >= 0x80 || size_ >= kKeyMax) {
      overflow_ = true;
      return;
    }
    text_[size_++] = static_cast<char>(code_point);
  }
  bool is(const char* word) const {
    const std::size_t n = std::strlen(word);
    return !overflow_ && n == size_ && std::memcmp(text_, word, n) == 0;
  }

 private:
  char text_[kKeyMax] = {};
  std::size_t size_ = 0;
  bool overflow_ = false;
};

// The kept field an object of role `role` gives key `key`.
Field field_of(Role role, const KeyProbe& key) {
  switch (role) {
    case Role::kRoot:
      if (key.is("name")) return Field::kName;
      if (key.is("done")) return Field::kDone;
      if (key.is("metadata")) return Field::kMetadata;
      if (key.is("response")) return Field::kResponse;
      if (key.is("error")) return Field::kError;
      break;
    case Role::kMetadata:
      if (key.is("verb")) return Field::kVerb;
      if (key.is("statusDetail")) return Field::kStatusDetail;
      break;
    case Role::kError:
      if (key.is("code")) return Field::kCode;
      if (key.is("message")) return Field::kMessage;
      if (key.is("status")) return Field::kStatus;
      if (key.is("details")) return Field::kDetails;
      break;
    case Role::kOther:
      break;
  }
  return Field::kNone;
}

// Parses an optional '-' and decimal digits (nothing else) as an int32.
bool parse_int32(const std::uint8_t* p, const std::uint8_t* end, std::int32_t* out) {
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  if (p == end) return false;
  std::int64_t v = 0;
  for (; p != end; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
    if (v > std::int64_t{2147483648}) return false;
  }
  if (negative) v = -v;
  if (v > std::int64_t{2147483647}) return false;
  *out = static_cast<std::int32_t>(v);
  return true;
}

// What the scanner found, as offsets into the body.
struct Document {
  struct Span {
    std::size_t begin = 0;
    std::size_t end = 0;
    bool present = false;
  };
  Span name, metadata, verb, status_detail, response, error, message, status, details;
  bool done = false;
  bool has_code = false;
  std::int32_t code = 0;
};

// One open array or object.
struct Level {
  bool is_object = false;
  Role role = Role::kOther;
  Field field = Field::kNone;   // Objects: the kept field the value being read belongs to.
  bool has_items = false;       // Arrays: a value has been read.
  std::uint16_t seen = 0;       // Objects: the kept fields met so far, one bit each.
  std::size_t value_start = 0;  // Where the container value being read began.
};

// Which message the document is read as.
enum class Mode : std::uint8_t { kValidate, kOperation, kErrorBody };

class Scanner : https::JsonCursor {
 public:
  Scanner(https::ConstBytes body, Mode mode)
      : JsonCursor(body.data, body.data + body.size), begin_(body.data), mode_(mode) {}

  JsonRead run(Document* doc) {
    doc_ = doc;
    if (begin_ == nullptr || !walk(*this)) return JsonRead::kSyntax;
    return shape_error_ ? JsonRead::kShape : JsonRead::kOk;
  }

 private:
  friend class https::JsonCursor;  // walk() calls value, key, close, in_object and finished.

  Level& top() { return stack_[depth_ - 1]; }
  bool in_object() { return top().is_object; }
  bool finished() const { return depth_ == 0 && done_; }
  std::size_t at() const { return static_cast<std::size_t>(p_ - begin_); }

  // The kept field the value about to be read belongs to (kNone outside objects).
  Field current_field() { return depth_ > 0 && top().is_object ? top().field : Field::kNone; }

  // The role of an object that opens at the current place.
  Role role_for_object(Field field) {
    if (mode_ == Mode::kValidate) return Role::kOther;
    if (depth_ == 0) return Role::kRoot;
    // An error body wrapped in an array: its first element is the document.
    if (mode_ == Mode::kErrorBody && depth_ == 1 && !top().is_object && !top().has_items) {
      return Role::kRoot;
    }
    if (field == Field::kMetadata) return Role::kMetadata;
    if (field == Field::kError) return Role::kError;
    return Role::kOther;
  }

  // Reads one value, or opens a container; sets what comes next.
  bool value(https::JsonExpect& expect) {
    const std::uint8_t c = *p_;
    const Field field = current_field();
    if (c == '{' || c == '[') {
      if (depth_ == kOperationJsonMaxDepth) return false;
      const bool object = c == '{';
      if (field != Field::kNone && !is_soft(field)) {
        // metadata, response and error are messages; details is a list; nothing else nests.
        const bool fits = object ? (field == Field::kMetadata || field == Field::kResponse ||
                                    field == Field::kError)
                                 : field == Field::kDetails;
        if (!fits) shape_error_ = true;
      }
      if (depth_ > 0) top().value_start = at();
      const Role role = object ? role_for_object(field) : Role::kOther;
      ++p_;
      Level level;
      level.is_object = object;
      level.role = role;
      stack_[depth_++] = level;
      expect = object ? https::JsonExpect::kKeyOrClose : https::JsonExpect::kValueOrClose;
      return true;
    }
    bool ok = false;
    if (c == '"') {
      ++p_;
      const std::size_t start = at();
      ok = json_string<KeyProbe>(nullptr);
      if (ok) take_string(field, start, at() - 1);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const std::size_t start = at();
      bool integral = true;
      ok = json_number(&integral);
      if (ok) take_number(field, start, integral);
    } else {
      ok = literal(field);
    }
    after_value(expect);
    return ok;
  }

  void take_string(Field field, std::size_t begin, std::size_t end) {
    Document::Span span{begin, end, true};
    switch (field) {
      case Field::kName:
        doc_->name = span;
        return;
      case Field::kVerb:
        doc_->verb = span;
        return;
      case Field::kStatusDetail:
        doc_->status_detail = span;
        return;
      case Field::kMessage:
        doc_->message = span;
        return;
      case Field::kStatus:
        doc_->status = span;
        return;
      case Field::kCode:
        // proto3 JSON writes int32 as a number, and readers take a string of digits too.
        if (parse_int32(begin_ + begin, begin_ + end, &doc_->code)) {
          doc_->has_code = true;
        } else {
          shape_error_ = true;
        }
        return;
      case Field::kNone:
        return;
      case Field::kDone:
      case Field::kMetadata:
      case Field::kResponse:
      case Field::kError:
      case Field::kDetails:
        break;
    }
    shape_error_ = true;
  }

  void take_number(Field field, std::size_t begin, bool integral) {
    if (field == Field::kNone || is_soft(field)) return;
    if (field == Field::kCode && integral && parse_int32(begin_ + begin, p_, &doc_->code)) {
      doc_->has_code = true;
      return;
    }
    shape_error_ = true;
  }

  // Reads an object key and decides which kept field (if any) its value is.
  bool key() {
    if (*p_++ != '"') return false;
    KeyProbe probe;
    if (!json_string(&probe)) return false;
    Level& level = top();
    level.field = field_of(level.role, probe);
    if (level.field != Field::kNone) {
      const auto bit = static_cast<std::uint16_t>(1U << static_cast<unsigned>(level.field));
      if ((level.seen & bit) != 0) shape_error_ = true;  // A kept field named twice.
      level.seen = static_cast<std::uint16_t>(level.seen | bit);
    }
    return true;
  }

  // Closes the innermost container, which must be an object when `object` says so; a kept
  // container value is remembered as the span it covered.
  bool close(bool object, https::JsonExpect& expect) {
    if (top().is_object != object) return false;
    --depth_;
    if (depth_ > 0 && top().is_object) {
      const Document::Span span{top().value_start, at(), true};
      switch (top().field) {
        case Field::kMetadata:
          doc_->metadata = span;
          break;
        case Field::kResponse:
          doc_->response = span;
          break;
        case Field::kError:
          if (top().role == Role::kRoot) doc_->error = span;
          break;
        case Field::kDetails:
          doc_->details = span;
          break;
        default:
          break;
      }
    }
    after_value(expect);
    return true;
  }

  void after_value(https::JsonExpect& expect) {
    if (depth_ == 0) {
      done_ = true;
      return;
    }
    Level& level = top();
    if (level.is_object) {
      level.field = Field::kNone;
    } else {
      level.has_items = true;
    }
    expect = https::JsonExpect::kCommaOrClose;
  }

  // true, false or null; only "done" takes a boolean, and null stands for any absent field.
  bool literal(Field field) {
    const https::JsonLiteral literal = json_literal();
    if (literal == https::JsonLiteral::kNone) return false;
    if (literal != https::JsonLiteral::kNull) {
      if (field == Field::kDone) {
        doc_->done = literal == https::JsonLiteral::kTrue;
      } else if (field != Field::kNone && !is_soft(field)) {
        shape_error_ = true;
      }
    }
    return true;
  }

  const std::uint8_t* const begin_;
  const Mode mode_;
  Document* doc_ = nullptr;
  Level stack_[kOperationJsonMaxDepth];
  std::size_t depth_ = 0;
  bool done_ = false;
  bool shape_error_ = false;
};

std::string_view view(https::ConstBytes body, const Document::Span& span) {
  if (!span.present) return {};
  return std::string_view(reinterpret_cast<const char*>(body.data) + span.begin,
                          span.end - span.begin);
}

void fill_status(https::ConstBytes body, const Document& doc, RpcStatusView* out) {
  *out = RpcStatusView{};
  out->present = doc.error.present;
  if (!out->present) return;
  out->has_code = doc.has_code;
  out->code = doc.code;
  out->message = view(body, doc.message);
  out->status = view(body, doc.status);
  out->details = view(body, doc.details);
  out->raw = view(body, doc.error);
}

// Appends code point `c` as UTF-8 at out[*n] if it fits whole; false when it does not.
bool put_utf8(std::uint32_t c, https::MutableBytes out, std::size_t* n) {
  std::uint8_t b[4];
  const std::size_t len = https::detail::encode_utf8(c, b);
  if (len == 0 || out.size - *n < len) return false;
  std::memcpy(out.data + *n, b, len);
  *n += len;
  return true;
}

// Reads 4 hex digits at raw[*i]; false when they are not there.
bool read_hex4(std::string_view raw, std::size_t* i, std::uint32_t* out) {
  if (raw.size() - *i < 4) return false;
  std::uint32_t v = 0;
  for (int k = 0; k < 4; ++k) {
    const char c = raw[(*i)++];
    std::uint32_t d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<std::uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<std::uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<std::uint32_t>(c - 'A' + 10);
    } else {
      return false;
    }
    v = (v << 4) | d;
  }
  *out = v;
  return true;
}

}  // namespace

const char* to_string(JsonRead r) {
  switch (r) {
    case JsonRead::kOk:
      return "ok";
    case JsonRead::kSyntax:
      return "syntax";
    case JsonRead::kShape:
      return "shape";
  }
  return "?";
}

JsonRead read_operation(https::ConstBytes body, OperationView* out) {
  *out = OperationView{};
  Document doc;
  JsonRead r = Scanner(body, Mode::kOperation).run(&doc);
  if (r == JsonRead::kSyntax) return r;
  // The top level must be an object (the scanner gave it the root role), and an Operation's
  // result is one of response or error.
  const std::uint8_t* p = body.data;
  const std::uint8_t* end = body.data + body.size;
  if (end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) p += 3;
  while (p != end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  if (p == end || *p != '{') return JsonRead::kShape;
  if (doc.response.present && doc.error.present) r = JsonRead::kShape;
  out->name = view(body, doc.name);
  out->done = doc.done;
  out->metadata = view(body, doc.metadata);
  out->verb = view(body, doc.verb);
  out->status_detail = view(body, doc.status_detail);
  out->has_response = doc.response.present;
  out->response = view(body, doc.response);
  fill_status(body, doc, &out->error);
  return r;
}

JsonRead read_error_body(https::ConstBytes body, RpcStatusView* out) {
  *out = RpcStatusView{};
  Document doc;
  const JsonRead r = Scanner(body, Mode::kErrorBody).run(&doc);
  if (r != JsonRead::kOk) return r;
  if (!doc.error.present) return JsonRead::kShape;
  fill_status(body, doc, out);
  return JsonRead::kOk;
}

bool json_valid(https::ConstBytes body) {
  Document doc;
  return Scanner(body, Mode::kValidate).run(&doc) == JsonRead::kOk;
}

std::size_t json_decode_string(std::string_view raw, https::MutableBytes out) {
  std::size_t n = 0;
  std::size_t i = 0;
  while (i < raw.size()) {
    std::uint32_t c = static_cast<std::uint8_t>(raw[i++]);
    if (c == '\\') {
      if (i == raw.size()) break;
      const char e = raw[i++];
      switch (e) {
        case 'b':
          c = '\b';
          break;
        case 'f':
          c = '\f';
          break;
        case 'n':
          c = '\n';
          break;
        case 'r':
          c = '\r';
          break;
        case 't':
          c = '\t';
          break;
        case 'u': {
          if (!read_hex4(raw, &i, &c)) return n;
          if (c >= 0xD800 && c <= 0xDBFF) {
            std::uint32_t low = 0;
            if (raw.size() - i < 6 || raw[i] != '\\' || raw[i + 1] != 'u') return n;
            i += 2;
            if (!read_hex4(raw, &i, &low) || low < 0xDC00 || low > 0xDFFF) return n;
            c = 0x10000 + ((c - 0xD800) << 10) + (low - 0xDC00);
          } else if (c >= 0xDC00 && c <= 0xDFFF) {
            return n;
          }
          break;
        }
        default:
          c = static_cast<std::uint8_t>(e);  // '"', '\\' and '/' stand for themselves.
          break;
      }
      if (!put_utf8(c, out, &n)) return n;
      continue;
    }
    // Raw bytes (UTF-8 as sent) are copied; a multi-byte sequence is copied whole or not at all.
    std::size_t len = 1;
    if (c >= 0xC0) {
      len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      std::size_t k = 0;
      while (k + 1 < len && i + k < raw.size() &&
             (static_cast<std::uint8_t>(raw[i + k]) & 0xC0) == 0x80) {
        ++k;
      }
      len = k + 1;
    }
    if (out.size - n < len) return n;
    std::memcpy(out.data + n, raw.data() + i - 1, len);
    n += len;
    i += len - 1;
  }
  return n;
}

const char* rpc_code_name(std::int32_t code) {
  static constexpr const char* kNames[] = {"OK",
                                           "CANCELLED",
                                           "UNKNOWN",
                                           "INVALID_ARGUMENT",
                                           "DEADLINE_EXCEEDED",
                                           "NOT_FOUND",
                                           "ALREADY_EXISTS",
                                           "PERMISSION_DENIED",
                                           "RESOURCE_EXHAUSTED",
                                           "FAILED_PRECONDITION",
                                           "ABORTED",
                                           "OUT_OF_RANGE",
                                           "UNIMPLEMENTED",
                                           "INTERNAL",
                                           "UNAVAILABLE",
                                           "DATA_LOSS",
                                           "UNAUTHENTICATED"};
  if (code < 0 || code >= static_cast<std::int32_t>(sizeof kNames / sizeof kNames[0])) return "";
  return kNames[code];
}

}  // namespace stepback::transfer

#include "stepback/https/http/response_parser.hpp"

#include <cstring>

#include "http1_text.hpp"

namespace stepback::https {
namespace {

using http1_text::iequals;

constexpr std::uint64_t kMaxU64 = ~std::uint64_t{0};

// Control bytes that may never appear in a head line (HTAB may; CR and LF end lines).
constexpr bool is_forbidden_control(std::uint8_t b) { return (b < 0x20 && b != '\t') || b == 0x7F; }

constexpr int hex_value(std::uint8_t b) {
  if (b >= '0' && b <= '9') return b - '0';
  if (b >= 'a' && b <= 'f') return b - 'a' + 10;
  if (b >= 'A' && b <= 'F') return b - 'A' + 10;
  return -1;
}

// Messages shared by several failures.
constexpr const char* kHeadTooLarge = "the response head is larger than the response-head buffer";
constexpr const char* kBadStatusLine =
    "the response's status line is not HTTP/1.0 or HTTP/1.1, a space and a 3-digit status";
constexpr const char* kBadChunkSize = "a chunk-size line of the response is malformed";
constexpr const char* kBadTrailer =
    "the response's trailer section has a bare CR or a control byte";

// 1*DIGIT without overflow.
bool parse_decimal(std::string_view s, std::uint64_t* out) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (!http1_text::is_digit(c)) return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (kMaxU64 - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

}  // namespace

ResponseParser::ResponseParser(MutableBytes head_buffer, BodySink sink, std::uint64_t body_limit)
    : buf_(head_buffer), sink_(sink), body_limit_(body_limit) {
  if (buf_.data == nullptr) buf_.size = 0;
  reset(false);
}

void ResponseParser::reset(bool head_request) {
  clear_head();
  remaining_ = 0;
  body_size_ = 0;
  line_bytes_ = 0;
  framing_ = Framing::kNone;
  error_ = Status::kOk;
  error_message_ = "";
  head_request_ = head_request;
  started_ = false;
  interim_heads_ = 0;
}

void ResponseParser::clear_head() {
  used_ = 0;
  line_begin_ = 0;
  fields_begin_ = 0;
  reason_begin_ = 0;
  reason_size_ = 0;
  content_length_ = 0;
  status_ = 0;
  minor_version_ = 1;
  state_ = State::kStatusLine;
  head_complete_ = false;
  pending_cr_ = false;
  has_content_length_ = false;
  has_transfer_encoding_ = false;
  connection_close_ = false;
  connection_keep_alive_ = false;
}

bool ResponseParser::fail(Status s, const char* why) {
  state_ = State::kFailed;
  error_ = s;
  error_message_ = why;
  return false;
}

ParseProgress ResponseParser::feed(ConstBytes data, std::size_t* consumed) {
  std::size_t i = 0;
  const std::size_t n = data.data == nullptr ? 0 : data.size;
  if (n > 0 && state_ != State::kDone && state_ != State::kFailed) started_ = true;
  while (i < n && state_ != State::kDone && state_ != State::kFailed) {
    const std::uint8_t* p = data.data + i;
    bool ok = true;
    switch (state_) {
      case State::kStatusLine:
      case State::kHeaders:
        ok = head_byte(*p);
        break;
      case State::kBodyLength:
      case State::kChunkData: {
        const std::size_t take = remaining_ < n - i ? static_cast<std::size_t>(remaining_) : n - i;
        ok = deliver(p, take);
        if (!ok) break;
        remaining_ -= take;
        i += take;
        if (remaining_ == 0) {
          state_ = state_ == State::kBodyLength ? State::kDone : State::kChunkDataEnd;
        }
        continue;
      }
      case State::kBodyUntilClose: {
        // Only the close ends this body, so the limit is enforced as bytes arrive.
        const std::uint64_t room = body_limit_ - body_size_;
        const std::size_t take = room < n - i ? static_cast<std::size_t>(room) : n - i;
        ok = deliver(p, take);
        if (!ok) break;
        i += take;
        if (i < n) {
          ok = fail(Status::kBodyTooLarge,
                    "the response body (delimited by the close) passed the body limit");
        }
        if (!ok) break;
        continue;
      }
      case State::kChunkSize:
        ok = chunk_size_byte(*p);
        break;
      case State::kChunkDataEnd:
        ok = chunk_end_byte(*p);
        break;
      case State::kTrailers:
        ok = trailer_byte(*p);
        break;
      case State::kDone:
      case State::kFailed:
        break;
    }
    if (!ok) break;
    ++i;
  }
  if (consumed != nullptr) *consumed = i;
  if (state_ == State::kFailed) return ParseProgress::kFailed;
  return state_ == State::kDone ? ParseProgress::kDone : ParseProgress::kNeedMore;
}

ParseProgress ResponseParser::finish() {
  switch (state_) {
    case State::kDone:
      return ParseProgress::kDone;
    case State::kFailed:
      return ParseProgress::kFailed;
    case State::kBodyUntilClose:
      state_ = State::kDone;
      return ParseProgress::kDone;
    default:
      if (started_) {
        fail(Status::kReset, "the connection closed before the response was complete");
      } else {
        fail(Status::kClosed, "the connection closed before any byte of the response came");
      }
      return ParseProgress::kFailed;
  }
}

bool ResponseParser::head_byte(std::uint8_t b) {
  if (b == '\n') {
    pending_cr_ = false;
    if (state_ == State::kHeaders && used_ == line_begin_) return end_head();
    if (used_ == buf_.size) return fail(Status::kHeadersTooLarge, kHeadTooLarge);
    buf_.data[used_++] = '\n';
    const std::size_t begin = line_begin_;
    line_begin_ = used_;
    return state_ == State::kStatusLine ? end_status_line(begin, used_ - 1)
                                        : end_header_line(begin, used_ - 1);
  }
  // A CR must end the line; anywhere else it is a bare CR (RFC 9112 2.2).
  if (pending_cr_) return fail(Status::kProtocol, "the response head has a CR not followed by LF");
  if (b == '\r') {
    pending_cr_ = true;
    return true;
  }
  if (is_forbidden_control(b)) {
    return fail(Status::kProtocol, "the response head has a control byte (such as NUL) in a line");
  }
  if (used_ == buf_.size) return fail(Status::kHeadersTooLarge, kHeadTooLarge);
  buf_.data[used_++] = b;
  return true;
}

bool ResponseParser::end_status_line(std::size_t begin, std::size_t end) {
  const std::string_view line(reinterpret_cast<const char*>(buf_.data + begin), end - begin);
  // HTTP-version SP 3DIGIT [SP reason-phrase]; a missing SP before an empty reason is
  // tolerated, as many servers send "HTTP/1.1 200".
  if (line.size() < 12 || http1_text::sub(line, 0, 7) != "HTTP/1." ||
      (line[7] != '0' && line[7] != '1') || line[8] != ' ') {
    return fail(Status::kProtocol, kBadStatusLine);
  }
  if (line.size() > 12 && line[12] != ' ') return fail(Status::kProtocol, kBadStatusLine);
  std::uint16_t code = 0;
  for (std::size_t k = 9; k < 12; ++k) {
    if (!http1_text::is_digit(line[k])) return fail(Status::kProtocol, kBadStatusLine);
    code = static_cast<std::uint16_t>(code * 10 + static_cast<std::uint16_t>(line[k] - '0'));
  }
  if (code < 100 || code > 599) {
    return fail(Status::kProtocol, "the response's status code is not in 100..599");
  }
  status_ = code;
  minor_version_ = static_cast<std::uint8_t>(line[7] - '0');
  reason_begin_ = begin + (line.size() > 12 ? 13 : 12);
  reason_size_ = end - reason_begin_;
  fields_begin_ = end + 1;
  state_ = State::kHeaders;
  return true;
}

bool ResponseParser::end_header_line(std::size_t begin, std::size_t end) {
  char* const line = reinterpret_cast<char*>(buf_.data + begin);
  const std::string_view text(line, end - begin);
  if (http1_text::is_ows(text.front())) {
    // obs-fold: a user agent replaces it with SP (RFC 9112 5.2), so the continuation joins
    // the previous field's value. Whitespace before the first field is refused (2.2).
    if (begin <= fields_begin_) {
      return fail(Status::kProtocol, "the response head's first field line starts with whitespace");
    }
    const std::string_view more = http1_text::trim_ows(text);
    if (more.empty()) {
      used_ = begin;  // Only whitespace: nothing to add.
    } else {
      line[-1] = ' ';  // The previous field's '\n'.
      std::memmove(line, more.data(), more.size());
      line[more.size()] = '\n';
      used_ = begin + more.size() + 1;
    }
    line_begin_ = used_;
    return true;
  }
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return fail(Status::kProtocol, "a field line of the response head has no colon");
  }
  // A token check also rejects whitespace between the name and the colon (RFC 9112 5.1).
  if (!http1_text::is_token(http1_text::sub(text, 0, colon))) {
    return fail(Status::kProtocol,
                "a field name of the response head is not a token (or has whitespace before "
                "its colon)");
  }
  const std::string_view value = http1_text::trim_ows(http1_text::sub(text, colon + 1));
  // Stored as "name:value\n", so lookups need no trimming.
  const std::size_t value_at = colon + 1;
  std::memmove(line + value_at, value.data(), value.size());
  line[value_at + value.size()] = '\n';
  used_ = begin + value_at + value.size() + 1;
  line_begin_ = used_;
  return true;
}

bool ResponseParser::end_head() {
  if (status_ < 200) {
    // 101 would switch protocols, which is never requested; other 1xx are interim.
    if (status_ == 101) {
      return fail(Status::kProtocol,
                  "the server answered 101 Switching Protocols, which was never asked for");
    }
    // A server that sends interim heads without end would hold the client forever.
    if (++interim_heads_ > kMaxInterimHeads) {
      static_assert(kMaxInterimHeads == 16, "the message below names the limit");
      return fail(Status::kProtocol,
                  "the server sent more than 16 interim (1xx) responses before the final one "
                  "(the limit, ResponseParser::kMaxInterimHeads)");
    }
    clear_head();
    return true;
  }
  std::size_t cursor = 0;
  std::string_view name;
  std::string_view value;
  head_complete_ = true;
  while (next_header(&cursor, &name, &value)) {
    bool ok = true;
    if (iequals(name, "content-length")) {
      ok = take_content_length(value);
    } else if (iequals(name, "transfer-encoding")) {
      ok = take_transfer_encoding(value);
    } else if (iequals(name, "connection")) {
      take_connection(value);
    }
    if (!ok) {
      head_complete_ = false;  // A head whose framing is invalid is not accepted.
      return false;
    }
  }
  // RFC 9112 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing.
  if (has_transfer_encoding_ && minor_version_ == 0) {
    head_complete_ = false;
    return fail(Status::kProtocol, "an HTTP/1.0 response has a Transfer-Encoding field");
  }

  if (head_request_ || status_ == 204 || status_ == 304) {
    framing_ = Framing::kNone;
    state_ = State::kDone;
  } else if (has_transfer_encoding_) {
    framing_ = Framing::kChunked;
    state_ = State::kChunkSize;
    remaining_ = 0;
    line_bytes_ = 0;
    chunk_digits_ = chunk_after_digits_ = chunk_in_extension_ = false;
  } else if (has_content_length_) {
    framing_ = Framing::kLength;
    if (content_length_ > body_limit_) {
      return fail(Status::kBodyTooLarge, "the response's Content-Length is above the body limit");
    }
    // No body is that long: a lie, not a body to wait for and then take for a cut one.
    if (content_length_ > kMaxBodyLength) {
      static_assert(kMaxBodyLength == 0x7fffffffffffffff, "the message below names the limit");
      return fail(Status::kProtocol,
                  "the response's Content-Length is above 2^63-1 bytes, more than any body can "
                  "be (the limit, ResponseParser::kMaxBodyLength)");
    }
    remaining_ = content_length_;
    state_ = remaining_ == 0 ? State::kDone : State::kBodyLength;
  } else {
    framing_ = Framing::kUntilClose;
    state_ = State::kBodyUntilClose;
  }
  return true;
}

bool ResponseParser::take_content_length(std::string_view value) {
  // RFC 9110 8.6: a list of identical values may be taken as one; anything else is fatal.
  bool any = false;
  const bool ok = http1_text::for_each_list_element(value, [&](std::string_view item) {
    std::uint64_t v = 0;
    if (!parse_decimal(item, &v)) return false;
    if (has_content_length_ && v != content_length_) return false;
    has_content_length_ = true;
    content_length_ = v;
    any = true;
    return true;
  });
  if (!ok || !any) {
    return fail(Status::kProtocol,
                "the response's Content-Length is not a decimal number below 2^64 (or its values "
                "differ)");
  }
  return true;
}

bool ResponseParser::take_transfer_encoding(std::string_view value) {
  // Nothing but chunked is requested (no TE field is sent), so anything else, including
  // a repeated field or "chunked, chunked", cannot be framed safely.
  if (has_transfer_encoding_ || !iequals(http1_text::trim_ows(value), "chunked")) {
    return fail(Status::kProtocol,
                "the response's Transfer-Encoding is not exactly one 'chunked' (nothing else "
                "was asked for)");
  }
  has_transfer_encoding_ = true;
  return true;
}

void ResponseParser::take_connection(std::string_view value) {
  http1_text::for_each_list_element(value, [&](std::string_view item) {
    if (iequals(item, "close")) connection_close_ = true;
    if (iequals(item, "keep-alive")) connection_keep_alive_ = true;
    return true;
  });
}

bool ResponseParser::chunk_size_byte(std::uint8_t b) {
  if (++line_bytes_ > buf_.size) {
    return fail(Status::kProtocol,
                "a chunk-size line of the response is longer than the response-head buffer");
  }
  if (b == '\n') {
    pending_cr_ = false;
    if (!chunk_digits_) return fail(Status::kProtocol, kBadChunkSize);
    chunk_digits_ = chunk_after_digits_ = chunk_in_extension_ = false;
    line_bytes_ = 0;
    if (remaining_ == 0) {
      state_ = State::kTrailers;
      trailer_line_empty_ = true;
      return true;
    }
    if (remaining_ > body_limit_ - body_size_) {
      return fail(Status::kBodyTooLarge, "a chunk of the response would pass the body limit");
    }
    if (remaining_ > kMaxBodyLength) {
      return fail(Status::kProtocol,
                  "a chunk size of the response is above 2^63-1 bytes, more than any body can "
                  "be (the limit, ResponseParser::kMaxBodyLength)");
    }
    state_ = State::kChunkData;
    return true;
  }
  if (pending_cr_) return fail(Status::kProtocol, kBadChunkSize);
  if (b == '\r') {
    pending_cr_ = true;
    return true;
  }
  if (is_forbidden_control(b)) return fail(Status::kProtocol, kBadChunkSize);
  if (chunk_in_extension_) return true;  // Extensions are ignored.
  const int digit = hex_value(b);
  if (digit >= 0 && !chunk_after_digits_) {
    if (remaining_ > (kMaxU64 >> 4)) {
      return fail(Status::kProtocol, "a chunk size of the response does not fit 64 bits");
    }
    remaining_ = remaining_ * 16 + static_cast<std::uint64_t>(digit);
    chunk_digits_ = true;
    return true;
  }
  if (!chunk_digits_) return fail(Status::kProtocol, kBadChunkSize);
  chunk_after_digits_ = true;
  if (b == ';') {
    chunk_in_extension_ = true;
    return true;
  }
  return (b == ' ' || b == '\t') ? true : fail(Status::kProtocol, kBadChunkSize);
}

bool ResponseParser::chunk_end_byte(std::uint8_t b) {
  if (b == '\n') {
    pending_cr_ = false;
    state_ = State::kChunkSize;
    return true;
  }
  if (b == '\r' && !pending_cr_) {
    pending_cr_ = true;
    return true;
  }
  return fail(Status::kProtocol, "a chunk of the response is not followed by CRLF");
}

bool ResponseParser::trailer_byte(std::uint8_t b) {
  if (++line_bytes_ > buf_.size) {
    return fail(Status::kHeadersTooLarge,
                "the response's trailer section is larger than the response-head buffer");
  }
  if (b == '\n') {
    pending_cr_ = false;
    if (trailer_line_empty_) {
      state_ = State::kDone;
      return true;
    }
    trailer_line_empty_ = true;
    return true;
  }
  if (pending_cr_) return fail(Status::kProtocol, kBadTrailer);
  if (b == '\r') {
    pending_cr_ = true;
    return true;
  }
  if (is_forbidden_control(b)) return fail(Status::kProtocol, kBadTrailer);
  trailer_line_empty_ = false;
  return true;
}

bool ResponseParser::deliver(const std::uint8_t* data, std::size_t n) {
  if (n == 0) return true;
  if (sink_.write != nullptr && !sink_.write(sink_.context, ConstBytes{data, n})) {
    return fail(Status::kError, "the body sink refused the body");
  }
  body_size_ += n;
  return true;
}

std::string_view ResponseParser::reason() const {
  if (!head_complete()) return {};
  return {reinterpret_cast<const char*>(buf_.data + reason_begin_), reason_size_};
}

std::optional<std::string_view> ResponseParser::header(std::string_view name) const {
  std::size_t cursor = 0;
  std::string_view n;
  std::string_view v;
  while (next_header(&cursor, &n, &v)) {
    if (iequals(n, name)) return v;
  }
  return std::nullopt;
}

bool ResponseParser::next_header(std::size_t* cursor, std::string_view* name,
                                 std::string_view* value) const {
  if (!head_complete() || cursor == nullptr) return false;
  const std::size_t pos = *cursor == 0 ? fields_begin_ : *cursor;
  if (pos < fields_begin_ || pos >= used_) return false;
  const std::string_view rest(reinterpret_cast<const char*>(buf_.data + pos), used_ - pos);
  const std::size_t nl = rest.find('\n');
  const std::size_t colon = rest.find(':');
  if (nl == std::string_view::npos || colon > nl) return false;
  if (name != nullptr) *name = http1_text::sub(rest, 0, colon);
  if (value != nullptr) *value = http1_text::sub(rest, colon + 1, nl - colon - 1);
  *cursor = pos + nl + 1;
  return true;
}

std::optional<std::uint64_t> ResponseParser::content_length() const {
  if (!head_complete() || framing_ != Framing::kLength) return std::nullopt;
  return content_length_;
}

bool ResponseParser::keep_alive() const {
  if (state_ != State::kDone || connection_close_) return false;
  if (framing_ == Framing::kUntilClose) return false;
  if (has_transfer_encoding_ && has_content_length_) return false;  // RFC 9112 6.3.
  return minor_version_ == 1 || connection_keep_alive_;
}

}  // namespace stepback::https

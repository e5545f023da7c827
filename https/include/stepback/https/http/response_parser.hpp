// The response half of the HTTP/1.1 message layer: an incremental, allocation-free parser
// that copies the head into a caller buffer and streams the body to a caller sink.
#ifndef STEPBACK_HTTPS_HTTP_RESPONSE_PARSER_HPP_
#define STEPBACK_HTTPS_HTTP_RESPONSE_PARSER_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/https/types.hpp"

namespace stepback::https {

// Where body bytes go: `write` is called with each run of body bytes as it is parsed
// (chunk framing removed) and returns false to abort the response. A null `write`
// discards the body (still counted against the limit). `context` is passed through.
struct BodySink {
  bool (*write)(void* context, ConstBytes data) = nullptr;
  void* context = nullptr;
};

// What feed() and finish() report.
enum class ParseProgress : std::uint8_t {
  kFailed,    // The response is unusable; error() says why. Sticky until reset().
  kNeedMore,  // All input was consumed and the response is not complete yet.
  kDone,      // The response is complete; input after its end was not consumed.
};

// Parses one HTTP/1.1 response at a time from arbitrary slices of the byte stream
// (one byte at a time gives the same result as all at once).
//
// Choices where RFC 9112 leaves room: a bare LF ends a line like CRLF (recipients MAY
// accept it, 2.2) but a CR not followed by LF is kProtocol; obs-fold, whitespace before a
// header colon, and NUL or other control bytes in the head are kProtocol; status codes
// must be in 100..599 and the version HTTP/1.0 or HTTP/1.1; up to kMaxInterimHeads interim
// 1xx responses are skipped (more is kProtocol: an endless stream of 103s is hostile; 101
// is kProtocol, as no upgrade is ever requested); a Content-Length or chunk size above
// kMaxBodyLength is kProtocol (no body is that long: the length is a lie, refused at the
// head rather than taken for a body cut short); Transfer-Encoding other
// than exactly "chunked", or in an HTTP/1.0 response, is kProtocol; with both
// Transfer-Encoding and Content-Length, chunked wins and keep_alive() is false (6.3).
//
// Limits come from the caller: the head (status line and fields, about one byte per
// byte received) must fit the head buffer, else kHeadersTooLarge; a chunk-size line
// longer than the head buffer is kProtocol, and a (skipped) trailer section longer than
// it is kHeadersTooLarge; the body may not exceed `body_limit` bytes, else kBodyTooLarge
// (detected from Content-Length or a chunk size before any of the excess is delivered;
// a body delimited by the close gets exactly `body_limit` bytes delivered first).
class ResponseParser {
 public:
  // Most interim (1xx) heads accepted before the final one.
  static constexpr std::uint32_t kMaxInterimHeads = 16;
  // The largest Content-Length or chunk size accepted, in bytes: 2^63-1, the largest file
  // size (off_t) and more than any real body.
  static constexpr std::uint64_t kMaxBodyLength = 0x7fffffffffffffff;

  // A parser that copies heads into `head_buffer` (caller-owned, must outlive the parser)
  // and delivers at most `body_limit` body bytes per response to `sink`; ready for the
  // response to a non-HEAD request.
  ResponseParser(MutableBytes head_buffer, BodySink sink, std::uint64_t body_limit);

  // Forgets the current response and expects the next; `head_request` says whether it
  // answers a HEAD request (whose response has no body whatever its fields say).
  void reset(bool head_request = false);

  // Parses a prefix of `data` and sets *consumed to its length: everything on kNeedMore,
  // up to the end of the response on kDone, and the bytes examined before the error on
  // kFailed. After kDone or kFailed it consumes nothing and repeats its answer.
  [[nodiscard]] ParseProgress feed(ConstBytes data, std::size_t* consumed);

  // Reports the end of the stream (the peer closed): completes a body delimited by the
  // close; otherwise kFailed with kClosed when no byte of the response had arrived (a
  // reused connection the server closed) and kReset when the response was truncated.
  [[nodiscard]] ParseProgress finish();

  // Whether the response is complete.
  bool done() const { return state_ == State::kDone; }
  // kOk unless the last feed() or finish() failed; then why (kProtocol, kHeadersTooLarge,
  // kBodyTooLarge, kReset, kClosed, or kError when the sink refused the body).
  Status error() const { return error_; }
  // Why the last feed() or finish() failed, as a sentence naming the part of the response
  // at fault or the limit it passed ("the server sent more than 16 interim (1xx) responses
  // ..."); a static string, "" while nothing failed.
  const char* error_message() const { return error_message_; }
  // Whether any byte of this response (interim responses included) has been consumed.
  bool started() const { return started_; }
  // Whether the final status line and header section have been parsed and accepted; stays
  // true if the body fails later, so a truncated response still shows its status.
  bool head_complete() const { return head_complete_; }

  // The final status code (200..599), or 0 until head_complete().
  std::uint16_t status() const { return head_complete_ ? status_ : 0; }
  // 0 for HTTP/1.0, 1 for HTTP/1.1; meaningful once head_complete().
  int minor_version() const { return minor_version_; }
  // The reason phrase (possibly empty), a view into the head buffer valid until reset().
  std::string_view reason() const;
  // The value of the first field named `name` (ASCII case-insensitive) with surrounding
  // whitespace removed, a view into the head buffer valid until reset(); nullopt when there
  // is none or before head_complete().
  std::optional<std::string_view> header(std::string_view name) const;
  // Steps through the fields in order: starts with *cursor = 0, returns false after the
  // last (or before head_complete()); the views are valid until reset().
  bool next_header(std::size_t* cursor, std::string_view* name, std::string_view* value) const;
  // The Content-Type value, if any.
  std::optional<std::string_view> content_type() const { return header("content-type"); }
  // The raw Retry-After value, if any; interpret it with parse_retry_after().
  std::optional<std::string_view> retry_after() const { return header("retry-after"); }

  // The Content-Length that frames the body, if the body is framed by one.
  std::optional<std::uint64_t> content_length() const;
  // Whether the body uses the chunked transfer coding.
  bool chunked() const { return head_complete() && framing_ == Framing::kChunked; }
  // Whether the connection may carry another request after this response: an HTTP/1.1
  // response without "Connection: close", or HTTP/1.0 with "Connection: keep-alive",
  // whose body length is known from its fields and whose framing was unambiguous. False
  // until the response is complete.
  bool keep_alive() const;
  // Body bytes delivered to the sink so far.
  std::uint64_t body_size() const { return body_size_; }
  // The size of the head buffer, the longest head it takes.
  std::size_t head_capacity() const { return buf_.size; }

 private:
  // The head is parsed a byte at a time, line by line; body runs are delivered in bulk.
  enum class State : std::uint8_t {
    kStatusLine,
    kHeaders,
    kBodyLength,      // Framed by Content-Length; remaining_ bytes to come.
    kBodyUntilClose,  // Framed by the end of the stream.
    kChunkSize,
    kChunkData,     // remaining_ bytes of the current chunk to come.
    kChunkDataEnd,  // The CRLF after a chunk's data.
    kTrailers,
    kDone,
    kFailed,
  };
  enum class Framing : std::uint8_t { kNone, kLength, kChunked, kUntilClose };

  // Fails the response with `s`, `why` (a static string) being error_message(); false.
  bool fail(Status s, const char* why);
  bool head_byte(std::uint8_t b);
  bool end_status_line(std::size_t begin, std::size_t end);
  bool end_header_line(std::size_t begin, std::size_t end);
  bool end_head();
  bool chunk_size_byte(std::uint8_t b);
  bool chunk_end_byte(std::uint8_t b);
  bool trailer_byte(std::uint8_t b);
  bool deliver(const std::uint8_t* data, std::size_t n);
  bool take_content_length(std::string_view value);
  void take_connection(std::string_view value);
  bool take_transfer_encoding(std::string_view value);
  void clear_head();

  MutableBytes buf_;
  BodySink sink_;
  std::uint64_t body_limit_;

  std::size_t used_ = 0;          // Bytes of buf_ holding the stored head.
  std::size_t line_begin_ = 0;    // Where the line being received starts in buf_.
  std::size_t fields_begin_ = 0;  // Where the first stored field starts in buf_.
  std::size_t reason_begin_ = 0;
  std::size_t reason_size_ = 0;
  std::uint64_t remaining_ = 0;  // Body or chunk bytes still to come.
  std::uint64_t content_length_ = 0;
  std::uint64_t body_size_ = 0;
  std::size_t line_bytes_ = 0;  // Bytes of the current chunk-size or trailer line(s).
  std::uint16_t status_ = 0;
  State state_ = State::kStatusLine;
  Framing framing_ = Framing::kNone;
  Status error_ = Status::kOk;
  const char* error_message_ = "";
  std::uint8_t minor_version_ = 1;
  bool head_request_ = false;
  bool head_complete_ = false;
  bool started_ = false;
  std::uint32_t interim_heads_ = 0;
  bool pending_cr_ = false;
  bool has_content_length_ = false;
  bool has_transfer_encoding_ = false;
  bool connection_close_ = false;
  bool connection_keep_alive_ = false;
  bool chunk_digits_ = false;        // The chunk-size line has at least one hex digit.
  bool chunk_after_digits_ = false;  // Past the hex digits (whitespace or extension).
  bool chunk_in_extension_ = false;  // Past the ';' of a chunk extension.
  bool trailer_line_empty_ = true;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_RESPONSE_PARSER_HPP_

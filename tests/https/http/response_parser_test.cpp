#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stepback/https/http/response_parser.hpp"

namespace stepback::https {
namespace {

constexpr std::uint64_t kNoLimit = ~std::uint64_t{0};

struct Options {
  bool head_request = false;
  bool eof = false;  // Call finish() when the input runs out before the response ends.
  std::size_t head_buffer = 1024;
  std::uint64_t body_limit = kNoLimit;
};

// Everything observable about one parse, compared between ways of slicing the input.
struct Observed {
  ParseProgress progress = ParseProgress::kFailed;
  Status error = Status::kError;
  std::uint16_t status = 0;
  int minor_version = -1;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::uint64_t body_size = 0;
  bool keep_alive = false;
  bool chunked = false;
  std::optional<std::uint64_t> content_length;
  std::size_t consumed = 0;

  bool operator==(const Observed& o) const {
    return progress == o.progress && error == o.error && status == o.status &&
           minor_version == o.minor_version && reason == o.reason && headers == o.headers &&
           body == o.body && body_size == o.body_size && keep_alive == o.keep_alive &&
           chunked == o.chunked && content_length == o.content_length && consumed == o.consumed;
  }
};

std::ostream& operator<<(std::ostream& os, const Observed& o) {
  os << "{progress=" << static_cast<int>(o.progress) << " error=" << to_string(o.error)
     << " status=" << o.status << " reason='" << o.reason << "' body='" << o.body
     << "' keep_alive=" << o.keep_alive << " chunked=" << o.chunked << " consumed=" << o.consumed
     << " headers=" << o.headers.size() << "}";
  return os;
}

bool append_body(void* context, ConstBytes data) {
  static_cast<std::string*>(context)->append(reinterpret_cast<const char*>(data.data), data.size);
  return true;
}

// Feeds `input` cut at `cuts` (ascending offsets), as a receive loop would.
Observed run(std::string_view input, const std::vector<std::size_t>& cuts, const Options& opt) {
  Observed o;
  std::vector<std::uint8_t> head(opt.head_buffer);
  ResponseParser parser(MutableBytes{head.data(), head.size()}, BodySink{append_body, &o.body},
                        opt.body_limit);
  parser.reset(opt.head_request);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(input.data());
  ParseProgress p = ParseProgress::kNeedMore;
  std::size_t begin = 0;
  for (std::size_t k = 0; k <= cuts.size() && p == ParseProgress::kNeedMore; ++k) {
    const std::size_t end = k < cuts.size() ? cuts[k] : input.size();
    std::size_t used = 0;
    p = parser.feed(ConstBytes{bytes + begin, end - begin}, &used);
    o.consumed += used;
    if (p == ParseProgress::kNeedMore && used != end - begin) {
      ADD_FAILURE() << "kNeedMore without consuming everything";
    }
    begin = end;
  }
  if (p == ParseProgress::kNeedMore && opt.eof) p = parser.finish();
  o.progress = p;
  o.error = parser.error();
  o.status = parser.status();
  o.minor_version = parser.head_complete() ? parser.minor_version() : -1;
  o.reason = std::string(parser.reason());
  std::size_t cursor = 0;
  std::string_view name;
  std::string_view value;
  while (parser.next_header(&cursor, &name, &value)) o.headers.emplace_back(name, value);
  o.body_size = parser.body_size();
  o.keep_alive = parser.keep_alive();
  o.chunked = parser.chunked();
  o.content_length = parser.content_length();
  return o;
}

// Runs `input` whole, split in two at every offset, and one byte at a time; every way
// must observe exactly the same thing, which is returned.
Observed run_every_split(std::string_view input, const Options& opt) {
  const Observed whole = run(input, {}, opt);
  for (std::size_t cut = 0; cut <= input.size(); ++cut) {
    EXPECT_EQ(run(input, {cut}, opt), whole) << "split at " << cut;
  }
  std::vector<std::size_t> every;
  for (std::size_t cut = 1; cut < input.size(); ++cut) every.push_back(cut);
  EXPECT_EQ(run(input, every, opt), whole) << "one byte at a time";
  return whole;
}

struct Case {
  const char* name;
  std::string input;
  ParseProgress progress;
  Status error = Status::kOk;
  std::uint16_t status = 0;
  std::string body;
  bool keep_alive = false;
  Options options;
  std::size_t left_over = 0;  // Bytes after the response that must not be consumed.
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

constexpr ParseProgress kDone = ParseProgress::kDone;
constexpr ParseProgress kFailed = ParseProgress::kFailed;
constexpr ParseProgress kNeedMore = ParseProgress::kNeedMore;

Options eof() {
  Options o;
  o.eof = true;
  return o;
}
Options head_request() {
  Options o;
  o.head_request = true;
  return o;
}
Options head_buffer(std::size_t size) {
  Options o;
  o.head_buffer = size;
  return o;
}
Options body_limit(std::uint64_t limit, bool at_eof = false) {
  Options o;
  o.body_limit = limit;
  o.eof = at_eof;
  return o;
}

Case ok(const char* name, std::string input, std::uint16_t status, std::string body,
        bool keep_alive, Options options = {}, std::size_t left_over = 0) {
  return Case{name,       std::move(input), kDone,    Status::kOk, status, std::move(body),
              keep_alive, options,          left_over};
}
Case bad(const char* name, std::string input, Status error, Options options = {}) {
  return Case{name, std::move(input), kFailed, error, 0, "", false, options, 0};
}
// A failure after the head was accepted: the status and the body so far stay visible.
Case late(const char* name, std::string input, Status error, std::string body, Options options) {
  return Case{name, std::move(input), kFailed, error, 200, std::move(body), false, options, 0};
}
Case protocol(const char* name, std::string input) {
  return bad(name, std::move(input), Status::kProtocol);
}

const std::string kOk200 = "HTTP/1.1 200 OK\r\n";

std::vector<Case> cases() {
  using std::string;
  std::vector<Case> v = {
      // Status lines.
      ok("basic", kOk200 + "Content-Length: 5\r\n\r\nhello", 200, "hello", true),
      ok("http10_closes", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", 200, "hi", false),
      ok("http10_keep_alive",
         "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nhi", 200, "hi",
         true),
      ok("http11_connection_close", kOk200 + "Connection: close\r\nContent-Length: 2\r\n\r\nhi",
         200, "hi", false),
      ok("connection_list", kOk200 + "Connection: foo, close\r\nContent-Length: 0\r\n\r\n", 200, "",
         false),
      ok("no_reason", "HTTP/1.1 204\r\n\r\n", 204, "", true),
      ok("empty_reason", "HTTP/1.1 204 \r\n\r\n", 204, "", true),
      ok("reason_with_tab_and_obs_text",
         "HTTP/1.1 503 Service\tUnavailable \xe2\x9c\x97\r\n"
         "Content-Length: 0\r\n\r\n",
         503, "", true),
      ok("bare_lf", "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", 200, "hi", true),
      ok("mixed_line_endings", "HTTP/1.1 200 OK\r\nA: 1\nContent-Length: 2\r\n\nhi", 200, "hi",
         true),
      ok("status_599", "HTTP/1.1 599 X\r\nContent-Length: 0\r\n\r\n", 599, "", true),
      protocol("http2", "HTTP/2 200 OK\r\n\r\n"),
      protocol("http12", "HTTP/1.2 200 OK\r\n\r\n"),
      protocol("lower_case_version", "http/1.1 200 OK\r\n\r\n"),
      protocol("two_digit_status", "HTTP/1.1 20 OK\r\n\r\n"),
      protocol("four_digit_status", "HTTP/1.1 2000 OK\r\n\r\n"),
      protocol("status_099", "HTTP/1.1 099 X\r\n\r\n"),
      protocol("status_600", "HTTP/1.1 600 X\r\n\r\n"),
      protocol("status_not_digits", "HTTP/1.1 2x0 OK\r\n\r\n"),
      protocol("double_space", "HTTP/1.1  200 OK\r\n\r\n"),
      protocol("no_space_before_reason", "HTTP/1.1 200OK\r\n\r\n"),
      protocol("leading_empty_line", "\r\nHTTP/1.1 200 OK\r\n\r\n"),
      protocol("bare_cr_in_status", "HTTP/1.1 200 O\rK\r\n\r\n"),
      protocol("nul_in_reason", string("HTTP/1.1 200 O\0K\r\n\r\n", 19)),
      protocol("not_http", "SSH-2.0-OpenSSH_9.2\r\n"),
      protocol("switching_protocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"),
      // Header fields.
      ok("ows_trimmed", kOk200 + "X-A: \t v \t\r\nContent-Length:0\r\n\r\n", 200, "", true),
      ok("empty_value", kOk200 + "X-A:\r\nContent-Length: 0\r\n\r\n", 200, "", true),
      // obs-fold joins the previous value with SP (RFC 9112 5.2; FoldedLinesJoinTheirField).
      ok("obs_fold", kOk200 + "X-A: 1\r\n  more\r\nContent-Length: 0\r\n\r\n", 200, "", true),
      ok("obs_fold_tab", kOk200 + "X-A: 1\r\n\tmore\r\nContent-Length: 0\r\n\r\n", 200, "", true),
      ok("obs_fold_blank", kOk200 + "X-A: 1\r\n \t \r\nContent-Length: 0\r\n\r\n", 200, "", true),
      protocol("obs_fold_before_first_field", kOk200 + "  X-A: 1\r\n\r\n"),
      protocol("obs_fold_into_content_length", kOk200 + "Content-Length: 1\r\n 2\r\n\r\nx"),
      protocol("space_before_colon", kOk200 + "X-A : 1\r\n\r\n"),
      protocol("empty_name", kOk200 + ": 1\r\n\r\n"),
      protocol("no_colon", kOk200 + "NoColon\r\n\r\n"),
      protocol("bad_name_char", kOk200 + "X(A): 1\r\n\r\n"),
      protocol("control_in_value", kOk200 + "X-A: a\x01z\r\n\r\n"),
      protocol("del_in_value", kOk200 + "X-A: a\x7fz\r\n\r\n"),
      protocol("nul_in_value", kOk200 + string("X-A: a\0z\r\n\r\n", 11)),
      protocol("bare_cr_in_value", kOk200 + "X-A: a\rz\r\n\r\n"),
      protocol("cr_cr_lf", kOk200 + "X-A: a\r\r\n\r\n"),
      // Content-Length.
      ok("content_length_zero", kOk200 + "Content-Length: 0\r\n\r\n", 200, "", true),
      ok("content_length_list_same", kOk200 + "Content-Length: 3, 3\r\n\r\nabc", 200, "abc", true),
      ok("content_length_repeated_same",
         kOk200 + "Content-Length: 3\r\ncontent-length: 003\r\n\r\nabc", 200, "abc", true),
      ok("bytes_after_body_left", kOk200 + "Content-Length: 3\r\n\r\nabcHTTP/1.1", 200, "abc", true,
         {}, 8),
      protocol("content_length_differs",
               kOk200 + "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
      protocol("content_length_list_differs", kOk200 + "Content-Length: 3, 4\r\n\r\nabcd"),
      protocol("content_length_letters", kOk200 + "Content-Length: abc\r\n\r\n"),
      protocol("content_length_plus", kOk200 + "Content-Length: +5\r\n\r\n"),
      protocol("content_length_negative", kOk200 + "Content-Length: -1\r\n\r\n"),
      protocol("content_length_hex", kOk200 + "Content-Length: 0x5\r\n\r\n"),
      protocol("content_length_empty", kOk200 + "Content-Length:\r\n\r\n"),
      protocol("content_length_inner_space", kOk200 + "Content-Length: 1 2\r\n\r\n"),
      protocol("content_length_overflow", kOk200 + "Content-Length: 18446744073709551616\r\n\r\n"),
      protocol("content_length_huge",
               kOk200 + "Content-Length: 99999999999999999999999999\r\n\r\n"),
      // Regression: 2^64-1 was taken as a body cut short and retried; a length beyond
      // ResponseParser::kMaxBodyLength (2^63-1) is now refused at the head.
      late("content_length_2_64_minus_1",
           kOk200 + "Content-Length: 18446744073709551615\r\n\r\nshort", Status::kProtocol, "", {}),
      late("content_length_2_63", kOk200 + "Content-Length: 9223372036854775808\r\n\r\nx",
           Status::kProtocol, "", {}),
      ok("head_with_content_length_2_64_minus_1",
         kOk200 + "Content-Length: 18446744073709551615\r\n\r\n", 200, "", true, head_request()),
      Case{"content_length_2_63_minus_1_waits",
           kOk200 + "Content-Length: 9223372036854775807\r\n\r\nabc",
           kNeedMore,
           Status::kOk,
           200,
           "abc",
           false,
           {}},
      late("content_length_truncated_at_eof", kOk200 + "Content-Length: 10\r\n\r\nabc",
           Status::kReset, "abc", eof()),
      Case{"content_length_waits",
           kOk200 + "Content-Length: 10\r\n\r\nabc",
           kNeedMore,
           Status::kOk,
           200,
           "abc",
           false,
           {}},
      // Chunked.
      ok("chunked",
         kOk200 + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", 200,
         "hello world", true),
      ok("chunked_hex_cases",
         kOk200 + "Transfer-Encoding: Chunked\r\n\r\na\r\n0123456789\r\n"
                  "B\r\nabcdefghijk\r\n0\r\n\r\n",
         200, "0123456789abcdefghijk", true),
      ok("chunked_extensions",
         kOk200 + "Transfer-Encoding: chunked\r\n\r\n5;name=value;x\r\nhello\r\n"
                  "3 ; q=\"a b\"\r\nabc\r\n0;last\r\n\r\n",
         200, "helloabc", true),
      ok("chunked_trailers",
         kOk200 + "Transfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n"
                  "X-Checksum: 1\r\nY: 2\r\n\r\n",
         200, "hi", true),
      ok("chunked_empty", kOk200 + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 200, "", true),
      ok("chunked_leading_zeros",
         kOk200 + "Transfer-Encoding: chunked\r\n\r\n"
                  "0000000000000000000000002\r\nhi\r\n0\r\n\r\n",
         200, "hi", true),
      ok("chunked_bare_lf", kOk200 + "Transfer-Encoding: chunked\n\n2\nhi\n0\n\n", 200, "hi", true),
      ok("chunked_and_content_length",
         kOk200 + "Content-Length: 100\r\nTransfer-Encoding: chunked\r\n"
                  "\r\n2\r\nhi\r\n0\r\n\r\n",
         200, "hi", false),
      ok("chunked_then_next_response", kOk200 + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nHTTP",
         200, "", true, {}, 4),
      late("chunked_bad_hex", kOk200 + "Transfer-Encoding: chunked\r\n\r\n5g\r\nhello\r\n0\r\n\r\n",
           Status::kProtocol, "", {}),
      late("chunk_size_2_63", kOk200 + "Transfer-Encoding: chunked\r\n\r\n8000000000000000\r\nhi",
           Status::kProtocol, "", {}),
      late("chunked_not_hex", kOk200 + "Transfer-Encoding: chunked\r\n\r\nxyz\r\n",
           Status::kProtocol, "", {}),
      late("chunked_empty_size", kOk200 + "Transfer-Encoding: chunked\r\n\r\n\r\nhi\r\n",
           Status::kProtocol, "", {}),
      late("chunked_negative", kOk200 + "Transfer-Encoding: chunked\r\n\r\n-2\r\nhi\r\n",
           Status::kProtocol, "", {}),
      late("chunked_0x_prefix", kOk200 + "Transfer-Encoding: chunked\r\n\r\n0x2\r\nhi\r\n",
           Status::kProtocol, "", {}),
      late("chunked_space_in_size", kOk200 + "Transfer-Encoding: chunked\r\n\r\n1 2\r\n",
           Status::kProtocol, "", {}),
      late("chunked_leading_space", kOk200 + "Transfer-Encoding: chunked\r\n\r\n 2\r\nhi\r\n",
           Status::kProtocol, "", {}),
      late("chunked_data_overruns",
           kOk200 + "Transfer-Encoding: chunked\r\n\r\n2\r\nhiX\r\n0\r\n\r\n", Status::kProtocol,
           "hi", {}),
      late("chunked_cr_without_lf", kOk200 + "Transfer-Encoding: chunked\r\n\r\n2\r\nhi\rX",
           Status::kProtocol, "hi", {}),
      late("chunked_size_overflow",
           kOk200 + "Transfer-Encoding: chunked\r\n\r\n"
                    "10000000000000000\r\n",
           Status::kProtocol, "", {}),
      late("chunked_control_in_extension",
           kOk200 + "Transfer-Encoding: chunked\r\n\r\n"
                    "2;a\x01\r\nhi\r\n0\r\n\r\n",
           Status::kProtocol, "", {}),
      late("chunked_control_in_trailer",
           kOk200 + "Transfer-Encoding: chunked\r\n\r\n"
                    "0\r\nX: \x01\r\n\r\n",
           Status::kProtocol, "", {}),
      protocol("transfer_encoding_gzip", kOk200 + "Transfer-Encoding: gzip\r\n\r\n"),
      protocol("transfer_encoding_gzip_chunked",
               kOk200 + "Transfer-Encoding: gzip, chunked\r\n\r\n"),
      protocol("transfer_encoding_twice", kOk200 + "Transfer-Encoding: chunked\r\n"
                                                   "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
      protocol("transfer_encoding_http10",
               "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               "0\r\n\r\n"),
      late("chunked_truncated_at_eof", kOk200 + "Transfer-Encoding: chunked\r\n\r\n5\r\nhel",
           Status::kReset, "hel", eof()),
      late("chunked_trailers_truncated_at_eof",
           kOk200 + "Transfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n", Status::kReset, "", eof()),
      late("chunked_huge_size_over_limit",
           kOk200 + "Transfer-Encoding: chunked\r\n\r\n"
                    "FFFFFFFFFFFFFFFF\r\n",
           Status::kBodyTooLarge, "", body_limit(1000)),
      // Body delimited by the close.
      ok("until_close", kOk200 + "\r\nabc", 200, "abc", false, eof()),
      ok("until_close_empty", kOk200 + "\r\n", 200, "", false, eof()),
      ok("until_close_http10", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nabc", 200, "abc",
         false, eof()),
      Case{"until_close_waits", kOk200 + "\r\nabc", kNeedMore, Status::kOk, 200, "abc", false, {}},
      // Responses without a body.
      ok("head_with_content_length", kOk200 + "Content-Length: 100\r\n\r\n", 200, "", true,
         head_request()),
      ok("head_with_chunked", kOk200 + "Transfer-Encoding: chunked\r\n\r\n", 200, "", true,
         head_request()),
      ok("head_leaves_next", kOk200 + "Content-Length: 100\r\n\r\nHTTP/1.1", 200, "", true,
         head_request(), 8),
      ok("no_content", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", true),
      ok("no_content_ignores_length", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nabcde",
         204, "", true, {}, 5),
      ok("not_modified", "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", 304, "", true),
      // Interim responses.
      ok("continue_then_ok",
         "HTTP/1.1 100 Continue\r\n\r\n" + kOk200 + "Content-Length: 2\r\n\r\nok", 200, "ok", true),
      ok("several_interim",
         "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\n"
         "Link: </a.css>; rel=preload\r\nContent-Length: 99\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
         "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
         201, "ok", true),
      bad("continue_then_eof", "HTTP/1.1 100 Continue\r\n\r\n", Status::kReset, eof()),
      // Caller limits.
      bad("head_too_large", kOk200 + "X-Long: " + string(100, 'a') + "\r\n\r\n",
          Status::kHeadersTooLarge, head_buffer(64)),
      bad("status_line_too_large", "HTTP/1.1 200 " + string(100, 'a') + "\r\n\r\n",
          Status::kHeadersTooLarge, head_buffer(64)),
      bad("no_head_buffer", kOk200 + "\r\n", Status::kHeadersTooLarge, head_buffer(0)),
      ok("head_exactly_fits", kOk200 + "A: b\r\n\r\n", 200, "", false,
         [] {
           Options o = head_buffer(16 + 5);  // "HTTP/1.1 200 OK\n", then "A: b\n" before trimming.
           o.eof = true;
           return o;
         }()),
      bad("head_one_byte_short", kOk200 + "A: b\r\n\r\n", Status::kHeadersTooLarge,
          head_buffer(20)),
      late("trailers_too_large",
           kOk200 + "Transfer-Encoding: chunked\r\n\r\n0\r\nX: " + string(100, 'a') + "\r\n\r\n",
           Status::kHeadersTooLarge, "", head_buffer(64)),
      late("chunk_line_too_long",
           kOk200 + "Transfer-Encoding: chunked\r\n\r\n1;" + string(1100, 'e') +
               "\r\na\r\n0\r\n\r\n",
           Status::kProtocol, "", {}),
      late("content_length_over_limit", kOk200 + "Content-Length: 10\r\n\r\n0123456789",
           Status::kBodyTooLarge, "", body_limit(9)),
      ok("content_length_at_limit", kOk200 + "Content-Length: 10\r\n\r\n0123456789", 200,
         "0123456789", true, body_limit(10)),
      late("chunked_over_limit",
           kOk200 + "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n",
           Status::kBodyTooLarge, "abc", body_limit(5)),
      late("until_close_over_limit", kOk200 + "\r\nabcdefgh", Status::kBodyTooLarge, "abcde",
           body_limit(5, true)),
      ok("until_close_at_limit", kOk200 + "\r\nabcde", 200, "abcde", false, body_limit(5, true)),
      ok("head_ignores_limit", kOk200 + "Content-Length: 100\r\n\r\n", 200, "", true,
         [] {
           Options o = head_request();
           o.body_limit = 0;
           return o;
         }()),
      // End of stream.
      bad("eof_before_anything", "", Status::kClosed, eof()),
      bad("eof_in_status_line", "HTTP/1.1 2", Status::kReset, eof()),
      bad("eof_in_headers", kOk200 + "Content-Length: 5\r\n", Status::kReset, eof()),
      Case{"incomplete_status_waits", "HTTP/1.1 200 O", kNeedMore, Status::kOk, 0, "", false, {}},
  };
  return v;
}

class Http1ResponseTable : public testing::TestWithParam<Case> {};

TEST_P(Http1ResponseTable, SameResultAtEverySplit) {
  const Case& c = GetParam();
  const Observed o = run_every_split(c.input, c.options);
  EXPECT_EQ(o.progress, c.progress) << o;
  EXPECT_EQ(o.error, c.error) << o;
  if (c.progress == kDone) {
    EXPECT_EQ(o.consumed, c.input.size() - c.left_over) << o;
  }
  EXPECT_EQ(o.status, c.status) << o;
  EXPECT_EQ(o.body, c.body) << o;
  EXPECT_EQ(o.body_size, c.body.size()) << o;
  EXPECT_EQ(o.keep_alive, c.keep_alive) << o;
}

INSTANTIATE_TEST_SUITE_P(Cases, Http1ResponseTable, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& param) {
                           return std::string(param.param.name);
                         });

// A parser over a fixed input, for tests of the accessors.
struct Parsed {
  std::vector<std::uint8_t> head = std::vector<std::uint8_t>(1024);
  std::string body;
  ResponseParser parser{MutableBytes{head.data(), head.size()}, BodySink{append_body, &body},
                        kNoLimit};
  ParseProgress progress;

  explicit Parsed(std::string_view input, bool head_request = false) {
    parser.reset(head_request);
    std::size_t used = 0;
    progress = parser.feed(
        ConstBytes{reinterpret_cast<const std::uint8_t*>(input.data()), input.size()}, &used);
  }
};

TEST(Http1ResponseParser, HeaderLookupIsCaseInsensitiveAndTrimmed) {
  Parsed p(
      "HTTP/1.1 503 Service Unavailable\r\nRetry-After:  120 \r\n"
      "content-type: application/x-protobuf\r\nX-Dup: 1\r\nx-dup: 2\r\n"
      "Content-Length: 0\r\n\r\n");
  ASSERT_EQ(p.progress, kDone);
  EXPECT_EQ(p.parser.status(), 503);
  EXPECT_EQ(p.parser.reason(), "Service Unavailable");
  EXPECT_EQ(p.parser.retry_after(), std::optional<std::string_view>("120"));
  EXPECT_EQ(p.parser.content_type(), std::optional<std::string_view>("application/x-protobuf"));
  EXPECT_EQ(p.parser.header("CONTENT-TYPE"),
            std::optional<std::string_view>("application/x-protobuf"));
  EXPECT_EQ(p.parser.header("x-DUP"), std::optional<std::string_view>("1"));
  EXPECT_EQ(p.parser.header("X-Missing"), std::nullopt);
  EXPECT_EQ(p.parser.header("Content-Typ"), std::nullopt);
  EXPECT_EQ(p.parser.content_length(), std::optional<std::uint64_t>(0));
  EXPECT_FALSE(p.parser.chunked());
}

TEST(Http1ResponseParser, NothingVisibleBeforeHeadCompletes) {
  Parsed p("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n");
  ASSERT_EQ(p.progress, kNeedMore);
  EXPECT_FALSE(p.parser.head_complete());
  EXPECT_TRUE(p.parser.started());
  EXPECT_EQ(p.parser.status(), 0);
  EXPECT_EQ(p.parser.reason(), "");
  EXPECT_EQ(p.parser.content_type(), std::nullopt);
  EXPECT_FALSE(p.parser.keep_alive());
}

TEST(Http1ResponseParser, InterimFieldsAreDiscarded) {
  Parsed p(
      "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(p.progress, kDone);
  EXPECT_EQ(p.parser.status(), 200);
  EXPECT_EQ(p.parser.header("link"), std::nullopt);
}

// Regression: an endless stream of 103 Early Hints kept a client past its deadline;
// interim heads are now capped.
TEST(Http1ResponseParser, EndlessInterimHeadsAreAProtocolError) {
  std::string many;
  for (std::uint32_t i = 0; i < ResponseParser::kMaxInterimHeads; ++i) {
    many += "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n";
  }
  Parsed within(many + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(within.progress, kDone);
  Parsed beyond(many +
                "HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(beyond.progress, ParseProgress::kFailed);
  EXPECT_EQ(beyond.parser.error(), Status::kProtocol);
}

// Regression: every failure of the Client read "the response is not valid HTTP/1.1", also
// when a limit was hit (1000 103 Early Hints); each failure now has its own sentence.
TEST(Http1ResponseParser, EveryFailureSaysWhy) {
  for (const Case& c : cases()) {
    std::vector<std::uint8_t> head(c.options.head_buffer);
    std::string body;
    ResponseParser parser(MutableBytes{head.data(), head.size()}, BodySink{append_body, &body},
                          c.options.body_limit);
    parser.reset(c.options.head_request);
    std::size_t used = 0;
    ParseProgress p = parser.feed(
        ConstBytes{reinterpret_cast<const std::uint8_t*>(c.input.data()), c.input.size()}, &used);
    if (p == kNeedMore && c.options.eof) p = parser.finish();
    if (p == kFailed) {
      EXPECT_GT(std::string_view(parser.error_message()).size(), 20U) << c.name;
    } else {
      EXPECT_STREQ(parser.error_message(), "") << c.name;
    }
  }
}

TEST(Http1ResponseParser, FailureMessagesNameTheLimitOrTheField) {
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "HTTP/1.1 103 Early Hints\r\n\r\n";
  const Parsed interim(many + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(interim.progress, kFailed);
  EXPECT_STREQ(interim.parser.error_message(),
               "the server sent more than 16 interim (1xx) responses before the final one (the "
               "limit, ResponseParser::kMaxInterimHeads)");
  const Parsed length("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nab");
  ASSERT_EQ(length.progress, kFailed);
  EXPECT_STREQ(length.parser.error_message(),
               "the response's Content-Length is above 2^63-1 bytes, more than any body can be "
               "(the limit, ResponseParser::kMaxBodyLength)");
  const Parsed upgrade("HTTP/1.1 101 Switching Protocols\r\n\r\n");
  EXPECT_STREQ(upgrade.parser.error_message(),
               "the server answered 101 Switching Protocols, which was never asked for");
  Parsed fine("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  EXPECT_STREQ(fine.parser.error_message(), "");
  std::size_t used = 0;
  const std::string bad = "HTTP/1.1 2x0 OK\r\n\r\n";
  fine.parser.reset();
  EXPECT_EQ(fine.parser.feed(
                ConstBytes{reinterpret_cast<const std::uint8_t*>(bad.data()), bad.size()}, &used),
            kFailed);
  EXPECT_NE(std::string_view(fine.parser.error_message()).find("status line"),
            std::string_view::npos)
      << fine.parser.error_message();
  fine.parser.reset();
  EXPECT_STREQ(fine.parser.error_message(), "") << "reset() forgets the failure";
}

TEST(Http1ResponseParser, FailureIsStickyAndResetStartsOver) {
  Parsed p("HTTP/9.9 200 OK\r\n\r\n");
  ASSERT_EQ(p.progress, kFailed);
  EXPECT_EQ(p.parser.error(), Status::kProtocol);
  std::size_t used = 99;
  const std::string good = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
  const ConstBytes bytes{reinterpret_cast<const std::uint8_t*>(good.data()), good.size()};
  EXPECT_EQ(p.parser.feed(bytes, &used), kFailed);
  EXPECT_EQ(used, 0U);
  EXPECT_EQ(p.parser.finish(), kFailed);
  p.parser.reset();
  EXPECT_EQ(p.parser.error(), Status::kOk);
  EXPECT_FALSE(p.parser.started());
  EXPECT_EQ(p.parser.feed(bytes, &used), kDone);
  EXPECT_EQ(used, good.size());
  EXPECT_EQ(p.parser.body_size(), 1U);
  EXPECT_EQ(p.body, "x");
  EXPECT_EQ(p.parser.feed(bytes, &used), kDone);  // Done repeats and consumes nothing.
  EXPECT_EQ(used, 0U);
  EXPECT_EQ(p.parser.finish(), kDone);
}

TEST(Http1ResponseParser, KeepAliveResponsesReuseOneParser) {
  std::vector<std::uint8_t> head(256);
  std::string body;
  ResponseParser parser(MutableBytes{head.data(), head.size()}, BodySink{append_body, &body}, 100);
  const std::string stream = kOk200 + "Content-Length: 2\r\n\r\nab" + kOk200 +
                             "Transfer-Encoding: chunked\r\n\r\n2\r\ncd\r\n0\r\n\r\n";
  ConstBytes rest{reinterpret_cast<const std::uint8_t*>(stream.data()), stream.size()};
  for (int i = 0; i < 2; ++i) {
    parser.reset();
    std::size_t used = 0;
    ASSERT_EQ(parser.feed(rest, &used), kDone);
    EXPECT_TRUE(parser.keep_alive());
    rest.data += used;
    rest.size -= used;
  }
  EXPECT_EQ(rest.size, 0U);
  EXPECT_EQ(body, "abcd");
}

TEST(Http1ResponseParser, SinkCanAbort) {
  std::vector<std::uint8_t> head(256);
  auto refuse = [](void*, ConstBytes) { return false; };
  ResponseParser parser(MutableBytes{head.data(), head.size()}, BodySink{refuse, nullptr}, 100);
  const std::string input = kOk200 + "Content-Length: 2\r\n\r\nab";
  std::size_t used = 0;
  EXPECT_EQ(
      parser.feed(ConstBytes{reinterpret_cast<const std::uint8_t*>(input.data()), input.size()},
                  &used),
      kFailed);
  EXPECT_EQ(parser.error(), Status::kError);
  EXPECT_EQ(parser.body_size(), 0U);
}

TEST(Http1ResponseParser, NullSinkDiscardsButCounts) {
  std::vector<std::uint8_t> head(256);
  ResponseParser parser(MutableBytes{head.data(), head.size()}, BodySink{}, 100);
  const std::string input = kOk200 + "Content-Length: 2\r\n\r\nab";
  std::size_t used = 0;
  EXPECT_EQ(
      parser.feed(ConstBytes{reinterpret_cast<const std::uint8_t*>(input.data()), input.size()},
                  &used),
      kDone);
  EXPECT_EQ(parser.body_size(), 2U);
}

TEST(Http1ResponseParser, EmptyAndNullInputNeedMore) {
  Parsed p("");
  EXPECT_EQ(p.progress, kNeedMore);
  EXPECT_FALSE(p.parser.started());
  std::size_t used = 5;
  EXPECT_EQ(p.parser.feed(ConstBytes{nullptr, 10}, &used), kNeedMore);
  EXPECT_EQ(used, 0U);
  EXPECT_EQ(p.parser.finish(), kFailed);
  EXPECT_EQ(p.parser.error(), Status::kClosed);
}

}  // namespace
}  // namespace stepback::https

namespace stepback::https {
namespace {

// Regression: folded header lines (obs-fold) were refused as a protocol error; a user agent
// must replace each fold with SP (RFC 9112 5.2).
TEST(Http1ResponseParser, FoldedLinesJoinTheirField) {
  const Observed o = run_every_split(
      "HTTP/1.1 200 OK\r\nX-A: first\r\n   second \r\n\tthird\r\nX-B: b\r\n"
      "Content-Length: 0\r\n\r\n",
      Options{});
  ASSERT_EQ(o.headers.size(), 3U);
  EXPECT_EQ(o.headers[0], (std::pair<std::string, std::string>{"X-A", "first second third"}));
  EXPECT_EQ(o.headers[1], (std::pair<std::string, std::string>{"X-B", "b"}));
}

}  // namespace
}  // namespace stepback::https

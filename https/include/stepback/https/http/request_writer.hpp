// The request half of the HTTP/1.1 message layer: method classification and the request-head
// writer (the URL it writes for is url.hpp's). Everything works on views of caller-owned text;
// nothing allocates.
#ifndef STEPBACK_HTTPS_HTTP_REQUEST_WRITER_HPP_
#define STEPBACK_HTTPS_HTTP_REQUEST_WRITER_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/https/http/url.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// Whether a request with `method` (case-sensitive, RFC 9110 9.2.2) may be repeated
// without changing the outcome: GET, HEAD, PUT, DELETE, OPTIONS and TRACE; any other
// method, POST and PATCH included, is not.
bool is_idempotent_method(std::string_view method);

// One caller-supplied header field; the views must outlive write_request_head().
struct Header {
  std::string_view name;   // A token (RFC 9110 5.1).
  std::string_view value;  // Visible ASCII, SP, HTAB or obs-text; no CR, LF, NUL or other CTL.
};

// A field value asked for as the head is written, not held beforehand (a token that may be
// refreshed between attempts): write(context, refresh, out) puts the value into `out`, the room
// the head has left, and answers its length (0: no such field; more than out.size: it does not
// fit).
struct LateValue {
  std::size_t (*write)(void* context, bool refresh, MutableBytes out) = nullptr;
  void* context = nullptr;
  bool refresh = false;  // Passed on: the value the last one replaced was refused.
};

// What write_request_head() formats; every view is caller-owned.
struct RequestHead {
  std::string_view method{"GET"};  // A token, sent as is (methods are case-sensitive).
  Url url;                         // Host, port and target.
  std::string_view user_agent;     // The User-Agent value; omitted when empty.
  // The Host value; empty: the URL's host (and port unless it is the default). The
  // connection and TLS (SNI, certificate name) still go by the URL.
  std::string_view host;
  const Header* headers = nullptr;  // Extra fields, sent in order after the standard ones.
  std::size_t header_count = 0;
  std::uint64_t body_size = 0;  // Bytes of body the caller sends after the head.
  bool close = false;           // Ask the server to close after the response.
  // Caller fields left out, for a redirect: credentials (Authorization, Cookie,
  // Proxy-Authorization) when it goes to another origin, Content-* when the body is dropped.
  bool omit_credentials = false;
  bool omit_content_fields = false;
  // For a forward proxy (Connector::forwards): the target in absolute form
  // (`http://host:port/path`), and the Proxy-Authorization value, omitted when empty.
  bool absolute_form = false;
  std::string_view proxy_authorization;
  // A range request (RFC 9110 14.2), after the caller's fields: `Range: bytes=FROM-`, or up
  // to byte range_end - 1 when range_end is not UINT64_MAX; If-Range with `if_range` (an
  // entity tag or HTTP-date) and Cloud Storage's x-goog-if-generation-match with
  // `generation_match` when they are not empty.
  bool ranged = false;
  std::uint64_t range_from = 0;
  std::uint64_t range_end = UINT64_MAX;
  std::string_view if_range;
  std::string_view generation_match;
  // The Authorization value, asked for last (after every other field has fitted), so a
  // request that cannot be written never asks; left out with omit_credentials.
  LateValue authorization;
};

// Writes the request line and header section of `head` into `out` and sets *written to
// its length: Host (with the port unless it is the default; IPv6 literals in brackets),
// User-Agent, Accept-Encoding: identity, Connection (keep-alive or close), Content-Length
// when body_size > 0 or the method is POST, PUT or PATCH, then the caller's headers, then
// the range fields, then Authorization.
// The body itself is not copied. kInvalidArgument for a method that is not a token, a
// malformed host or target, or a header whose name is not a token, whose value holds
// CR, LF, NUL or another control byte, or which the writer emits itself (Host,
// Content-Length, Transfer-Encoding, Connection, Accept-Encoding, and User-Agent when
// user_agent is set), or an Authorization value with such a byte; kBufferTooSmall when it does
// not fit. On failure *written is 0.
[[nodiscard]] Status write_request_head(const RequestHead& head, MutableBytes out,
                                        std::size_t* written);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_REQUEST_WRITER_HPP_

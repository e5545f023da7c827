// The request as the caller gives it (head, body source, idempotency rule), and the rule
// that decides whether it may be sent again once it may have reached the server
// (RFC 9110 9.2.2, and the preconditions that make a request safe to repeat).
#ifndef STEPBACK_HTTPS_HTTP_REQUEST_HPP_
#define STEPBACK_HTTPS_HTTP_REQUEST_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// Where the request body comes from: read(context, offset, out) copies up to out.size bytes
// starting at byte `offset` of the body into out and returns how many (0 only past the end).
// Any attempt may read from any offset again, so the body never has to sit in memory.
struct BodySource {
  std::size_t (*read)(void* context, std::uint64_t offset, MutableBytes out) = nullptr;
  void* context = nullptr;
  std::uint64_t size = 0;  // The body's length in bytes.

  // A source over `*bytes`, which must outlive every use of the source.
  static BodySource of(const ConstBytes* bytes);
};

// The request: method, URL, headers and body, all owned by the caller for the client's life.
struct RequestSpec {
  RequestHead head;
  BodySource body;
  // Whether the request may be re-sent after it may have reached the server:
  //   kByMethod  GET, HEAD, PUT, DELETE, OPTIONS, TRACE yes; POST, PATCH no (RFC 9110 9.2.2).
  //   kStrict    safe methods (GET, HEAD, OPTIONS, TRACE), or any request with a precondition
  //              (If-Match, If-None-Match, If-Unmodified-Since, Cloud Storage's
  //              ifGenerationMatch / ifMetagenerationMatch / ifSourceGenerationMatch query
  //              parameters or x-goog-if-generation-match / -metageneration-match headers).
  //   kYes, kNo  as the caller declares.
  // A request that is not idempotent under its rule is re-sent only when it provably never
  // left (lookup, connect, handshake failed before any request byte was written); under
  // kStrict and kNo a 429 or 503 does not count as "not processed".
  enum class Idempotency : std::uint8_t { kByMethod, kStrict, kYes, kNo };
  Idempotency idempotency = Idempotency::kByMethod;
};

// Whether `spec` may be re-sent after it may have reached the server, under its rule.
bool is_idempotent(const RequestSpec& spec);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_REQUEST_HPP_

// The request as the caller gives it (head, body source, idempotency rule), and the rule
// that decides whether it may be sent again once it may have reached the server
// (RFC 9110 9.2.2, and the preconditions that make a request safe to repeat).
#ifndef STEPBACK_HTTPS_HTTP_REQUEST_HPP_
#define STEPBACK_HTTPS_HTTP_REQUEST_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/http/redirect.hpp"
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

// The request as it stands between attempts: the caller's spec where redirects and fresh URLs
// have taken it, its host as a C string (for the resolver and SNI), and what its rules say.
class Request {
 public:
  static constexpr std::size_t kHostMax = 255;  // Bytes of host; longer ones are refused.

  // Whether set() takes `spec`: it has a host of at most kHostMax bytes, and a reader for a
  // body of nonzero size.
  static bool valid(const RequestSpec& spec);
  // Takes `spec` (its head's body_size set from its body); kInvalidArgument, and nothing
  // changes, when it is not valid().
  [[nodiscard]] Status set(const RequestSpec& spec);
  const RequestSpec& spec() const { return spec_; }
  const RequestHead& head() const { return spec_.head; }
  const Url& url() const { return spec_.head.url; }
  const char* host() const { return host_; }
  // Whether it may be re-sent after it may have reached the server (is_idempotent).
  bool idempotent() const { return idempotent_; }
  // Under the strict rules (kStrict, kNo) a 429 or 503 does not prove it was left alone.
  bool strict() const { return strict_; }
  // A GET: a cut 2xx body may be resumed with Range.
  bool resumable() const { return resumable_; }
  // Whether it already names a Cloud Storage generation (its URL's generation or
  // ifGenerationMatch, or an x-goog-if-generation-match field): then no precondition of the
  // client's is added.
  bool names_generation() const;
  // Moves it to `url`: to another origin without its credentials or a Host override.
  void retarget(const Url& url, bool same_origin);
  // Moves it where a redirect leads: to `url`, with the step's method, without its body (and
  // Content-* fields) when the step drops it; its rules follow the new method.
  void redirect(const Url& url, const RedirectStep& step);

 private:
  void follow_rules();

  RequestSpec spec_;
  char host_[kHostMax + 1] = {};
  bool idempotent_ = true;
  bool strict_ = false;
  bool resumable_ = false;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_REQUEST_HPP_

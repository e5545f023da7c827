// The pure rules of following an HTTP redirect: where a Location value points (RFC 3986
// section 5) and what the next request keeps of the one a 3xx answered (RFC 9110 15.4).
// Nothing here allocates or does I/O; the caller owns every byte.
#ifndef STEPBACK_HTTPS_HTTP_REDIRECT_HPP_
#define STEPBACK_HTTPS_HTTP_REDIRECT_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/https/http/url.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// Resolves `location` (a Location field value) against `base`, the URL of the request it
// answered, writes the absolute URL to `out` ("http[s]://" authority path [query], the path
// without dot segments and "/" when empty, the fragment dropped), stores its length in
// *size and parses it into *resolved (views into `out`). kInvalidArgument, whatever the
// size of `out`, for a location that is not an http(s) reference of visible ASCII (another
// scheme, "http:path" without an authority, userinfo, a bad host or port, a colon in the
// first segment of a relative path, any byte outside 0x21-0x7E) or when `out` overlaps the
// text of `base` or `location`; kBufferTooSmall when the URL does not fit in `out`.
// *resolved and *size are written on kOk only.
[[nodiscard]] Status resolve_location(const Url& base, std::string_view location, MutableBytes out,
                                      Url* resolved, std::size_t* size);

// Whether `a` and `b` have the same origin: scheme, host (ASCII case-insensitive, as
// written: "::1" and "0::1" differ) and port, so that "https://h" and "https://h:443" match.
bool same_origin(const Url& a, const Url& b);

// What a redirect response means for the next request.
struct RedirectStep {
  enum class Verdict : std::uint8_t {
    kNotRedirect,  // Not a status that is followed (300, 304, 305, 306, any other).
    kInsecure,     // An https request redirected to http: refused.
    kFollow,       // Request the new URL with `method`, and the body unless drop_body.
  };
  Verdict verdict = Verdict::kNotRedirect;
  std::string_view method;   // The next request's method: a literal or the given method.
  bool drop_body = false;    // The next request has no body (and no Content-* fields).
  bool same_origin = false;  // False: send no credentials (Authorization) to the new URL.
};

// Decides what a `status` response to a `method` request for `from` that points to `to`
// asks for (RFC 9110 15.4, as browsers and curl do): 303 turns any method but HEAD into a
// bodiless GET; 301 and 302 turn POST into a bodiless GET and keep other methods with
// their body; 307 and 308 keep method and body. Methods compare case-sensitively.
RedirectStep decide_redirect(std::string_view method, std::uint16_t status, const Url& from,
                             const Url& to);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_REDIRECT_HPP_

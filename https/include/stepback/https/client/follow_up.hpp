// The Client's follow-up: after a final response, whether the request goes on elsewhere or
// with something fresh instead of ending. A redirect (the chain, its limit and loops), an
// expired pre-signed URL replaced by the app's fresh one, an expired token answered with a
// fresh one. It decides and keeps the chain; the Client moves the request (retarget) and
// emits the events.
#ifndef STEPBACK_HTTPS_CLIENT_FOLLOW_UP_HPP_
#define STEPBACK_HTTPS_CLIENT_FOLLOW_UP_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/https/http/redirect.hpp"
#include "stepback/https/http/response_parser.hpp"
#include "stepback/https/http/url.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// Gives a fresh URL for an expired pre-signed one: writes it as text into `out` and returns
// its length; 0 when there is none (the request then ends with the expiry answer). Called
// from step(); it must not block (an app that fetches URLs has one ready, or ends here).
struct UrlRefresh {
  std::size_t (*fresh_url)(void* context, MutableBytes out) = nullptr;
  void* context = nullptr;
};

class FollowUp {
 public:
  // Where the request goes next, or why it does not.
  struct Target {
    enum class Kind : std::uint8_t {
      kGo,      // To `url` (its text, `text`, kept in the caller's URL buffer).
      kRefuse,  // The request ends: `status`, `message`.
      kNone,    // Nothing to follow: the response is final as it is.
    };
    Kind kind = Kind::kNone;
    Url url;
    std::string_view text;
    RedirectStep step;  // A redirect's: the next method, the body, the origin.
    Status status = Status::kOk;
    const char* message = "";
  };

  // A new request to `url`: no redirect followed, none refreshed, no token asked for.
  void reset(const Url& url);
  // The next piece of a body at `url` (where the last one ended): a chain of its own; the
  // URL refreshes and a known expiry stay.
  void restart(const Url& url);

  // Whether the response is a redirect that is followed (max_redirects > 0).
  static bool is_redirect(const ResponseParser& response, std::uint8_t max_redirects);
  // Follows the redirect `response` is for a `method` request to `from`: resolves Location
  // (in `scratch`), checks the limit, the scheme and loops, keeps the URL's text in
  // `url_buffer`; a host longer than `host_max` - 1 bytes is refused.
  Target redirect(const ResponseParser& response, std::string_view method, const Url& from,
                  std::uint8_t max_redirects, MutableBytes scratch, MutableBytes url_buffer,
                  std::size_t host_max);

  // Whether a response of `status` may be a pre-signed URL's expiry answer that `refresh`
  // could answer (a GET's 400 or 403).
  static bool may_be_expired(const UrlRefresh& refresh, bool get, std::uint16_t status);
  // Whether it is one: may_be_expired(), and its captured body (`captured`: the body was
  // kept) is a pre-signed URL's expiry answer.
  static bool expired(const UrlRefresh& refresh, bool get, std::uint16_t status, bool captured,
                      ConstBytes body);
  // Asks `refresh` (at most `max` times per request) for a fresh URL for `from`, written into
  // `scratch` and kept in `url_buffer`. kNone: there is none, and the expiry answer is final.
  Target refresh(const UrlRefresh& refresh, std::uint8_t max, const Url& from, MutableBytes scratch,
                 MutableBytes url_buffer, std::size_t host_max);

  // Ends the redirect `response` is with `why`, naming its status and Location.
  Target refuse_redirect(const char* why, const ResponseParser& response);

  // Whether `response` rejects an expired token (401 with error="invalid_token") that a
  // fresh one may answer: once per attempt that did not already carry a fresh one.
  bool token_rejected(const ResponseParser& response, bool credentials) const;
  // The next attempt asks the app for a fresh token.
  void want_fresh_token() { refresh_token_ = true; }
  // For the attempt about to go: whether it asks for a fresh token (then cleared).
  bool take_fresh_token();

  std::uint32_t redirects() const { return redirects_; }
  std::uint32_t url_refreshes() const { return url_refreshes_; }
  bool url_expired() const { return url_expired_; }
  std::size_t url_size() const { return url_size_; }  // Of the URL text in url_buffer.

 private:
  static Target refuse(Status status, const char* message);

  // CRC-32C of every URL of the redirect chain, to see a loop (at most 255 + 1 of them).
  std::uint32_t visited_[16] = {};
  std::uint32_t redirects_ = 0;
  std::uint32_t url_refreshes_ = 0;
  std::size_t url_size_ = 0;
  bool url_expired_ = false;
  bool refresh_token_ = false;    // The next attempt asks the app for a fresh token.
  bool token_refreshed_ = false;  // The last attempt already carried a refreshed token.
  char message_[256] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_CLIENT_FOLLOW_UP_HPP_

#include "stepback/https/client/follow_up.hpp"

#include <cstdio>
#include <cstring>

#include "http/http1_text.hpp"
#include "stepback/https/detail/text.hpp"
#include "stepback/https/http/url_expiry.hpp"
#include "stepback/https/integrity/crc32c.hpp"

namespace stepback::https {
namespace {

// A short fingerprint of `url` (scheme, host in lower case, port, target) to see a redirect
// loop by; a collision could only end a chain early, as a loop.
std::uint32_t url_id(const Url& url) {
  std::uint32_t crc = url.tls ? 1U : 0U;
  for (const char c : url.host) {
    const auto lower = static_cast<std::uint8_t>(detail::to_lower(c));
    crc = crc32c_extend(crc, ConstBytes{&lower, 1});
  }
  const std::uint8_t port[2] = {static_cast<std::uint8_t>(url.port >> 8),
                                static_cast<std::uint8_t>(url.port)};
  crc = crc32c_extend(crc, ConstBytes{port, 2});
  return crc32c_extend(
      crc, ConstBytes{reinterpret_cast<const std::uint8_t*>(url.target.data()), url.target.size()});
}

std::string_view location_of(const ResponseParser& response) {
  return http1_text::trim_ows(response.header("location").value_or(std::string_view{}));
}

int shown(std::string_view s) { return static_cast<int>(s.size() < 160 ? s.size() : 160); }

}  // namespace

void FollowUp::reset(const Url& url) {
  redirects_ = url_refreshes_ = 0;
  url_size_ = 0;
  url_expired_ = refresh_token_ = token_refreshed_ = false;
  visited_[0] = url_id(url);
}

void FollowUp::restart(const Url& url) {
  redirects_ = 0;
  refresh_token_ = token_refreshed_ = false;
  visited_[0] = url_id(url);
}

bool FollowUp::is_redirect(const ResponseParser& response, std::uint8_t max_redirects) {
  if (max_redirects == 0) return false;
  const std::uint16_t s = response.status();
  return (s == 301 || s == 302 || s == 303 || s == 307 || s == 308) &&
         response.header("location").has_value();
}

FollowUp::Target FollowUp::refuse(Status status, const char* message) {
  Target t;
  t.kind = Target::Kind::kRefuse;
  t.status = status;
  t.message = message;
  return t;
}

FollowUp::Target FollowUp::refuse_redirect(const char* why, const ResponseParser& response) {
  const std::string_view location = location_of(response);
  (void)std::snprintf(message_, sizeof message_, "%s (%u to '%.*s')", why,
                      static_cast<unsigned>(response.status()), shown(location), location.data());
  return refuse(Status::kRedirect, message_);
}

FollowUp::Target FollowUp::redirect(const ResponseParser& response, std::string_view method,
                                    const Url& from, std::uint8_t max_redirects,
                                    MutableBytes scratch, MutableBytes url_buffer,
                                    std::size_t host_max) {
  const std::uint16_t status = response.status();
  const std::string_view location = location_of(response);
  if (redirects_ >= max_redirects) {
    (void)std::snprintf(message_, sizeof message_,
                        "more than %u redirects (the last: %u to '%.*s')",
                        static_cast<unsigned>(max_redirects), static_cast<unsigned>(status),
                        shown(location), location.data());
    return refuse(Status::kRedirect, message_);
  }
  // Resolved into the scratch (the base may view into url_buffer), then kept in url_buffer.
  Target t;
  std::size_t size = 0;
  const Status resolved = resolve_location(from, location, scratch, &t.url, &size);
  if (resolved == Status::kBufferTooSmall || size > url_buffer.size) {
    return refuse_redirect(
        "the redirect's URL does not fit the redirect-URL buffer (ClientOptions::redirect_url)",
        response);
  }
  if (resolved != Status::kOk) {
    return refuse_redirect("the redirect's Location is not an http(s) URL", response);
  }
  t.step = decide_redirect(method, status, from, t.url);
  if (t.step.verdict == RedirectStep::Verdict::kInsecure) {
    return refuse_redirect("refused a redirect from https to http", response);
  }
  const std::uint32_t id = url_id(t.url);
  const std::size_t seen = redirects_ + 1 < 16 ? redirects_ + 1 : 16;
  for (std::size_t i = 0; i < seen; ++i) {
    if (visited_[i] == id) {
      return refuse_redirect("the redirects loop back to a URL already visited", response);
    }
  }
  if (redirects_ + 1 < 16) visited_[redirects_ + 1] = id;
  ++redirects_;
  std::memcpy(url_buffer.data, scratch.data, size);
  url_size_ = size;
  t.text = std::string_view(reinterpret_cast<const char*>(url_buffer.data), size);
  (void)parse_url(t.text, &t.url);  // The same text resolve_location() parsed.
  if (t.url.host.size() >= host_max) {
    return refuse_redirect("the redirect's host name is too long", response);
  }
  t.kind = Target::Kind::kGo;
  return t;
}

bool FollowUp::may_be_expired(const UrlRefresh& refresh, bool get, std::uint16_t status) {
  return refresh.fresh_url != nullptr && get && (status == 400 || status == 403);
}

bool FollowUp::expired(const UrlRefresh& refresh, bool get, std::uint16_t status, bool captured,
                       ConstBytes body) {
  return may_be_expired(refresh, get, status) && captured &&
         presigned_url_expired(
             status, std::string_view(reinterpret_cast<const char*>(body.data), body.size));
}

FollowUp::Target FollowUp::refresh(const UrlRefresh& refresh, std::uint8_t max, const Url& from,
                                   MutableBytes scratch, MutableBytes url_buffer,
                                   std::size_t host_max) {
  // Without a fresh URL (none left, or none given) the expiry answer is the final response.
  url_expired_ = true;  // Until a fresh URL goes out.
  if (url_refreshes_ >= max) return Target{};
  // Written into the scratch (the URL in use may view into url_buffer), then kept there.
  const std::size_t size = refresh.fresh_url(refresh.context, scratch);
  if (size == 0 || size > scratch.size) return Target{};
  if (size > url_buffer.size) {
    return refuse(
        Status::kBufferTooSmall,
        "the fresh URL does not fit the redirect-URL buffer (ClientOptions::redirect_url)");
  }
  Target t;
  if (parse_url(std::string_view(reinterpret_cast<const char*>(scratch.data), size), &t.url) !=
      Status::kOk) {
    return refuse(Status::kInvalidArgument,
                  "the fresh URL for the expired one is not an http(s) URL");
  }
  if (from.tls && !t.url.tls) {
    return refuse(Status::kInvalidArgument, "refused a fresh URL from https to http");
  }
  if (t.url.host.size() >= host_max) {
    return refuse(Status::kInvalidArgument, "the fresh URL's host name is too long");
  }
  t.step.same_origin = same_origin(from, t.url);
  std::memcpy(url_buffer.data, scratch.data, size);
  url_size_ = size;
  t.text = std::string_view(reinterpret_cast<const char*>(url_buffer.data), size);
  (void)parse_url(t.text, &t.url);  // The same text, now where it stays.
  ++url_refreshes_;
  url_expired_ = false;
  t.kind = Target::Kind::kGo;
  return t;
}

bool FollowUp::token_rejected(const ResponseParser& response, bool credentials) const {
  if (!credentials || token_refreshed_ || response.status() != 401) return false;
  const std::optional<std::string_view> challenge = response.header("www-authenticate");
  return challenge && challenge->find("invalid_token") != std::string_view::npos;
}

bool FollowUp::take_fresh_token() {
  token_refreshed_ = refresh_token_;
  refresh_token_ = false;
  return token_refreshed_;
}

}  // namespace stepback::https

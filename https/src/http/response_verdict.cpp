#include "stepback/https/http/response_verdict.hpp"

#include <string_view>

#include "stepback/https/http/http_date.hpp"
#include "stepback/https/http/retry_info.hpp"

namespace stepback::https {

AttemptResult response_verdict(const ResponseParser& response, ConstBytes error_body,
                               Millis wall_now, bool strict) {
  const std::uint16_t status = response.status();
  AttemptResult r = AttemptResult::http(status);
  if (const auto retry_after = response.retry_after()) {
    // Against the response's own Date when it has one: the device's clock may be wrong.
    if (const auto delay = parse_retry_after(*retry_after, response.header("date"), wall_now)) {
      r = AttemptResult::http(status, *delay, DelaySource::kRetryAfter);
    }
  }
  if (r.delay_source == DelaySource::kNone && error_body.size > 0) {
    const std::string_view type = response.content_type().value_or(std::string_view{});
    const ConstBytes type_bytes{reinterpret_cast<const std::uint8_t*>(type.data()), type.size()};
    if (const auto delay = retry_delay_from_error_body(type_bytes, error_body)) {
      r = AttemptResult::http(status, *delay, DelaySource::kRetryInfo);
    }
  }
  if (strict) r.may_have_been_processed = true;
  return r;
}

}  // namespace stepback::https

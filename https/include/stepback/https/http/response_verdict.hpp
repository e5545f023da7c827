// What a complete response tells the retry machine: its status, the delay the server asked
// for (Retry-After, read against the response's own Date, or the RetryInfo of its error
// body), and whether the request may have been processed. A pure function of the response.
#ifndef STEPBACK_HTTPS_HTTP_RESPONSE_VERDICT_HPP_
#define STEPBACK_HTTPS_HTTP_RESPONSE_VERDICT_HPP_

#include "stepback/core/millis.hpp"
#include "stepback/core/attempt.hpp"
#include "stepback/https/http/response_parser.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// The AttemptResult of `response` (its head complete): AttemptResult::http(status) with the
// delay of a Retry-After it holds (DelaySource::kRetryAfter; an HTTP-date against its Date
// field, else `wall_now`), or else of the RetryInfo in `error_body` (the captured body, read
// in the format its Content-Type names; DelaySource::kRetryInfo). Under `strict` rules a 429
// or 503 does not prove the request was left alone: may_have_been_processed is set.
AttemptResult response_verdict(const ResponseParser& response, ConstBytes error_body,
                               Millis wall_now, bool strict);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_RESPONSE_VERDICT_HPP_

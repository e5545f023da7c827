// The bridge from the HTTPS layer's Status to the core's Failure, which the retry machine
// classifies.
#ifndef STEPBACK_HTTPS_FAILURE_HPP_
#define STEPBACK_HTTPS_FAILURE_HPP_

#include "stepback/core/attempt.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// The Failure an attempt that ended with `s` reports: kNone for kOk and kWouldBlock (not a
// failure); kClosed counts as kReset (the peer went away before a full response);
// kHeadersTooLarge, kBodyTooLarge and kBufferTooSmall as kTooLarge; kError and
// kInvalidArgument as kProtocol, so that what no retry can fix is terminal.
Failure to_failure(Status s);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_FAILURE_HPP_

// C policies to and from core's Policy, shared by both C API libraries.
#ifndef STEPBACK_CAPI_SRC_POLICY_HPP_
#define STEPBACK_CAPI_SRC_POLICY_HPP_

#include "stepback/core/policy.hpp"
#include "stepback/stepback.h"

namespace stepback::capi {

// `p` as a C policy. Its retryable set is written as the default set (the C struct cannot
// say "without 5xx"): profiles and defaults all use it.
void policy_to_c(const Policy& p, stepback_policy* out);
// `c` as a Policy in *out; false (and *out as it was) when it is not valid().
bool policy_from_c(const stepback_policy& c, Policy* out);

}  // namespace stepback::capi

#endif  // STEPBACK_CAPI_SRC_POLICY_HPP_

#include "stepback/https/client/early_data.hpp"

#include <string_view>

namespace stepback::https {

bool EarlyDataStage::may_ride(const Request& request) const {
  if (refused_ || request.spec().body.size > 0 || !request.idempotent()) return false;
  const std::string_view method = request.head().method;
  return method == "GET" || method == "HEAD" ||
         request.spec().idempotency == RequestSpec::Idempotency::kYes;
}

}  // namespace stepback::https

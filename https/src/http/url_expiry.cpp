#include "stepback/https/http/url_expiry.hpp"

namespace stepback::https {

bool presigned_url_expired(std::uint16_t status, std::string_view body) {
  if (status != 400 && status != 403) return false;
  return body.find("<Code>ExpiredToken</Code>") != std::string_view::npos ||
         body.find("Request has expired") != std::string_view::npos;
}

}  // namespace stepback::https

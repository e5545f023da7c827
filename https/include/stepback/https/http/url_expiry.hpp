// Whether an error response says that a pre-signed URL has expired: the answer Cloud Storage
// gives a V4 signed URL past its X-Goog-Expires (400 with the XML error code ExpiredToken, or
// 403 "Request has expired") and S3 a pre-signed URL past X-Amz-Expires (403 AccessDenied,
// "Request has expired"). Pure; nothing allocated.
#ifndef STEPBACK_HTTPS_HTTP_URL_EXPIRY_HPP_
#define STEPBACK_HTTPS_HTTP_URL_EXPIRY_HPP_

#include <cstdint>
#include <string_view>

namespace stepback::https {

// True for a 400 or 403 whose body holds "<Code>ExpiredToken</Code>" or "Request has
// expired" (the providers' words, case as they write them); false for any other status or
// body, a 401 or a 403 for other reasons (a bad signature, no permission) included.
bool presigned_url_expired(std::uint16_t status, std::string_view body);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_URL_EXPIRY_HPP_

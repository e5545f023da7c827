// presigned_url_expired(): the providers' documented expiry answers are recognised, and
// nothing else is (other 403s, other statuses, a body that only mentions expiry in passing).
#include "stepback/https/http/url_expiry.hpp"

#include <gtest/gtest.h>

namespace stepback::https {
namespace {

// Cloud Storage, a V4 signed URL past its expiry (XML API).
constexpr const char* kGcsExpired =
    "<?xml version='1.0' encoding='UTF-8'?><Error><Code>ExpiredToken</Code>"
    "<Message>Invalid argument.</Message><Details>The provided token has expired. Request "
    "signature expired at: 2026-11-27T10:00:00+00:00</Details></Error>";
constexpr const char* kGcs403 =
    "<?xml version='1.0' encoding='UTF-8'?><Error><Code>AccessDenied</Code><Message>Access "
    "denied.</Message><Details>Request has expired: 1700000000</Details></Error>";
// S3, a pre-signed URL past X-Amz-Expires.
constexpr const char* kS3Expired =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code>"
    "<Message>Request has expired</Message><X-Amz-Expires>60</X-Amz-Expires>"
    "<Expires>2026-11-27T10:00:00Z</Expires><ServerTime>2026-11-27T10:05:00Z</ServerTime>"
    "<RequestId>1</RequestId><HostId>h</HostId></Error>";

TEST(PresignedUrlExpired, TheProvidersAnswersAreRecognised) {
  EXPECT_TRUE(presigned_url_expired(400, kGcsExpired));
  EXPECT_TRUE(presigned_url_expired(403, kGcs403));
  EXPECT_TRUE(presigned_url_expired(403, kS3Expired));
}

TEST(PresignedUrlExpired, OtherRefusalsAreNot) {
  // A bad signature, no permission: a fresh URL would not help (or is not the app's to give).
  EXPECT_FALSE(presigned_url_expired(
      403,
      "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we "
      "calculated does not match</Message></Error>"));
  EXPECT_FALSE(presigned_url_expired(
      403, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"));
  EXPECT_FALSE(presigned_url_expired(400, "<Error><Code>InvalidArgument</Code></Error>"));
  EXPECT_FALSE(presigned_url_expired(403, ""));
}

TEST(PresignedUrlExpired, OnlyA400OrA403) {
  EXPECT_FALSE(presigned_url_expired(401, kS3Expired));
  EXPECT_FALSE(presigned_url_expired(404, kGcsExpired));
  EXPECT_FALSE(presigned_url_expired(200, kS3Expired));
  EXPECT_FALSE(presigned_url_expired(500, kGcsExpired));
  // The code must be the element, not a word in a message.
  EXPECT_FALSE(presigned_url_expired(400, "<Message>ExpiredToken is not the code</Message>"));
}

}  // namespace
}  // namespace stepback::https

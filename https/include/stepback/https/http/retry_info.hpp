// Server retry directions carried in an error body: google.rpc.RetryInfo inside a
// google.rpc.Status, in its protobuf form (decoded with nanopb) or its JSON form (a small
// validating tokenizer). Nothing here allocates, throws or recurses without bound; every
// function reads only the caller's bytes and returns nullopt for anything it cannot trust.
//
// Where the detail may sit: in protobuf, any element of Status.details; in JSON, any object
// anywhere in the document that has an "@type" naming RetryInfo and a "retryDelay" string
// (usually error.details[i], but a top-level "details" array or a wrapping array, as some
// endpoints send, works too). When several qualify, the first to end in the body wins.
//
// Which type URLs count: any whose last path segment is "google.rpc.RetryInfo"
// ("type.googleapis.com/google.rpc.RetryInfo" in practice), as protobuf's Any::Is() does.
//
// Stack: bounded by the schema and the limits, never by the body. The protobuf reader's depth
// is fixed (Status, Any callback, RetryInfo, Duration), its own state mostly a
// kMaxRetryInfoBytes buffer; the JSON reader keeps the state of kJsonMaxDepth levels in one
// frame. Measured figures: docs/performance.md.
#ifndef STEPBACK_HTTPS_HTTP_RETRY_INFO_HPP_
#define STEPBACK_HTTPS_HTTP_RETRY_INFO_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "stepback/core/millis.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// The largest |seconds| a google.protobuf.Duration may hold (about 10,000 years).
inline constexpr std::int64_t kMaxDurationSeconds = 315'576'000'000;

// Deepest nesting of JSON arrays and objects the JSON reader accepts; deeper is malformed.
inline constexpr std::size_t kJsonMaxDepth = 32;

// Largest serialized RetryInfo the protobuf reader keeps; a real one is at most 24 bytes.
inline constexpr std::size_t kMaxRetryInfoBytes = 64;

// The wait a google.protobuf.Duration asks for, rounded up to whole milliseconds (1 ns is
// 1 ms); nullopt when negative, when nanos is outside [0, 999999999] or when seconds
// exceeds kMaxDurationSeconds. In-range values never overflow Millis.
[[nodiscard]] std::optional<Millis> millis_from_duration(std::int64_t seconds, std::int32_t nanos);

// Parses the JSON form of a Duration: decimal seconds with at most 9 fractional digits and
// an "s" suffix ("30s", "1.5s", "0.000001s"), rounded up to whole milliseconds; nullopt
// when malformed, negative (any "-") or beyond kMaxDurationSeconds.
[[nodiscard]] std::optional<Millis> parse_duration_string(ConstBytes text);

// The RetryInfo.retry_delay in a serialized google.rpc.Status (Content-Type
// application/x-protobuf); nullopt when the body does not decode in full, has no RetryInfo
// detail with a valid delay, or its RetryInfo is larger than kMaxRetryInfoBytes.
[[nodiscard]] std::optional<Millis> retry_delay_from_status_proto(ConstBytes body);

// The "retryDelay" of the first RetryInfo object in a JSON error body (see the file
// comment for where it may sit); nullopt when the body is not valid JSON (RFC 8259, nesting
// at most kJsonMaxDepth, an optional UTF-8 byte order mark) or has no valid RetryInfo.
// Escapes, \uXXXX included, are decoded before keys and values are compared; byte
// sequences of 0x80 and above are not checked for valid UTF-8.
[[nodiscard]] std::optional<Millis> retry_delay_from_status_json(ConstBytes body);

// Whether an Any type URL names google.rpc.RetryInfo: its last path segment is exactly
// "google.rpc.RetryInfo" (so "type.googleapis.com/google.rpc.RetryInfo" matches).
[[nodiscard]] bool is_retry_info_type_url(ConstBytes type_url);
// How many of a type URL's last bytes is_retry_info_type_url needs to see: the length of
// "/google.rpc.RetryInfo". The streaming readers keep only that tail of a long URL.
inline constexpr std::size_t kRetryInfoTypeUrlTail = 21;

// The encoding of an error body, as its Content-Type names it.
enum class ErrorBodyFormat : std::uint8_t {
  kUnknown,   // Anything else: no retry direction is read from the body.
  kProtobuf,  // application/x-protobuf or application/protobuf.
  kJson,      // application/json.
};

// The format a Content-Type field value names, case-insensitively, parameters ignored.
[[nodiscard]] ErrorBodyFormat error_body_format(ConstBytes content_type);

// The server's RetryInfo delay in an error body, read in the format its Content-Type names;
// nullopt for other formats and wherever the readers above return nullopt.
[[nodiscard]] std::optional<Millis> retry_delay_from_error_body(ConstBytes content_type,
                                                                ConstBytes body);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_RETRY_INFO_HPP_

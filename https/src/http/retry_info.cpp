// Duration conversion and parsing, type URL matching and Content-Type dispatch for the
// RetryInfo readers (retry_info_proto.cpp, retry_info_json.cpp).
#include "stepback/https/http/retry_info.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/https/detail/text.hpp"

namespace stepback::https {
namespace {

constexpr std::int32_t kMaxNanos = 999'999'999;
constexpr std::int32_t kNanosPerMilli = 1'000'000;

constexpr char kRetryInfoSuffix[] = "/google.rpc.RetryInfo";
constexpr std::size_t kRetryInfoSuffixSize = sizeof kRetryInfoSuffix - 1;

bool is_digit(std::uint8_t c) { return c >= '0' && c <= '9'; }

// Whether bytes [begin, end) of `s` equal `lower` (lower-case ASCII) case-insensitively.
bool equals_ignoring_case(ConstBytes s, std::size_t begin, std::size_t end, const char* lower) {
  return detail::iequals(
      std::string_view(reinterpret_cast<const char*>(s.data) + begin, end - begin), lower);
}

}  // namespace

std::optional<Millis> millis_from_duration(std::int64_t seconds, std::int32_t nanos) {
  if (seconds < 0 || nanos < 0 || nanos > kMaxNanos || seconds > kMaxDurationSeconds) {
    return std::nullopt;
  }
  const auto whole = Millis::seconds(static_cast<std::uint64_t>(seconds));
  const auto part =
      Millis(static_cast<std::uint64_t>((nanos + kNanosPerMilli - 1) / kNanosPerMilli));
  return whole + part;
}

std::optional<Millis> parse_duration_string(ConstBytes text) {
  if (text.data == nullptr || text.size == 0) return std::nullopt;
  const std::uint8_t* p = text.data;
  const std::uint8_t* const end = text.data + text.size;
  if (!is_digit(*p)) return std::nullopt;

  std::int64_t seconds = 0;
  for (; p != end && is_digit(*p); ++p) {
    seconds = seconds * 10 + (*p - '0');
    // Stopping here keeps the accumulator far from overflow on any number of digits.
    if (seconds > kMaxDurationSeconds) return std::nullopt;
  }
  std::int32_t nanos = 0;
  if (p != end && *p == '.') {
    ++p;
    int digits = 0;
    for (; p != end && is_digit(*p); ++p) {
      if (++digits > 9) return std::nullopt;
      nanos = nanos * 10 + (*p - '0');
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 9; ++digits) nanos *= 10;
  }
  if (p == end || *p != 's' || p + 1 != end) return std::nullopt;
  return millis_from_duration(seconds, nanos);
}

bool is_retry_info_type_url(ConstBytes type_url) {
  if (type_url.data == nullptr || type_url.size < kRetryInfoSuffixSize) return false;
  const std::uint8_t* tail = type_url.data + (type_url.size - kRetryInfoSuffixSize);
  for (std::size_t i = 0; i < kRetryInfoSuffixSize; ++i) {
    if (tail[i] != static_cast<std::uint8_t>(kRetryInfoSuffix[i])) return false;
  }
  return true;
}

ErrorBodyFormat error_body_format(ConstBytes content_type) {
  if (content_type.data == nullptr) return ErrorBodyFormat::kUnknown;
  // media-type = type "/" subtype *( OWS ";" OWS parameter )   (RFC 9110 8.3.1)
  std::size_t begin = 0;
  while (begin < content_type.size &&
         (content_type.data[begin] == ' ' || content_type.data[begin] == '\t')) {
    ++begin;
  }
  std::size_t end = begin;
  while (end < content_type.size && content_type.data[end] != ';' &&
         content_type.data[end] != ' ' && content_type.data[end] != '\t') {
    ++end;
  }
  if (equals_ignoring_case(content_type, begin, end, "application/x-protobuf") ||
      equals_ignoring_case(content_type, begin, end, "application/protobuf")) {
    return ErrorBodyFormat::kProtobuf;
  }
  if (equals_ignoring_case(content_type, begin, end, "application/json")) {
    return ErrorBodyFormat::kJson;
  }
  return ErrorBodyFormat::kUnknown;
}

std::optional<Millis> retry_delay_from_error_body(ConstBytes content_type, ConstBytes body) {
  switch (error_body_format(content_type)) {
    case ErrorBodyFormat::kProtobuf:
      return retry_delay_from_status_proto(body);
    case ErrorBodyFormat::kJson:
      return retry_delay_from_status_json(body);
    case ErrorBodyFormat::kUnknown:
      break;
  }
  return std::nullopt;
}

}  // namespace stepback::https

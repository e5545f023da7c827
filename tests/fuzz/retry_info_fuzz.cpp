// libFuzzer target for the RetryInfo readers (https/src/retry_info*.cpp). The input is
// given as it is to both readers, under both content types, and to parse_duration_string();
// it is also put where each reader looks for a delay, inside a well-formed body built here.
// The target aborts unless:
//   - every delay returned is at most the documented cap, kMaxDurationSeconds s + 999999999
//     ns rounded up to whole milliseconds (never negative: Millis is unsigned, and a
//     negative Duration is refused);
//   - retry_delay_from_error_body() answers what the reader its Content-Type names answers
//     (application/x-protobuf, application/protobuf, application/json with parameters and
//     any letter case), and nullopt for other types;
//   - parse_duration_string() agrees with a reference written here apart (decimal seconds
//     up to kMaxDurationSeconds, at most 9 fractional digits, "s", rounded up to ms);
//   - the input as the "retryDelay" string of a RetryInfo inside a google.rpc.Status JSON
//     body (its bytes escaped where JSON needs it, or all of them as \u00XX) reads as
//     parse_duration_string() reads it (when it fits the reader's 32 characters);
//   - a protobuf Status whose RetryInfo carries seconds and nanos from the input's first 12
//     bytes (as they are, and brought into range) reads as millis_from_duration() and the
//     reference compute them; with the input itself as the RetryInfo's bytes, any answer
//     is within the cap.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepback/core/millis.hpp"
#include "stepback/https/http/retry_info.hpp"

namespace {

using stepback::Millis;
using stepback::https::ConstBytes;
using stepback::https::kMaxDurationSeconds;

// The longest wait a Duration can ask for.
constexpr std::uint64_t kCapMillis = static_cast<std::uint64_t>(kMaxDurationSeconds) * 1000 + 1000;
constexpr std::size_t kJsonDelayText = 32;  // The JSON reader keeps this many characters.

void require(bool condition) {
  if (!condition) std::abort();
}

void require_capped(const std::optional<Millis>& delay) {
  if (delay) require(delay->count() <= kCapMillis);
}

ConstBytes bytes_of(std::string_view s) {
  return ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

ConstBytes bytes_of(const std::vector<std::uint8_t>& v) { return ConstBytes{v.data(), v.size()}; }

std::optional<Millis> reference_millis(std::int64_t seconds, std::int32_t nanos) {
  if (seconds < 0 || seconds > kMaxDurationSeconds || nanos < 0 || nanos > 999'999'999) {
    return std::nullopt;
  }
  return Millis(static_cast<std::uint64_t>(seconds) * 1000 +
                (static_cast<std::uint64_t>(nanos) + 999'999) / 1'000'000);
}

// "<seconds>[.<1-9 digits>]s", seconds at most kMaxDurationSeconds (leading zeros allowed).
std::optional<Millis> reference_duration(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  std::string_view whole = s.substr(0, i);
  if (whole.empty()) return std::nullopt;
  while (whole.size() > 1 && whole.front() == '0') whole.remove_prefix(1);
  const std::string_view max = "315576000000";
  if (whole.size() > max.size() || (whole.size() == max.size() && whole > max)) {
    return std::nullopt;
  }
  std::int64_t seconds = 0;
  for (const char c : whole) seconds = seconds * 10 + (c - '0');
  std::int32_t nanos = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::size_t digits = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++digits) {
      if (digits == 9) return std::nullopt;
      nanos = nanos * 10 + (s[i] - '0');
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 9; ++digits) nanos *= 10;
  }
  if (s.substr(i) != "s") return std::nullopt;
  return reference_millis(seconds, nanos);
}

// ---- Protobuf, written by hand --------------------------------------------------------

void put_varint(std::vector<std::uint8_t>* out, std::uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<std::uint8_t>(v));
}

void put_length_delimited(std::vector<std::uint8_t>* out, std::uint32_t field, ConstBytes bytes) {
  put_varint(out, field << 3 | 2);
  put_varint(out, bytes.size);
  out->insert(out->end(), bytes.data, bytes.data + bytes.size);
}

// A google.rpc.Status (code 14, a message) whose one detail is an Any holding `retry_info`.
std::vector<std::uint8_t> status_with(ConstBytes retry_info) {
  std::vector<std::uint8_t> any;
  put_length_delimited(&any, 1, bytes_of("type.googleapis.com/google.rpc.RetryInfo"));
  put_length_delimited(&any, 2, retry_info);
  std::vector<std::uint8_t> status;
  put_varint(&status, 1 << 3);
  put_varint(&status, 14);
  put_length_delimited(&status, 2, bytes_of("The service is currently unavailable."));
  put_length_delimited(&status, 3, bytes_of(any));
  return status;
}

// A RetryInfo whose retry_delay is {seconds, nanos} (negative values as protobuf sends them,
// sign-extended to ten bytes).
std::vector<std::uint8_t> retry_info_with(std::int64_t seconds, std::int32_t nanos) {
  std::vector<std::uint8_t> duration;
  put_varint(&duration, 1 << 3);
  put_varint(&duration, static_cast<std::uint64_t>(seconds));
  put_varint(&duration, 2 << 3);
  put_varint(&duration, static_cast<std::uint64_t>(static_cast<std::int64_t>(nanos)));
  std::vector<std::uint8_t> info;
  put_length_delimited(&info, 1, bytes_of(duration));
  return info;
}

void check_proto_delay(std::int64_t seconds, std::int32_t nanos) {
  const std::optional<Millis> expected = reference_millis(seconds, nanos);
  require(stepback::https::millis_from_duration(seconds, nanos) == expected);
  const std::vector<std::uint8_t> body = status_with(bytes_of(retry_info_with(seconds, nanos)));
  require(stepback::https::retry_delay_from_status_proto(bytes_of(body)) == expected);
}

// ---- JSON, written by hand --------------------------------------------------------------

std::string json_body_with_delay(std::string_view delay, bool escape_all) {
  static const char kHex[] = "0123456789abcdef";
  std::string body =
      R"({"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED",)"
      R"("details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":")";
  body.reserve(body.size() + 6 * delay.size() + 8);
  for (const char c : delay) {
    const auto u = static_cast<unsigned char>(c);
    if ((escape_all && u < 0x80) || u < 0x20 || c == '"' || c == '\\') {
      body += "\\u00";
      body += kHex[u >> 4];
      body += kHex[u & 15];
    } else {
      body += c;
    }
  }
  body += R"("}]}})";
  return body;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ConstBytes input{data, size};
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // The same bytes as both kinds of body, directly and through the Content-Type dispatch.
  const std::optional<Millis> proto = stepback::https::retry_delay_from_status_proto(input);
  const std::optional<Millis> json = stepback::https::retry_delay_from_status_json(input);
  require_capped(proto);
  require_capped(json);
  using stepback::https::retry_delay_from_error_body;
  require(retry_delay_from_error_body(bytes_of("application/x-protobuf"), input) == proto);
  require(retry_delay_from_error_body(bytes_of(" Application/Protobuf ; q=1"), input) == proto);
  require(retry_delay_from_error_body(bytes_of("application/json; charset=UTF-8"), input) == json);
  require(retry_delay_from_error_body(bytes_of("APPLICATION/JSON"), input) == json);
  require(!retry_delay_from_error_body(bytes_of("text/html; charset=UTF-8"), input));
  require(!retry_delay_from_error_body(bytes_of("application/jsonp"), input));
  require(!retry_delay_from_error_body(ConstBytes{nullptr, 0}, input));

  // The bytes as a Duration string, bare and inside a JSON RetryInfo.
  const std::optional<Millis> duration = stepback::https::parse_duration_string(input);
  require_capped(duration);
  require(duration == reference_duration(text));
  for (const bool escape_all : {false, true}) {
    const std::string body = json_body_with_delay(text, escape_all);
    const std::optional<Millis> in_json =
        stepback::https::retry_delay_from_status_json(bytes_of(body));
    require(size <= kJsonDelayText ? in_json == duration : !in_json);
  }

  // The bytes as a RetryInfo's, and their first 12 as its Duration's fields.
  require_capped(stepback::https::retry_delay_from_status_proto(bytes_of(status_with(input))));
  std::uint8_t fields[12] = {};
  if (size > 0) std::memcpy(fields, data, size < sizeof fields ? size : sizeof fields);
  std::uint64_t raw_seconds = 0;
  std::uint32_t raw_nanos = 0;
  for (std::size_t i = 0; i < 8; ++i) raw_seconds |= std::uint64_t{fields[i]} << (8 * i);
  for (std::size_t i = 0; i < 4; ++i) raw_nanos |= std::uint32_t{fields[8 + i]} << (8 * i);
  const auto seconds = static_cast<std::int64_t>(raw_seconds);
  const auto nanos = static_cast<std::int32_t>(raw_nanos);
  check_proto_delay(seconds, nanos);
  check_proto_delay(
      static_cast<std::int64_t>(raw_seconds % static_cast<std::uint64_t>(kMaxDurationSeconds + 2)),
      static_cast<std::int32_t>(raw_nanos % 1'000'000'001u));
  return 0;
}

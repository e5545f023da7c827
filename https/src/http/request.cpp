// The request rules: which requests may be sent again (is_idempotent), and BodySource::of.
#include <cstring>

#include "http/http1_text.hpp"
#include "http/query.hpp"
#include "stepback/https/http/request.hpp"

namespace stepback::https {
namespace {

bool has_precondition(const RequestHead& head) {
  static constexpr std::string_view kHeaders[] = {
      "if-match", "if-none-match", "if-unmodified-since", "x-goog-if-generation-match",
      "x-goog-if-metageneration-match"};
  for (std::size_t i = 0; i < head.header_count; ++i) {
    for (const std::string_view h : kHeaders) {
      if (http1_text::iequals(head.headers[i].name, h)) return true;
    }
  }
  return detail::has_query_parameter(head.url.target, "ifGenerationMatch") ||
         detail::has_query_parameter(head.url.target, "ifMetagenerationMatch") ||
         detail::has_query_parameter(head.url.target, "ifSourceGenerationMatch");
}

bool is_safe_method(std::string_view m) {
  return m == "GET" || m == "HEAD" || m == "OPTIONS" || m == "TRACE";
}

}  // namespace

BodySource BodySource::of(const ConstBytes* bytes) {
  BodySource s;
  s.read = [](void* source, std::uint64_t offset, MutableBytes out) -> std::size_t {
    const auto* b = static_cast<const ConstBytes*>(source);
    if (offset >= b->size) return 0;
    const std::uint64_t left = b->size - offset;
    const std::size_t n = left < out.size ? static_cast<std::size_t>(left) : out.size;
    std::memcpy(out.data, b->data + offset, n);
    return n;
  };
  s.context = const_cast<ConstBytes*>(bytes);
  s.size = bytes->size;
  return s;
}

bool is_idempotent(const RequestSpec& spec) {
  switch (spec.idempotency) {
    case RequestSpec::Idempotency::kByMethod:
      return is_idempotent_method(spec.head.method);
    case RequestSpec::Idempotency::kStrict:
      return is_safe_method(spec.head.method) || has_precondition(spec.head);
    case RequestSpec::Idempotency::kYes:
      return true;
    case RequestSpec::Idempotency::kNo:
      break;
  }
  return false;
}

}  // namespace stepback::https

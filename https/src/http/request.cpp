// The request rules: which requests may be sent again (is_idempotent), BodySource::of, and the
// request as it stands between attempts (Request).
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

bool Request::valid(const RequestSpec& spec) {
  const Url& url = spec.head.url;
  return !url.host.empty() && url.host.size() <= kHostMax &&
         (spec.body.size == 0 || spec.body.read != nullptr);
}

Status Request::set(const RequestSpec& spec) {
  if (!valid(spec)) return Status::kInvalidArgument;
  const Url& url = spec.head.url;
  spec_ = spec;
  spec_.head.body_size = spec.body.size;
  std::memcpy(host_, url.host.data(), url.host.size());
  host_[url.host.size()] = '\0';
  strict_ = spec.idempotency == RequestSpec::Idempotency::kStrict ||
            spec.idempotency == RequestSpec::Idempotency::kNo;
  follow_rules();
  return Status::kOk;
}

bool Request::names_generation() const {
  const RequestHead& head = spec_.head;
  for (std::size_t i = 0; i < head.header_count; ++i) {
    if (http1_text::iequals(head.headers[i].name, "x-goog-if-generation-match")) return true;
  }
  return detail::has_query_parameter(head.url.target, "generation") ||
         detail::has_query_parameter(head.url.target, "ifGenerationMatch");
}

void Request::retarget(const Url& url, bool same_origin) {
  if (!same_origin) {
    spec_.head.omit_credentials = true;
    spec_.head.host = {};
  }
  spec_.head.url = url;
  std::memcpy(host_, url.host.data(), url.host.size());
  host_[url.host.size()] = '\0';
}

void Request::redirect(const Url& url, const RedirectStep& step) {
  retarget(url, step.same_origin);
  spec_.head.method = step.method;
  if (step.drop_body) {
    spec_.body = BodySource{};
    spec_.head.body_size = 0;
    spec_.head.omit_content_fields = true;
  }
  follow_rules();
}

void Request::follow_rules() {
  idempotent_ = is_idempotent(spec_);
  resumable_ = spec_.head.method == "GET";
}

}  // namespace stepback::https

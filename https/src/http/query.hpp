// The query of a request target, read without copying (private to the Client).
#ifndef STEPBACK_HTTPS_SRC_HTTP_QUERY_HPP_
#define STEPBACK_HTTPS_SRC_HTTP_QUERY_HPP_

#include <string_view>

#include "http1_text.hpp"

namespace stepback::https::detail {

// Whether the query of `target` has a parameter named `name`.
inline bool has_query_parameter(std::string_view target, std::string_view name) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return false;
  std::string_view query = http1_text::sub(target, q + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param = http1_text::sub(query, 0, amp);
    if (http1_text::sub(param, 0, param.find('=')) == name) return true;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return false;
}

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_SRC_HTTP_QUERY_HPP_

// Names for table-driven tests: gtest_discover_tests puts a parameter's PrintTo() text into
// the CTest name, which must stay a plain word.
#ifndef STEPBACK_TESTS_SUPPORT_CASE_LABEL_HPP_
#define STEPBACK_TESTS_SUPPORT_CASE_LABEL_HPP_

#include <string>
#include <string_view>

namespace stepback::testing {

// A CTest-friendly rendering of a case's text (its first 40 characters): letters and digits,
// the rest as '_'; "empty" for none.
inline std::string case_label(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 40)) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += alnum ? c : '_';
  }
  return out.empty() ? "empty" : out;
}

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_CASE_LABEL_HPP_

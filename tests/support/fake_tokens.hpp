// A fake token source (https::Credentials): "Bearer t1", then "Bearer t2" after a refresh.
#ifndef STEPBACK_TESTS_SUPPORT_FAKE_TOKENS_HPP_
#define STEPBACK_TESTS_SUPPORT_FAKE_TOKENS_HPP_

#include <cstddef>
#include <cstring>
#include <string>

#include "stepback/https/types.hpp"

namespace stepback::testing {

// The app's token source: "Bearer t<n + 1>" after n refreshes; counts the asks and refreshes.
//
//   FakeTokens tokens;
//   options.credentials = https::Credentials{&FakeTokens::get, &tokens};
struct FakeTokens {
  int asked = 0;
  int refreshed = 0;
  static std::size_t get(void* context, bool refresh, https::MutableBytes out) {
    auto* t = static_cast<FakeTokens*>(context);
    ++t->asked;
    if (refresh) ++t->refreshed;
    const std::string value = "Bearer t" + std::to_string(1 + t->refreshed);
    if (value.size() <= out.size) std::memcpy(out.data, value.data(), value.size());
    return value.size();
  }
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_FAKE_TOKENS_HPP_

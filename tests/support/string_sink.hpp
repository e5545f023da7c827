// A fake response sink (https::ResponseSink) that keeps the body in a std::string.
#ifndef STEPBACK_TESTS_SUPPORT_STRING_SINK_HPP_
#define STEPBACK_TESTS_SUPPORT_STRING_SINK_HPP_

#include <cstdint>
#include <string>

#include "stepback/https/client.hpp"
#include "stepback/https/types.hpp"

namespace stepback::testing {

// Keeps every byte written and checks the sink contract: it counts writes that are not at the
// end of what it holds (each byte once, in order: must stay 0) and restarts.
//
//   StringSink body;
//   body.restartable = false;  // A sink that cannot start over (read by sink()).
//   options.body = body.sink();
struct StringSink {
  std::string bytes;
  bool restartable = true;  // Whether sink() offers a restart.
  std::uint32_t restarts = 0;
  std::uint32_t offset_violations = 0;  // Writes not at the end of `bytes`: must stay 0.

  https::ResponseSink sink() {
    return https::ResponseSink{&write, restartable ? &restart : nullptr, this};
  }
  static bool write(void* context, std::uint64_t offset, https::ConstBytes data) {
    auto* s = static_cast<StringSink*>(context);
    if (offset != s->bytes.size()) ++s->offset_violations;
    s->bytes.append(reinterpret_cast<const char*>(data.data), data.size);
    return true;
  }
  static bool restart(void* context) {
    auto* s = static_cast<StringSink*>(context);
    ++s->restarts;
    s->bytes.clear();
    return true;
  }
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_STRING_SINK_HPP_

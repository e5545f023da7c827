// A fake response sink (https::ResponseSink) that only counts the body's bytes, heap-free.
#ifndef STEPBACK_TESTS_SUPPORT_COUNTING_SINK_HPP_
#define STEPBACK_TESTS_SUPPORT_COUNTING_SINK_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/client.hpp"
#include "stepback/https/types.hpp"

namespace stepback::testing {

// Counts the bytes written and keeps none, so it can stand in a heap-trapped request.
//
//   CountingSink body;
//   options.body = body.sink();
//   ... run the request ...
//   EXPECT_EQ(body.size, 4096U);
struct CountingSink {
  std::size_t size = 0;

  https::ResponseSink sink() { return https::ResponseSink{&write, nullptr, this}; }
  static bool write(void* context, std::uint64_t /*offset*/, https::ConstBytes data) {
    static_cast<CountingSink*>(context)->size += data.size;
    return true;
  }
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_COUNTING_SINK_HPP_

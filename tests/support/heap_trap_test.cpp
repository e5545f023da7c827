// The heap trap (tests/support/heap_trap.hpp) sees the heap calls made while it is armed, so
// the "no heap calls" tests that rely on it cannot pass by not counting.
#include "tests/support/heap_trap.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace stepback::testing {
namespace {

TEST(HeapTrap, TheTrapSeesHeapCalls) {
  if (!heap_trap_available()) GTEST_SKIP() << "the heap trap needs glibc and no sanitizer";
  long calls = 0;
  {
    HeapTrap trap;
    int* volatile p = new int(7);
    delete p;
    void* volatile q = std::malloc(16);
    std::free(q);
    calls = trap.calls();
  }
  EXPECT_EQ(calls, 4);
}

}  // namespace
}  // namespace stepback::testing

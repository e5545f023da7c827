// A heap trap for "allocation-free" tests: while a HeapTrap is alive, every call to
// malloc/calloc/realloc/free and to every operator new/delete in the process is counted,
// and the first calls keep a backtrace. Link tests/support/heap_trap.cpp into the test
// binary (it replaces those functions); it works on glibc without sanitizers.
#ifndef STEPBACK_TESTS_SUPPORT_HEAP_TRAP_HPP_
#define STEPBACK_TESTS_SUPPORT_HEAP_TRAP_HPP_

#include <string>

namespace stepback::testing {

// Whether this build can trap the heap (glibc, no sanitizer); tests skip otherwise.
bool heap_trap_available();

// Counts heap calls made while it is alive (one at a time per process).
class HeapTrap {
 public:
  HeapTrap();
  ~HeapTrap();
  HeapTrap(const HeapTrap&) = delete;
  HeapTrap& operator=(const HeapTrap&) = delete;

  // Heap calls so far.
  long calls() const;
  // The recorded calls' backtraces, symbolized, one block per call (allocates: call it
  // after the trap is gone or accept the extra counts).
  static std::string describe();
  // Whether recorded call `i` passes through a function whose symbol contains `part`.
  static bool passes_through(int i, const char* part);
  // How many calls have a backtrace.
  static int traces();
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_HEAP_TRAP_HPP_

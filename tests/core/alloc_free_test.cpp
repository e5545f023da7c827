// Proves "allocation-free": traps malloc/calloc/realloc/free and every operator new,
// then runs whole retry sequences of every strategy and expects zero heap calls.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "stepback/core/retry_machine.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STEPBACK_NO_HEAP_TRAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define STEPBACK_NO_HEAP_TRAP 1
#endif
#endif

namespace {
std::atomic<bool> g_armed{false};
std::atomic<long> g_heap_calls{0};

[[maybe_unused]] void note_call() {
  if (g_armed.load(std::memory_order_relaxed)) g_heap_calls.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

#if !defined(STEPBACK_NO_HEAP_TRAP) && defined(__GLIBC__)
// glibc exports its allocator under these names, so the trap can forward to it.
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void __libc_free(void* ptr);

void* malloc(std::size_t size) {
  note_call();
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) {
  note_call();
  return __libc_calloc(count, size);
}
void* realloc(void* ptr, std::size_t size) {
  note_call();
  return __libc_realloc(ptr, size);
}
void free(void* ptr) {
  if (ptr != nullptr) note_call();
  __libc_free(ptr);
}
}
#define STEPBACK_MALLOC_TRAPPED 1
#endif

#if !defined(STEPBACK_NO_HEAP_TRAP)
namespace {
// operator new and delete count themselves and go straight to the allocator below malloc,
// so one `new` is one counted call.
void* raw_alloc(std::size_t size) {
#if defined(STEPBACK_MALLOC_TRAPPED)
  return __libc_malloc(size == 0 ? 1 : size);
#else
  return std::malloc(size == 0 ? 1 : size);
#endif
}
void raw_free(void* p) {
  if (p == nullptr) return;
  note_call();
#if defined(STEPBACK_MALLOC_TRAPPED)
  __libc_free(p);
#else
  std::free(p);
#endif
}
}  // namespace

void* operator new(std::size_t size) {
  note_call();
  void* p = raw_alloc(size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  note_call();
  return raw_alloc(size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { raw_free(p); }
void operator delete[](void* p) noexcept { raw_free(p); }
void operator delete(void* p, std::size_t) noexcept { raw_free(p); }
void operator delete[](void* p, std::size_t) noexcept { raw_free(p); }
#endif

namespace stepback {
namespace {

// Counts heap calls made while it is alive.
class HeapTrap {
 public:
  HeapTrap() {
    g_heap_calls = 0;
    g_armed = true;
  }
  ~HeapTrap() { g_armed = false; }
  long calls() const { return g_heap_calls.load(); }
};

class AllocFree : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(STEPBACK_NO_HEAP_TRAP)
    GTEST_SKIP() << "the heap trap cannot be installed under a sanitizer";
#endif
  }
};

TEST_F(AllocFree, TheTrapSeesHeapCalls) {
  long calls = 0;
  {
    HeapTrap trap;
    int* volatile p = new int(7);
    delete p;
#if defined(STEPBACK_MALLOC_TRAPPED)
    void* volatile q = std::malloc(16);
    std::free(q);
#endif
    calls = trap.calls();
  }
#if defined(STEPBACK_MALLOC_TRAPPED)
  EXPECT_EQ(calls, 4);
#else
  EXPECT_GE(calls, 1);
#endif
}

TEST_F(AllocFree, WholeRetrySequencesOfEveryStrategyMakeNoHeapCalls) {
  long calls = -1;
  Outcome outcomes[6] = {};
  {
    HeapTrap trap;
    platform::Status status = platform::Status::kEntropyUnavailable;
    Xoshiro128 random = platform::make_os_random(&status);
    RetryBudget budget(BudgetConfig{1000, 100});
    int i = 0;
    for (Jitter j : {Jitter::kSeed, Jitter::kFull, Jitter::kEqual, Jitter::kDecorrelated, Jitter::kNone}) {
      Policy p;
      p.jitter = j;
      p.max_retries = 12;
      p.total_deadline = Millis::seconds(600);
      const RetryContext ctx{p, random, &budget};
      RetryMachine m(ctx, Idempotent::kNo);
      Millis now = platform::monotonic_now();
      Next next = m.step(now);
      int attempts = 0;
      while (next.kind != Next::Kind::kDone) {
        if (next.kind == Next::Kind::kSend) {
          ++attempts;
          const AttemptResult r = attempts % 3 == 0
                                      ? AttemptResult::http(429, Millis(1500), DelaySource::kRetryAfter)
                                      : AttemptResult::http(503);
          next = m.report(now, r);
          if (attempts == 4) m.network_available(now + Millis(10));
        } else {
          now = next.at;
          next = m.step(now);
        }
      }
      outcomes[i++] = next.outcome;
      budget.record_success();
    }
    const Policy defaults;
    const RetryContext plain{defaults, random, nullptr};
    RetryMachine cancelled(plain);
    (void)cancelled.step(Millis(0));
    cancelled.cancel();
    outcomes[i] = cancelled.step(Millis(0)).outcome;
    (void)platform::wall_now();
    calls = trap.calls();
  }
  EXPECT_EQ(calls, 0);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(outcomes[k], Outcome::kRetriesExhausted) << k;
  EXPECT_EQ(outcomes[5], Outcome::kCancelled);
}

}  // namespace
}  // namespace stepback

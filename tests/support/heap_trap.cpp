#include "tests/support/heap_trap.hpp"

#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STEPBACK_NO_HEAP_TRAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define STEPBACK_NO_HEAP_TRAP 1
#endif
#endif

namespace {

constexpr int kMaxTraces = 64;
constexpr int kTraceFrames = 40;

std::atomic<bool> g_armed{false};
std::atomic<long> g_calls{0};
void* g_traces[kMaxTraces][kTraceFrames];
int g_depth[kMaxTraces];
std::atomic<int> g_trace_count{0};
thread_local bool t_tracing = false;  // backtrace() itself must not recurse into the trap.

[[maybe_unused]] void note_call() {
  if (!g_armed.load(std::memory_order_relaxed) || t_tracing) return;
  g_calls.fetch_add(1, std::memory_order_relaxed);
  const int i = g_trace_count.load(std::memory_order_relaxed);
  if (i < kMaxTraces) {
    t_tracing = true;
    g_depth[i] = backtrace(g_traces[i], kTraceFrames);
    g_trace_count.store(i + 1, std::memory_order_relaxed);
    t_tracing = false;
  }
}

}  // namespace

#if !defined(STEPBACK_NO_HEAP_TRAP) && defined(__GLIBC__)
#define STEPBACK_HEAP_TRAPPED 1
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

// operator new and delete count themselves and go straight to glibc's allocator, so one
// `new` is one counted call.
void* operator new(std::size_t size) {
  note_call();
  void* p = __libc_malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  note_call();
  return __libc_malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  note_call();
  __libc_free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { operator delete(p); }
#endif

namespace stepback::testing {

bool heap_trap_available() {
#if defined(STEPBACK_HEAP_TRAPPED)
  return true;
#else
  return false;
#endif
}

HeapTrap::HeapTrap() {
  g_calls = 0;
  g_trace_count = 0;
  g_armed = true;
}

HeapTrap::~HeapTrap() { g_armed = false; }

long HeapTrap::calls() const { return g_calls.load(); }

int HeapTrap::traces() { return g_trace_count.load(); }

bool HeapTrap::passes_through(int i, const char* part) {
  for (int f = 0; f < g_depth[i]; ++f) {
    Dl_info info{};
    if (dladdr(g_traces[i][f], &info) != 0 && info.dli_sname != nullptr &&
        std::strstr(info.dli_sname, part) != nullptr) {
      return true;
    }
  }
  return false;
}

std::string HeapTrap::describe() {
  std::ostringstream out;
  const int n = g_trace_count.load();
  for (int i = 0; i < n; ++i) {
    out << "heap call " << (i + 1) << ":\n";
    char** names = backtrace_symbols(g_traces[i], g_depth[i]);
    for (int f = 1; f < g_depth[i] && names != nullptr; ++f) {
      out << "    " << names[f] << "\n";
      if (std::strstr(names[f], "gtest") != nullptr) break;  // Below the test body.
    }
    std::free(names);
  }
  return out.str();
}

}  // namespace stepback::testing

// Clocks for Windows. monotonic_now() counts sleep and hibernation: it reads the interrupt
// time (QueryInterruptTime, Windows 10+), falling back to GetTickCount64, which counts
// them too, on older systems.
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <cstdint>

#include "stepback/platform/clock.hpp"

namespace stepback::platform {
namespace {

using QueryInterruptTimeFn = VOID(WINAPI*)(PULONGLONG);

// QueryInterruptTime from KernelBase.dll, or nullptr before Windows 10. Looked up at run
// time because MinGW's headers lack it and a static import would not load on Windows 8.1.
QueryInterruptTimeFn query_interrupt_time() {
  static const QueryInterruptTimeFn kFn = []() -> QueryInterruptTimeFn {
    // KernelBase.dll is mapped into every process since Windows 7: no LoadLibrary needed.
    const HMODULE module = GetModuleHandleW(L"KernelBase.dll");
    if (module == nullptr) return nullptr;
    const FARPROC proc = GetProcAddress(module, "QueryInterruptTime");
    // Through void(*)() because GCC's -Wcast-function-type exempts exactly that type.
    return reinterpret_cast<QueryInterruptTimeFn>(reinterpret_cast<void (*)()>(proc));
  }();
  return kFn;
}

// 100 ns intervals between 1601-01-01 (the FILETIME epoch) and 1970-01-01.
constexpr std::uint64_t kUnixEpochInFileTime = 116444736000000000ULL;

}  // namespace

// Sleep and hibernation count; the choice of source is fixed per process, so the clock
// never switches origin.
Millis monotonic_now() {
  if (const QueryInterruptTimeFn fn = query_interrupt_time(); fn != nullptr) {
    ULONGLONG interrupt_time = 0;  // 100 ns units since boot.
    fn(&interrupt_time);
    return Millis(interrupt_time / 10000U);
  }
  return Millis(GetTickCount64());
}

Millis wall_now() {
  FILETIME ft{};
#if _WIN32_WINNT >= 0x0602
  GetSystemTimePreciseAsFileTime(&ft);
#else
  GetSystemTimeAsFileTime(&ft);
#endif
  const std::uint64_t t = (std::uint64_t{ft.dwHighDateTime} << 32) | ft.dwLowDateTime;
  return Millis(t < kUnixEpochInFileTime ? 0 : (t - kUnixEpochInFileTime) / 10000U);
}

}  // namespace stepback::platform

// The C objects' storage: a C++ object placed in the caller's opaque words. The storage is
// asked for 8-byte alignment only (a binding's byte buffer has that); an object that needs
// more is placed at the next aligned address inside, and the sizes leave room for that.
#ifndef STEPBACK_CAPI_SRC_STORAGE_HPP_
#define STEPBACK_CAPI_SRC_STORAGE_HPP_

#include <cstddef>
#include <cstdint>
#include <new>

#include "stepback/core/millis.hpp"
#include "stepback/stepback.h"

namespace stepback::capi {

// Bytes an object of type T takes in storage aligned to STEPBACK_ALIGN, its padding included.
template <class T>
constexpr std::size_t footprint() {
  return sizeof(T) + (alignof(T) > STEPBACK_ALIGN ? alignof(T) - STEPBACK_ALIGN : 0);
}

// Where T lives in the storage at `base`.
template <class T>
T* place(void* base) {
  const auto address = reinterpret_cast<std::uintptr_t>(base);
  const auto aligned = (address + alignof(T) - 1) & ~(std::uintptr_t{alignof(T)} - 1);
  return reinterpret_cast<T*>(aligned);
}
template <class T>
const T* place(const void* base) {
  return place<T>(const_cast<void*>(base));
}

// Whether `size` bytes at `base` can hold a T.
template <class T>
bool fits(const void* base, std::size_t size) {
  return base != nullptr && reinterpret_cast<std::uintptr_t>(base) % STEPBACK_ALIGN == 0 &&
         size >= footprint<T>();
}

// Constructs a T in the C object `base` (a stepback_retry, ...), whose storage is `size`
// bytes; STEPBACK_E_STORAGE when that is less than the C struct the header states (the
// documented rule: pass sizeof, a binding passes STEPBACK_<X>_SIZE), even where the C++
// object would fit, so a stale size fails on every target alike.
template <class T, class Storage, class... Args>
stepback_status construct(Storage* base, std::size_t size, T** out, Args&&... args) {
  static_assert(footprint<T>() <= sizeof(Storage), "the C struct must hold the C++ object");
  if (size < sizeof(Storage) || !fits<T>(base, size)) return STEPBACK_E_STORAGE;
  *out = new (place<T>(base)) T(static_cast<Args&&>(args)...);
  return STEPBACK_OK;
}

// A C instant as Millis (negative times as 0, STEPBACK_NEVER as Millis::max()).
constexpr Millis to_millis(std::int64_t ms) {
  return ms <= 0 ? Millis(0) : Millis(static_cast<std::uint64_t>(ms));
}
// Millis as a C instant (Millis::max() and anything beyond INT64_MAX as STEPBACK_NEVER).
constexpr std::int64_t from_millis(Millis m) {
  return m.count() >= static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX
                                                            : static_cast<std::int64_t>(m.count());
}

}  // namespace stepback::capi

#endif  // STEPBACK_CAPI_SRC_STORAGE_HPP_

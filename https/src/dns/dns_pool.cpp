// The bounded memory c-ares runs on: segregated size classes over one caller buffer.
//
// Blocks come in sizes 16 x 2^k and 24 x 2^k (16, 24, 32, 48, ... bytes); each carries a
// 16-byte header naming its class. A request takes a freed block of its class if there is
// one, or carves a new block from the untouched end of the buffer. Freed blocks go to their
// class's list and are reused only by that class: c-ares asks for the same sizes lookup
// after lookup, so a steady state is reached after the first lookups and the pool stops
// growing. Every operation is O(1) (realloc copies). Not thread-safe: c-ares is built
// without threads and stepped from one loop.
#include <ares.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "stepback/https/dns/cares_resolver.hpp"

namespace stepback::https {
namespace {

constexpr std::size_t kHeader = 16;   // Keeps every block 16-byte aligned (max_align_t).
constexpr std::size_t kClasses = 48;  // Up to 24 x 2^23 bytes, far past any buffer.

struct Pool {
  std::uint8_t* begin = nullptr;
  std::size_t capacity = 0;
  std::size_t carved = 0;
  std::size_t in_use = 0;
  std::size_t peak = 0;
  std::size_t refused = 0;
  void* free_lists[kClasses] = {};  // Each free block's first word links to the next.
  bool installed = false;
};

Pool pool;

// The built-in buffer, used only when the app installs none.
alignas(16) std::uint8_t default_buffer[kDefaultDnsPoolSize];

// The size of class `c`: 16, 24, 32, 48, 64, 96, ...
constexpr std::size_t class_size(std::size_t c) {
  return (c % 2 == 0 ? std::size_t{16} : std::size_t{24}) << (c / 2);
}

// The smallest class holding `size` payload bytes, or kClasses when none does.
std::size_t class_for(std::size_t size) {
  for (std::size_t c = 0; c < kClasses; ++c) {
    if (class_size(c) >= size) return c;
  }
  return kClasses;
}

std::size_t& header_of(void* block) {
  return *reinterpret_cast<std::size_t*>(static_cast<std::uint8_t*>(block) - kHeader);
}

void* pool_malloc(std::size_t size) {
  const std::size_t c = class_for(size == 0 ? 1 : size);
  if (c == kClasses) {
    ++pool.refused;
    return nullptr;
  }
  const std::size_t block = kHeader + class_size(c);
  void* p = pool.free_lists[c];
  if (p != nullptr) {
    std::memcpy(&pool.free_lists[c], p, sizeof(void*));
  } else {
    if (pool.capacity - pool.carved < block) {
      ++pool.refused;
      return nullptr;
    }
    p = pool.begin + pool.carved + kHeader;
    pool.carved += block;
  }
  header_of(p) = c;
  pool.in_use += block;
  if (pool.in_use > pool.peak) pool.peak = pool.in_use;
  return p;
}

void pool_free(void* p) {
  if (p == nullptr) return;
  const std::size_t c = header_of(p);
  pool.in_use -= kHeader + class_size(c);
  std::memcpy(p, &pool.free_lists[c], sizeof(void*));
  pool.free_lists[c] = p;
}

void* pool_realloc(void* p, std::size_t size) {
  if (p == nullptr) return pool_malloc(size);
  const std::size_t c = header_of(p);
  if (size <= class_size(c)) return p;
  void* bigger = pool_malloc(size);
  if (bigger == nullptr) return nullptr;  // `p` stays valid, as realloc promises.
  std::memcpy(bigger, p, class_size(c));
  pool_free(p);
  return bigger;
}

Status install(std::uint8_t* begin, std::size_t capacity) {
  if (pool.installed) return Status::kError;
  pool = Pool{};
  pool.begin = begin;
  pool.capacity = capacity;
  if (ares_library_init_mem(ARES_LIB_INIT_ALL, &pool_malloc, &pool_free, &pool_realloc) !=
      ARES_SUCCESS) {
    pool = Pool{};
    return Status::kError;
  }
  pool.installed = true;
  return Status::kOk;
}

}  // namespace

Status dns_pool_init(MutableBytes buffer) {
  if (buffer.data == nullptr || buffer.size < 4096 ||
      reinterpret_cast<std::uintptr_t>(buffer.data) % kHeader != 0) {
    return Status::kInvalidArgument;
  }
  return install(buffer.data, buffer.size);
}

DnsPoolStats dns_pool_stats() {
  DnsPoolStats s;
  s.capacity = pool.capacity;
  s.in_use = pool.in_use;
  s.peak = pool.peak;
  s.carved = pool.carved;
  s.refused = pool.refused;
  return s;
}

// For cares_resolver.cpp: the pool in place, the built-in one if the app installed none.
bool dns_pool_ensure() {
  return pool.installed || install(default_buffer, sizeof default_buffer) == Status::kOk;
}

}  // namespace stepback::https

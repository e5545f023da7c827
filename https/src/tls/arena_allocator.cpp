#include "tls/arena_allocator.hpp"

#include <cstdlib>
#include <cstring>

namespace stepback::https::detail {

// Header words are read and written with memcpy: the buffer is raw bytes, not objects.
namespace {

std::uint32_t load(const std::uint8_t* at) {
  std::uint32_t v = 0;
  std::memcpy(&v, at, sizeof v);
  return v;
}

void store(std::uint8_t* at, std::uint32_t v) { std::memcpy(at, &v, sizeof v); }

}  // namespace

bool ArenaAllocator::init(void* data, std::size_t size) {
  base_ = nullptr;
  end_ = 0;
  free_head_ = kNone;
  stats_ = Stats{};
  if (data == nullptr) return false;
  const auto address = reinterpret_cast<std::uintptr_t>(data);
  const std::size_t skip = (kAlignment - address % kAlignment) % kAlignment;
  if (size < skip + kMinBlockBytes) return false;
  std::size_t usable = (size - skip) & ~(kAlignment - 1);
  const std::size_t most = 0xFFFFFFF8u;  // Offsets and sizes are 32-bit; kNone stays free.
  if (usable > most) usable = most;
  base_ = static_cast<std::uint8_t*>(data) + skip;
  end_ = static_cast<std::uint32_t>(usable);
  set_header(0, end_, false);
  set_prev_size(0, 0);
  push_free(0);
  return true;
}

std::uint32_t ArenaAllocator::size_of(std::uint32_t block) const {
  return load(base_ + block) & ~kUsedBit;
}

bool ArenaAllocator::used(std::uint32_t block) const {
  return (load(base_ + block) & kUsedBit) != 0;
}

void ArenaAllocator::set_header(std::uint32_t block, std::uint32_t size, bool is_used) {
  store(base_ + block, size | (is_used ? kUsedBit : 0u));
}

std::uint32_t ArenaAllocator::prev_size(std::uint32_t block) const {
  return load(base_ + block + 4);
}

void ArenaAllocator::set_prev_size(std::uint32_t block, std::uint32_t size) {
  store(base_ + block + 4, size);
}

std::uint32_t ArenaAllocator::next_free(std::uint32_t block) const {
  return load(base_ + block + kHeaderBytes);
}

std::uint32_t ArenaAllocator::prev_free(std::uint32_t block) const {
  return load(base_ + block + kHeaderBytes + 4);
}

void ArenaAllocator::set_links(std::uint32_t block, std::uint32_t prev, std::uint32_t next) {
  store(base_ + block + kHeaderBytes, next);
  store(base_ + block + kHeaderBytes + 4, prev);
}

void ArenaAllocator::push_free(std::uint32_t block) {
  set_links(block, kNone, free_head_);
  if (free_head_ != kNone) set_links(free_head_, block, next_free(free_head_));
  free_head_ = block;
}

void ArenaAllocator::unlink_free(std::uint32_t block) {
  const std::uint32_t prev = prev_free(block);
  const std::uint32_t next = next_free(block);
  if (prev == kNone) {
    free_head_ = next;
  } else {
    set_links(prev, prev_free(prev), next);
  }
  if (next != kNone) set_links(next, prev, next_free(next));
}

void ArenaAllocator::tell_next(std::uint32_t block, std::uint32_t size) {
  const std::uint32_t next = block + size;
  if (next < end_) set_prev_size(next, size);
}

void* ArenaAllocator::allocate(std::size_t size) {
  if (size == 0 || base_ == nullptr || size > end_ - kHeaderBytes) return nullptr;
  std::size_t need = ((size + kAlignment - 1) & ~(kAlignment - 1)) + kHeaderBytes;
  if (need < kMinBlockBytes) need = kMinBlockBytes;
  // Best fit: the smallest free block that holds `need` (an exact fit ends the search).
  std::uint32_t best = kNone;
  std::uint32_t best_size = 0;
  for (std::uint32_t b = free_head_; b != kNone; b = next_free(b)) {
    const std::uint32_t s = size_of(b);
    if (s < need || (best != kNone && s >= best_size)) continue;
    best = b;
    best_size = s;
    if (s == need) break;
  }
  if (best == kNone) return nullptr;
  unlink_free(best);
  auto block_size = static_cast<std::uint32_t>(need);
  const std::uint32_t rest = best_size - block_size;
  if (rest >= kMinBlockBytes) {
    const std::uint32_t tail = best + block_size;
    set_header(tail, rest, false);
    set_prev_size(tail, block_size);
    tell_next(tail, rest);
    push_free(tail);
  } else {
    block_size = best_size;  // Too little left for a block: it stays in this one.
  }
  set_header(best, block_size, true);
  stats_.current_bytes += block_size - kHeaderBytes;
  stats_.current_blocks += 1;
  if (stats_.current_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.current_bytes;
  if (stats_.current_blocks > stats_.peak_blocks) stats_.peak_blocks = stats_.current_blocks;
  return base_ + best + kHeaderBytes;
}

void* ArenaAllocator::allocate_zeroed(std::size_t count, std::size_t size) {
  if (count != 0 && size > static_cast<std::size_t>(-1) / count) return nullptr;
  void* p = allocate(count * size);
  if (p != nullptr) std::memset(p, 0, count * size);
  return p;
}

void ArenaAllocator::release(void* pointer) {
  if (pointer == nullptr) return;
  auto* p = static_cast<std::uint8_t*>(pointer);
  // Not one of ours, or not a live block: the arena is corrupt (see the header).
  if (base_ == nullptr || p < base_ + kHeaderBytes || p >= base_ + end_) std::abort();
  const auto offset = static_cast<std::uint32_t>(static_cast<std::size_t>(p - base_));
  if (offset % kAlignment != 0) std::abort();
  std::uint32_t block = offset - static_cast<std::uint32_t>(kHeaderBytes);
  std::uint32_t size = size_of(block);
  if (!used(block) || size < kMinBlockBytes || size > end_ - block) std::abort();
  stats_.current_bytes -= size - kHeaderBytes;
  stats_.current_blocks -= 1;
  const std::uint32_t next = block + size;
  if (next < end_ && !used(next)) {
    unlink_free(next);
    size += size_of(next);
  }
  if (block != 0) {
    const std::uint32_t prev = block - prev_size(block);
    if (!used(prev)) {
      unlink_free(prev);
      size += size_of(prev);
      block = prev;
    }
  }
  set_header(block, size, false);
  tell_next(block, size);
  push_free(block);
}

void ArenaAllocator::reset_peaks() {
  stats_.peak_bytes = stats_.current_bytes;
  stats_.peak_blocks = stats_.current_blocks;
}

std::size_t ArenaAllocator::largest_free() const {
  std::size_t largest = 0;
  for (std::uint32_t b = free_head_; b != kNone; b = next_free(b)) {
    const std::size_t payload = size_of(b) - kHeaderBytes;
    if (payload > largest) largest = payload;
  }
  return largest;
}

bool ArenaAllocator::consistent() const {
  if (base_ == nullptr) return end_ == 0 && free_head_ == kNone;
  std::size_t free_blocks = 0;
  std::uint32_t previous = 0;
  bool previous_free = false;
  std::uint32_t at = 0;
  while (at < end_) {
    const std::uint32_t s = size_of(at);
    if (s < kMinBlockBytes || s % kAlignment != 0 || s > end_ - at) return false;
    if (prev_size(at) != previous) return false;
    const bool is_free = !used(at);
    if (is_free && previous_free) return false;  // Two free neighbours were not merged.
    if (is_free) ++free_blocks;
    previous = s;
    previous_free = is_free;
    at += s;
  }
  if (at != end_) return false;
  std::size_t listed = 0;
  std::uint32_t before = kNone;
  for (std::uint32_t b = free_head_; b != kNone; b = next_free(b)) {
    if (b >= end_ || used(b) || prev_free(b) != before || ++listed > free_blocks) return false;
    before = b;
  }
  return listed == free_blocks;
}

}  // namespace stepback::https::detail

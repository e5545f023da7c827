// ArenaAllocator: the allocator behind the TLS arena (tls_arena.hpp), over one caller-owned
// buffer, with an 8-byte block header on every target.
//
// Why not mbedTLS's own (MBEDTLS_MEMORY_BUFFER_ALLOC_C), which served the arena before: its
// block header is eight machine words, 32 B on 32-bit ARM and 64 B on 64-bit targets, and a
// TLS 1.3 download holds about 60 blocks at its peak, so the headers alone were 1.8 KiB of a
// 32-bit device's arena (3.7 KiB on 64-bit). No allocator in Debian serves a caller's buffer
// with a smaller header (TLSF, umm_malloc and o1heap are not packaged). docs/small_ram.md has
// the measurements.
//
// Layout: blocks one after another from the buffer's first 8-aligned byte. A block is a
// header {its size with a "used" bit, the previous block's size} and its payload, sizes in
// bytes, multiples of 8, so a payload is 8-aligned. A free block keeps the offsets of its
// free-list neighbours in its payload (hence 16 B at least). allocate() takes the best fit
// from the free list and splits off what is left when that can be a block; release()
// merges a block with free neighbours on both sides. Bounded work: one pass over the free
// blocks per allocation, constant per release. Not thread-safe (mbedTLS is used from one
// thread). A release of anything allocate() did not hand out, or of a block twice, is found by
// its header (when the header says so) and aborts the process, as mbedTLS's allocator exits:
// the arena is corrupt and no TLS state in it can be trusted.
#ifndef STEPBACK_HTTPS_SRC_TLS_ARENA_ALLOCATOR_HPP_
#define STEPBACK_HTTPS_SRC_TLS_ARENA_ALLOCATOR_HPP_

#include <cstddef>
#include <cstdint>

namespace stepback::https::detail {

class ArenaAllocator {
 public:
  static constexpr std::size_t kAlignment = 8;
  static constexpr std::size_t kHeaderBytes = 8;
  // The smallest block: a header and the two free-list offsets.
  static constexpr std::size_t kMinBlockBytes = 16;

  struct Stats {
    std::size_t current_bytes = 0;   // Payload bytes of the live blocks.
    std::size_t current_blocks = 0;  // Live blocks.
    std::size_t peak_bytes = 0;      // Most of current_bytes at once since the last reset.
    std::size_t peak_blocks = 0;     // Most of current_blocks at once since the last reset.
  };

  ArenaAllocator() = default;
  ArenaAllocator(const ArenaAllocator&) = delete;
  ArenaAllocator& operator=(const ArenaAllocator&) = delete;

  // Serves allocations from `size` bytes at `data` (at most 4 GiB are used); false when fewer
  // than one block's worth remain after alignment. Forgets any earlier buffer.
  bool init(void* data, std::size_t size);
  // `size` bytes, 8-aligned, not zeroed; null for 0 bytes or when no free block is large
  // enough.
  void* allocate(std::size_t size);
  // `count` x `size` zeroed bytes; null on overflow, for 0 bytes, or when nothing fits.
  void* allocate_zeroed(std::size_t count, std::size_t size);
  // Gives back a block allocate() handed out; null is ignored.
  void release(void* pointer);

  const Stats& stats() const { return stats_; }
  // Restarts the peaks at the current use.
  void reset_peaks();
  // The bytes the buffer holds blocks in (its size less the alignment lost at its start).
  std::size_t capacity() const { return end_; }
  // The largest payload one allocation could get now; for tests.
  std::size_t largest_free() const;
  // Walks every block and the free list and checks that they agree (sizes sum to the
  // capacity, each size matches the next block's record of it, no two free blocks adjoin,
  // the free list holds exactly the free blocks); for tests.
  bool consistent() const;

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  static constexpr std::uint32_t kUsedBit = 1u;

  std::uint32_t size_of(std::uint32_t block) const;
  bool used(std::uint32_t block) const;
  void set_header(std::uint32_t block, std::uint32_t size, bool is_used);
  std::uint32_t prev_size(std::uint32_t block) const;
  void set_prev_size(std::uint32_t block, std::uint32_t size);
  std::uint32_t next_free(std::uint32_t block) const;
  std::uint32_t prev_free(std::uint32_t block) const;
  void set_links(std::uint32_t block, std::uint32_t prev, std::uint32_t next);
  void push_free(std::uint32_t block);
  void unlink_free(std::uint32_t block);
  // Records `size` as the previous size of the block after `block`, if there is one.
  void tell_next(std::uint32_t block, std::uint32_t size);

  std::uint8_t* base_ = nullptr;  // The first 8-aligned byte of the buffer.
  std::uint32_t end_ = 0;         // Bytes of blocks from base_.
  std::uint32_t free_head_ = kNone;
  Stats stats_;
};

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_SRC_TLS_ARENA_ALLOCATOR_HPP_

// The TLS arena's allocator (https/src/tls/arena_allocator.cpp) on its own: alignment, best
// fit, splitting and merging, exhaustion, zeroing and overflow, the statistics, corrupt
// releases, and a long random run against a model of what is live, with every block's bytes
// checked, so that no two blocks ever overlap and the arena is whole again at the end.
#include "https/src/tls/arena_allocator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <vector>

namespace stepback::https::detail {
namespace {

TEST(ArenaAllocatorTest, BlocksAreEightAlignedAndCostEightBytesEach) {
  alignas(8) std::uint8_t buffer[1024 + 3];
  ArenaAllocator a;
  ASSERT_TRUE(a.init(buffer + 3, 1024));  // A misaligned start loses what aligning costs.
  EXPECT_EQ(a.capacity(), 1016u);
  EXPECT_EQ(a.largest_free(), 1008u);
  void* p = a.allocate(1);
  void* q = a.allocate(24);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 8, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % 8, 0u);
  // A 1-byte request takes the smallest block (16 B: header and 8 B); 24 B take 32 B.
  EXPECT_EQ(static_cast<std::uint8_t*>(q) - static_cast<std::uint8_t*>(p), 16);
  EXPECT_EQ(a.stats().current_bytes, 8u + 24u);
  EXPECT_EQ(a.stats().current_blocks, 2u);
  EXPECT_EQ(a.largest_free(), 1016u - 16u - 32u - 8u);
  EXPECT_TRUE(a.consistent());
}

TEST(ArenaAllocatorTest, FreedNeighboursMergeAndTheWholeArenaComesBack) {
  alignas(8) std::uint8_t buffer[512];
  ArenaAllocator a;
  ASSERT_TRUE(a.init(buffer, sizeof buffer));
  void* blocks[4];
  for (void*& b : blocks) {
    b = a.allocate(100);
    ASSERT_NE(b, nullptr);
  }
  a.release(blocks[1]);
  a.release(blocks[3]);  // Merges with the free tail.
  EXPECT_TRUE(a.consistent());
  a.release(blocks[2]);  // Merges with both neighbours.
  EXPECT_TRUE(a.consistent());
  a.release(blocks[0]);
  EXPECT_TRUE(a.consistent());
  EXPECT_EQ(a.largest_free(), 512u - 8u);
  EXPECT_NE(a.allocate(512 - 8), nullptr);
  EXPECT_EQ(a.stats().current_blocks, 1u);
}

TEST(ArenaAllocatorTest, TheBestFittingHoleIsTaken) {
  alignas(8) std::uint8_t buffer[1024];
  ArenaAllocator a;
  ASSERT_TRUE(a.init(buffer, sizeof buffer));
  void* big = a.allocate(200);
  void* keep1 = a.allocate(8);
  void* small = a.allocate(40);
  void* keep2 = a.allocate(8);
  ASSERT_NE(keep1, nullptr);
  ASSERT_NE(keep2, nullptr);
  a.release(big);
  a.release(small);
  // 40 B fit both holes and the tail; the 48 B hole fits best.
  EXPECT_EQ(a.allocate(40), small);
  EXPECT_EQ(a.allocate(200), big);
  EXPECT_TRUE(a.consistent());
}

TEST(ArenaAllocatorTest, ExhaustionAnswersNullAndLosesNothing) {
  alignas(8) std::uint8_t buffer[256];
  ArenaAllocator a;
  ASSERT_TRUE(a.init(buffer, sizeof buffer));
  std::vector<void*> got;
  for (int i = 0; i < 100; ++i) {
    void* p = a.allocate(24);
    if (p == nullptr) break;
    got.push_back(p);
  }
  EXPECT_EQ(got.size(), 256u / 32u);
  EXPECT_EQ(a.allocate(1), nullptr);
  EXPECT_EQ(a.allocate(0), nullptr);
  EXPECT_EQ(a.allocate(static_cast<std::size_t>(-1)), nullptr);
  for (void* p : got) a.release(p);
  EXPECT_TRUE(a.consistent());
  EXPECT_EQ(a.largest_free(), 256u - 8u);
  EXPECT_EQ(a.stats().current_bytes, 0u);
  EXPECT_EQ(a.stats().peak_blocks, got.size());
}

TEST(ArenaAllocatorTest, ZeroedAllocationsAreZeroAndOverflowIsRefused) {
  alignas(8) std::uint8_t buffer[512];
  ArenaAllocator a;
  ASSERT_TRUE(a.init(buffer, sizeof buffer));
  void* p = a.allocate(200);
  std::memset(p, 0xAB, 200);
  a.release(p);
  auto* z = static_cast<std::uint8_t*>(a.allocate_zeroed(10, 20));
  ASSERT_NE(z, nullptr);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(z[i], 0) << i;
  const std::size_t half = (static_cast<std::size_t>(-1) >> 1) + 2;
  EXPECT_EQ(a.allocate_zeroed(half, 2), nullptr);
  EXPECT_EQ(a.allocate_zeroed(0, 8), nullptr);
}

TEST(ArenaAllocatorTest, PeaksRestartAtTheCurrentUse) {
  alignas(8) std::uint8_t buffer[512];
  ArenaAllocator a;
  ASSERT_TRUE(a.init(buffer, sizeof buffer));
  void* p = a.allocate(100);
  void* q = a.allocate(100);
  a.release(q);
  EXPECT_EQ(a.stats().peak_bytes, 208u);
  a.reset_peaks();
  EXPECT_EQ(a.stats().peak_bytes, 104u);
  EXPECT_EQ(a.stats().peak_blocks, 1u);
  a.release(p);
}

TEST(ArenaAllocatorTest, TooSmallOrNullBuffersAreRefused) {
  alignas(8) std::uint8_t buffer[32];
  ArenaAllocator a;
  EXPECT_FALSE(a.init(nullptr, 1024));
  EXPECT_FALSE(a.init(buffer + 1, 16));  // 7 lost to alignment, 9 left.
  EXPECT_EQ(a.allocate(1), nullptr);
  EXPECT_TRUE(a.init(buffer, 16));
  EXPECT_NE(a.allocate(8), nullptr);
}

TEST(ArenaAllocatorDeathTest, ADoubleOrForeignReleaseAborts) {
  alignas(8) static std::uint8_t buffer[512];
  static ArenaAllocator a;
  ASSERT_TRUE(a.init(buffer, sizeof buffer));
  void* p = a.allocate(40);
  a.release(p);
  EXPECT_DEATH(a.release(p), "");
  int outside = 0;
  EXPECT_DEATH(a.release(&outside), "");
  void* q = a.allocate(40);
  EXPECT_DEATH(a.release(static_cast<std::uint8_t*>(q) + 8), "");
}

// Random allocations and releases against a model: every live block is filled with its own
// byte and checked when released (an overlap would have overwritten it), the walk of blocks
// and the free list agree after every step, and the statistics match the model.
TEST(ArenaAllocatorTest, ARandomRunKeepsEveryBlockIntact) {
  alignas(8) static std::uint8_t buffer[64 * 1024];
  ArenaAllocator a;
  ASSERT_TRUE(a.init(buffer, sizeof buffer));
  std::mt19937 random(20261130);
  struct Live {
    std::size_t size;
    std::uint8_t fill;
  };
  std::map<std::uint8_t*, Live> live;
  std::size_t refused = 0;
  for (int step = 0; step < 40000; ++step) {
    const bool give = live.empty() || random() % 100 < 55;
    if (give) {
      // Mostly small (mbedTLS's contexts), now and then a record buffer.
      const std::size_t size = random() % 10 == 0 ? 1 + random() % 17000 : 1 + random() % 600;
      auto* p = static_cast<std::uint8_t*>(a.allocate(size));
      if (p == nullptr) {
        ++refused;
        ASSERT_LT(a.largest_free(), size) << "refused although a block was large enough";
        continue;
      }
      const auto fill = static_cast<std::uint8_t>(random());
      std::memset(p, fill, size);
      live[p] = Live{size, fill};
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(random() % live.size()));
      for (std::size_t i = 0; i < it->second.size; ++i) {
        ASSERT_EQ(it->first[i], it->second.fill) << "block overwritten at step " << step;
      }
      a.release(it->first);
      live.erase(it);
    }
    if (step % 97 == 0) {
      ASSERT_TRUE(a.consistent()) << step;
    }
    ASSERT_EQ(a.stats().current_blocks, live.size());
  }
  EXPECT_GT(refused, 0u) << "the run never filled the arena";
  for (auto& [p, l] : live) a.release(p);
  EXPECT_TRUE(a.consistent());
  EXPECT_EQ(a.stats().current_bytes, 0u);
  EXPECT_EQ(a.largest_free(), sizeof buffer - 8);
}

}  // namespace
}  // namespace stepback::https::detail

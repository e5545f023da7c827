// CRC-32C throughput: stepback's paths (the dispatching crc32c_extend(), the SSE4.2 or ARM
// CRC path, the slicing-by-8 table) against Intel ISA-L's crc32_iscsi (libisal-dev, when
// the build found it: STEPBACK_BENCH_HAVE_ISAL), on 1 KiB, 16 KiB and 1 MiB buffers; and
// the whole IntegrityCheck (CRC-32C + MD5 through mbedTLS) for scale. Bytes per second are
// reported by Google Benchmark in binary units (G/s = GiB/s).
//
//   cmake --preset bench && cmake --build build/bench --target crc32c_bench
//   build/bench/bench/crc32c_bench --benchmark_repetitions=7
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//   (one command line).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "stepback/https/integrity/integrity.hpp"

#if defined(STEPBACK_BENCH_HAVE_ISAL)
#include <isa-l/crc.h>
#endif

namespace stepback::https {
namespace {

std::vector<std::uint8_t> random_buffer(std::size_t n) {
  std::mt19937_64 gen(0x5eedba5eULL);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(gen());
  return v;
}

void sizes(benchmark::internal::Benchmark* b) { b->Arg(1 << 10)->Arg(16 << 10)->Arg(1 << 20); }

// One iteration is the CRC of one whole buffer of state.range(0) bytes.
void BM_Crc32c(benchmark::State& state, Crc32cPath path) {
  if (!crc32c_path_available(path)) {
    state.SkipWithError("path not available on this CPU");
    return;
  }
  const auto buf = random_buffer(static_cast<std::size_t>(state.range(0)));
  const ConstBytes bytes{buf.data(), buf.size()};
  for (auto _ : state) {
    std::uint32_t crc = crc32c_extend_with(path, 0, bytes);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.SetLabel(to_string(path));
}

void BM_Crc32cDispatch(benchmark::State& state) {
  const auto buf = random_buffer(static_cast<std::size_t>(state.range(0)));
  const ConstBytes bytes{buf.data(), buf.size()};
  for (auto _ : state) {
    std::uint32_t crc = crc32c(bytes);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.SetLabel(to_string(crc32c_path()));
}

#if defined(STEPBACK_BENCH_HAVE_ISAL)
// ISA-L keeps the register un-inverted: crc32_iscsi(buf, n, ~0) ^ ~0 is the CRC-32C.
std::uint32_t isal_crc32c(const std::vector<std::uint8_t>& buf) {
  return ~static_cast<std::uint32_t>(crc32_iscsi(const_cast<unsigned char*>(buf.data()),
                                                 static_cast<int>(buf.size()), 0xFFFFFFFFu));
}

void BM_IsalCrc32Iscsi(benchmark::State& state) {
  const auto buf = random_buffer(static_cast<std::size_t>(state.range(0)));
  if (isal_crc32c(buf) != crc32c({buf.data(), buf.size()})) {
    state.SkipWithError("ISA-L and stepback disagree");
    return;
  }
  for (auto _ : state) {
    std::uint32_t crc = isal_crc32c(buf);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.SetLabel("isa-l crc32_iscsi");
}
BENCHMARK(BM_IsalCrc32Iscsi)->Apply(sizes);
#endif

// The check a download runs: CRC-32C and MD5 over every byte, fed 16 KiB at a time.
void BM_IntegrityCheckCrc32cMd5(benchmark::State& state) {
  const auto buf = random_buffer(static_cast<std::size_t>(state.range(0)));
  const std::uint8_t md5_expectation[kMd5DigestSize] = {};
  for (auto _ : state) {
    IntegrityCheck check;
    check.expect_crc32c(0);
    check.expect_md5(md5_expectation);
    for (std::size_t at = 0; at < buf.size(); at += 16 << 10) {
      const std::size_t n = buf.size() - at < (16 << 10) ? buf.size() - at : (16 << 10);
      check.update({buf.data() + at, n});
    }
    IntegrityResult r = check.finish();
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_Crc32cDispatch)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Crc32c, sse42, Crc32cPath::kSse42)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Crc32c, arm_crc, Crc32cPath::kArmCrc)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Crc32c, table, Crc32cPath::kTable)->Apply(sizes);
BENCHMARK(BM_IntegrityCheckCrc32cMd5)->Arg(1 << 20);

}  // namespace
}  // namespace stepback::https

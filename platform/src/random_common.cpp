// The OS-independent half of random.hpp: status names, os_seed() and the seeded generator.
#include <atomic>
#include <cstdint>

#include "entropy.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"

namespace stepback::platform {
namespace {

std::uint64_t mix(std::uint64_t z) { return splitmix64_mix(z); }

}  // namespace

const char* to_string(Status s) {
  switch (s) {
    case Status::kEntropyUnavailable:
      return "entropy_unavailable";
    case Status::kOk:
      return "ok";
  }
  return "unknown";
}

Status os_seed(std::uint64_t* seed) {
  if (seed == nullptr) return Status::kEntropyUnavailable;
  // Filled through a local so that a partial failure leaves *seed as it was.
  std::uint64_t value = 0;
  if (!internal::fill_from_os(&value, sizeof value)) return Status::kEntropyUnavailable;
  *seed = value;
  return Status::kOk;
}

Xoshiro128 make_os_random(Status* status) {
  std::uint64_t seed = 0;
  const Status s = os_seed(&seed);
  if (s != Status::kOk) {
    // Not unpredictable, but distinct across devices and runs: boot-relative time differs
    // per device, wall time per run, the stack address per process under ASLR, and the
    // counter per call within one millisecond.
    static std::atomic<std::uint32_t> calls{0};
    const int local = 0;
    const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&local));
    seed = mix(monotonic_now().count() ^
               mix(wall_now().count() ^ mix(address ^ mix(calls.fetch_add(1U) + 1U))));
  }
  if (status != nullptr) *status = s;
  return Xoshiro128(seed);
}

}  // namespace stepback::platform

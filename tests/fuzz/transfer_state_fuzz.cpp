// Fuzz target of the transfer state decoder: any bytes must be refused or decode into a
// consistent record that encodes and decodes again to the same record. The replay
// executable runs the checked-in corpus (tests/fuzz/corpus/transfer_state) on every ctest run;
// with Clang the libFuzzer target is built as well:
//   transfer_state_fuzz -max_total_time=120 SCRATCH_DIR tests/fuzz/corpus/transfer_state
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "stepback/https/integrity/crc32c.hpp"
#include "stepback/transfer/state.hpp"

namespace {

stepback::transfer::TransferState g_first;
stepback::transfer::TransferState g_second;
std::uint8_t g_record[stepback::transfer::kMaxStateBytes];

void require(bool condition) {
  if (!condition) std::abort();
}

// Decodes `record`; if it is accepted, checks it and its round trip.
void check(const std::uint8_t* record, std::size_t size) {
  using stepback::transfer::StateStatus;
  g_first = stepback::transfer::TransferState{};
  if (stepback::transfer::decode_state(stepback::https::ConstBytes{record, size}, &g_first) !=
      StateStatus::kOk) {
    return;
  }
  require(g_first.kind != stepback::transfer::TransferKind::kUpload ||
          g_first.committed <= g_first.total_size);
  std::size_t n = 0;
  require(stepback::transfer::encode_state(g_first,
                                           stepback::https::MutableBytes{g_record, sizeof g_record},
                                           &n) == StateStatus::kOk);
  g_second = stepback::transfer::TransferState{};
  require(stepback::transfer::decode_state(stepback::https::ConstBytes{g_record, n}, &g_second) ==
          StateStatus::kOk);
  require(g_first.url() == g_second.url() && g_first.session_uri() == g_second.session_uri() &&
          g_first.validator() == g_second.validator() && g_first.committed == g_second.committed &&
          g_first.total_size == g_second.total_size && g_first.retries == g_second.retries &&
          g_first.wait_remaining == g_second.wait_remaining);
}

std::uint8_t g_framed[stepback::transfer::kMaxStateBytes];

}  // namespace

// Each input is decoded twice: as it is (the frame's own checks), and as the message of a
// valid frame built around it, so that the fuzzer reaches nanopb's decoder and the
// consistency checks without having to forge a CRC-32C.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check(data, size);
  if (size > stepback::transfer::kMaxStateBytes - 16) return 0;
  const std::uint8_t head[12] = {'S',
                                 'B',
                                 'T',
                                 'S',
                                 1,
                                 0,
                                 0,
                                 0,
                                 static_cast<std::uint8_t>(size),
                                 static_cast<std::uint8_t>(size >> 8),
                                 0,
                                 0};
  std::memcpy(g_framed, head, sizeof head);
  if (size > 0) std::memcpy(g_framed + sizeof head, data, size);
  const std::uint32_t crc =
      stepback::https::crc32c(stepback::https::ConstBytes{g_framed, sizeof head + size});
  for (int i = 0; i < 4; ++i) {
    g_framed[sizeof head + size + static_cast<std::size_t>(i)] =
        static_cast<std::uint8_t>(crc >> (8 * i));
  }
  check(g_framed, sizeof head + size + 4);
  return 0;
}

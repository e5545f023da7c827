// The transfer state record: what a restarted app needs to go on with a transfer, as a
// bounded protobuf message (transfer/proto/stepback_transfer_state.proto, nanopb, no heap)
// in a frame that makes every damaged or foreign file recognisable:
//
//   "SBTS"  version (u16 LE)  0 (u16)  length (u32 LE)  message  CRC-32C (u32 LE, of all before)
//
// The library encodes into and decodes from caller buffers; where the bytes are kept (a
// file written atomically, flash, NVS) is the application's. A record that is cut, damaged,
// of another format, of a newer version or self-contradictory is refused, never trusted.
#ifndef STEPBACK_TRANSFER_STATE_HPP_
#define STEPBACK_TRANSFER_STATE_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/https/integrity/digest.hpp"
#include "stepback/https/types.hpp"

namespace stepback::transfer {

// Bounds of the record's strings (the .options file's, less the terminating NUL).
inline constexpr std::size_t kMaxStateUrl = 1024;
inline constexpr std::size_t kMaxStateSessionUri = 2048;
inline constexpr std::size_t kMaxStateValidator = 160;
inline constexpr std::size_t kMaxStateGeneration = 20;
// The record version this library writes; it reads this one and refuses newer ones.
inline constexpr std::uint16_t kStateVersion = 1;
// The largest record: the 12-byte header, the longest message (4530 bytes), the CRC.
inline constexpr std::size_t kMaxStateBytes = 12 + 4530 + 4;

enum class TransferKind : std::uint8_t { kUpload = 1, kDownload = 2 };

// Why a record could not be written or read.
enum class StateStatus : std::uint8_t {
  kOk,
  kBufferTooSmall,  // encode: the output cannot hold the record.
  kTruncated,       // decode: the record is cut short (an interrupted write, a short read).
  kForeign,         // decode: not a stepback transfer state (no "SBTS" magic).
  kNewerVersion,    // decode: written by a newer stepback; this one cannot read it.
  kCorrupt,         // decode: damaged (checksum, framing or protobuf encoding).
  kInvalid,         // decode: well-formed but self-contradictory (e.g. committed > size).
};

// Lower-case words on `s`, for messages ("the record is cut short", ...).
const char* describe(StateStatus s);

// What a transfer needs to go on, in fixed storage.
class TransferState {
 public:
  TransferKind kind = TransferKind::kUpload;
  std::uint64_t total_size = 0;
  std::uint64_t committed = 0;          // Upload: bytes the server holds.
  std::uint64_t delivered = 0;          // Download: bytes delivered.
  std::uint64_t chunk_size = 0;         // Upload: bytes per chunk.
  std::optional<std::uint32_t> crc32c;  // Of the committed (or delivered) prefix, when known.
  // The retry loop: the retry number of the next attempt since the last progress, and the
  // wait under way (0: none) as time left and as the wall-clock instant it ends.
  std::uint32_t retries = 0;
  Millis wait_remaining{};
  std::int64_t release_wall_ms = 0;
  std::int64_t saved_wall_ms = 0;  // When the record was made (ms since the Unix epoch).
  // Download: whether validator() is an ETag (else a Last-Modified date), and the integrity
  // check over the `delivered` bytes (integrity.size == delivered).
  bool validator_is_etag = false;
  https::IntegrityState integrity;

  // Setters copy; false (and nothing changed) when the text is longer than its bound.
  bool set_url(std::string_view url);
  bool set_session_uri(std::string_view uri);
  bool set_validator(std::string_view validator);
  bool set_final_url(std::string_view url);
  bool set_generation(std::string_view generation);
  std::string_view url() const { return std::string_view(url_, url_size_); }
  std::string_view session_uri() const { return std::string_view(session_, session_size_); }
  std::string_view validator() const { return std::string_view(validator_, validator_size_); }
  // Download: the URL the redirects led to; Cloud Storage's generation of the bytes.
  std::string_view final_url() const { return std::string_view(final_url_, final_url_size_); }
  std::string_view generation() const { return std::string_view(generation_, generation_size_); }

 private:
  char url_[kMaxStateUrl] = {};
  char session_[kMaxStateSessionUri] = {};
  char validator_[kMaxStateValidator] = {};
  char final_url_[kMaxStateUrl] = {};
  char generation_[kMaxStateGeneration] = {};
  std::size_t url_size_ = 0;
  std::size_t final_url_size_ = 0;
  std::size_t generation_size_ = 0;
  std::size_t session_size_ = 0;
  std::size_t validator_size_ = 0;
};

// Writes the framed record of `state` into `out` (kMaxStateBytes always suffice) and sets
// *written; kBufferTooSmall when it does not fit. The nanopb message is built on the stack
// (docs/performance.md).
[[nodiscard]] StateStatus encode_state(const TransferState& state, https::MutableBytes out,
                                       std::size_t* written);

// Reads a record written by encode_state() into *out; on any status but kOk, *out is left
// as it was. The nanopb message is decoded on the stack; never allocates, whatever the input.
[[nodiscard]] StateStatus decode_state(https::ConstBytes in, TransferState* out);

// The wait a restored `state` still asks for at wall-clock `wall_now` (ms since the Unix
// epoch), as Chromium's BackoffEntrySerializer decides it: the earlier of the time that was
// left when it was saved and the wall-clock release instant, never below zero. A wall clock
// set back (or a reboot) cannot lengthen the wait, nor one set forward cut it below zero.
Millis remaining_wait(const TransferState& state, Millis wall_now);

}  // namespace stepback::transfer

#endif  // STEPBACK_TRANSFER_STATE_HPP_

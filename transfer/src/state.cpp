// The transfer state record, framed and checked around nanopb's encoding of
// stepback.transfer.TransferState (transfer/proto).
#include "stepback/transfer/state.hpp"

#include <pb.h>
#include <pb_decode.h>
#include <pb_encode.h>

#include <cstring>
#include <type_traits>

#include "stepback/core/policy.hpp"
#include "stepback/https/integrity/crc32c.hpp"
#include "stepback_transfer_state.pb.h"

#if defined(PB_ENABLE_MALLOC)
#error "stepback builds nanopb without PB_ENABLE_MALLOC; nothing may allocate"
#endif

namespace stepback::transfer {
namespace {

using Message = stepback_pb_transfer_TransferState;

constexpr std::uint8_t kMagic[4] = {'S', 'B', 'T', 'S'};
constexpr std::size_t kHeaderBytes = 12;
constexpr std::size_t kCrcBytes = 4;
constexpr std::uint64_t kGranularity = std::uint64_t{256} * 1024;

static_assert(kMaxStateBytes == kHeaderBytes + stepback_pb_transfer_TransferState_size + kCrcBytes,
              "kMaxStateBytes must follow the generated message's bound");
static_assert(sizeof(Message{}.url) == kMaxStateUrl + 1 &&
                  sizeof(Message{}.session_uri) == kMaxStateSessionUri + 1 &&
                  sizeof(Message{}.validator) == kMaxStateValidator + 1 &&
                  sizeof(Message{}.final_url) == kMaxStateUrl + 1 &&
                  sizeof(Message{}.generation) == kMaxStateGeneration + 1,
              "the .options bounds and state.hpp's must agree");

void put_u16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}
void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint16_t get_u16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
std::uint32_t get_u32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Copies `text` into a NUL-terminated field of `size` bytes (text fits: the setters check).
template <std::size_t N>
void put_text(char (&field)[N], std::string_view text) {
  // Clamped again here, so that the compiler can see the bound too (GCC -Os otherwise warns
  // that the terminating NUL may fall outside the field).
  const std::size_t n = text.size() < N ? text.size() : N - 1;
  std::memcpy(field, text.data(), n);
  field[n] = '\0';
}

using RawKind = std::underlying_type_t<stepback_pb_transfer_TransferState_Kind>;

// The kind as the number the wire carried: nanopb stores any number in the enum field, and
// reading one outside the enum back as the enum type would be undefined behaviour.
RawKind raw_kind(const Message& m) {
  RawKind v = 0;
  static_assert(sizeof v == sizeof m.kind);
  std::memcpy(&v, &m.kind, sizeof v);
  return v;
}

// Whether a decoded message describes a transfer that can go on.
bool consistent(const Message& m) {
  if (m.url[0] == '\0') return false;
  if (m.has_retry && m.retry.wait_remaining_ms > kMaxBackoffLimit.count()) return false;
  switch (raw_kind(m)) {
    case stepback_pb_transfer_TransferState_Kind_UPLOAD:
      return m.session_uri[0] != '\0' && m.chunk_size > 0 && m.chunk_size % kGranularity == 0 &&
             m.committed <= m.total_size;
    case stepback_pb_transfer_TransferState_Kind_DOWNLOAD:
      // The running CRC-32C is the record's crc32c: an announced one needs it.
      if (m.has_integrity && m.integrity.expected_crc32c.size != 0 && !m.has_crc32c) return false;
      return (m.total_size == 0 || m.delivered <= m.total_size) &&
             std::string_view(m.generation).find_first_not_of("0123456789") ==
                 std::string_view::npos;
    default:
      break;
  }
  return false;
}

// A digest field of the record: the digest's bytes (CRC-32C big-endian), or empty for none.
template <typename Field>
void put_digest(Field* field, const https::Digest& d) {
  static_assert(sizeof field->bytes >= https::kCrc32cDigestSize);
  const std::size_t n = d.size <= sizeof field->bytes ? d.size : 0;
  std::memcpy(field->bytes, d.bytes, n);
  field->size = static_cast<decltype(field->size)>(n);
}

// The digest of `algorithm` a record's field holds; false for a length that is neither
// empty nor the algorithm's.
template <typename Field>
bool get_digest(const Field& field, https::HashAlgorithm algorithm, https::Digest* out) {
  *out = https::Digest();
  if (field.size == 0) return true;
  const std::size_t want =
      algorithm == https::HashAlgorithm::kCrc32c ? https::kCrc32cDigestSize : https::kMd5DigestSize;
  if (field.size != want) return false;
  out->algorithm = algorithm;
  out->size = static_cast<std::uint8_t>(want);
  std::memcpy(out->bytes, field.bytes, want);
  return true;
}

bool assign(char* field, std::size_t bound, std::size_t* size, std::string_view text) {
  if (text.size() > bound) return false;
  std::memcpy(field, text.data(), text.size());
  *size = text.size();
  return true;
}

}  // namespace

const char* describe(StateStatus s) {
  switch (s) {
    case StateStatus::kOk:
      return "ok";
    case StateStatus::kBufferTooSmall:
      return "the buffer cannot hold the record";
    case StateStatus::kTruncated:
      return "the record is cut short";
    case StateStatus::kForeign:
      return "not a stepback transfer state";
    case StateStatus::kNewerVersion:
      return "written by a newer stepback";
    case StateStatus::kCorrupt:
      return "the record is damaged";
    case StateStatus::kInvalid:
      return "the record contradicts itself";
  }
  return "unknown";
}

bool TransferState::set_url(std::string_view url) {
  return assign(url_, sizeof url_, &url_size_, url);
}
bool TransferState::set_session_uri(std::string_view uri) {
  return assign(session_, sizeof session_, &session_size_, uri);
}
bool TransferState::set_validator(std::string_view validator) {
  return assign(validator_, sizeof validator_, &validator_size_, validator);
}
bool TransferState::set_final_url(std::string_view url) {
  return assign(final_url_, sizeof final_url_, &final_url_size_, url);
}
bool TransferState::set_generation(std::string_view generation) {
  return assign(generation_, sizeof generation_, &generation_size_, generation);
}

StateStatus encode_state(const TransferState& state, https::MutableBytes out,
                         std::size_t* written) {
  *written = 0;
  if (out.size < kHeaderBytes + kCrcBytes) return StateStatus::kBufferTooSmall;
  Message m = stepback_pb_transfer_TransferState_init_zero;
  m.kind = state.kind == TransferKind::kUpload ? stepback_pb_transfer_TransferState_Kind_UPLOAD
                                               : stepback_pb_transfer_TransferState_Kind_DOWNLOAD;
  put_text(m.url, state.url());
  put_text(m.session_uri, state.session_uri());
  put_text(m.validator, state.validator());
  m.total_size = state.total_size;
  m.committed = state.committed;
  m.delivered = state.delivered;
  m.chunk_size = state.chunk_size;
  m.has_crc32c = state.crc32c.has_value();
  m.crc32c = state.crc32c.value_or(0);
  m.has_retry = true;
  m.retry.retries = state.retries;
  m.retry.wait_remaining_ms = state.wait_remaining.count();
  m.retry.release_wall_ms = state.release_wall_ms;
  m.saved_wall_ms = state.saved_wall_ms;
  if (state.kind == TransferKind::kDownload) {
    put_text(m.final_url, state.final_url());
    put_text(m.generation, state.generation());
    m.validator_is_etag = state.validator_is_etag;
    const https::IntegrityState& i = state.integrity;
    m.has_integrity = true;
    put_digest(&m.integrity.expected_crc32c, i.expected_crc32c);
    put_digest(&m.integrity.other_crc32c, i.other_crc32c);
    put_digest(&m.integrity.expected_md5, i.expected_md5);
    put_digest(&m.integrity.other_md5, i.other_md5);
    m.integrity.md5_running = i.md5_running;
    if (i.md5_running) {
      static_assert(sizeof m.integrity.md5_context.bytes == https::kMd5ContextSize);
      std::memcpy(m.integrity.md5_context.bytes, i.md5_context, https::kMd5ContextSize);
      m.integrity.md5_context.size = https::kMd5ContextSize;
    }
  }
  pb_ostream_t stream =
      pb_ostream_from_buffer(out.data + kHeaderBytes, out.size - kHeaderBytes - kCrcBytes);
  if (!pb_encode(&stream, stepback_pb_transfer_TransferState_fields, &m)) {
    return StateStatus::kBufferTooSmall;
  }
  const auto length = static_cast<std::uint32_t>(stream.bytes_written);
  std::memcpy(out.data, kMagic, sizeof kMagic);
  put_u16(out.data + 4, kStateVersion);
  put_u16(out.data + 6, 0);
  put_u32(out.data + 8, length);
  const std::size_t body = kHeaderBytes + length;
  put_u32(out.data + body, https::crc32c(https::ConstBytes{out.data, body}));
  *written = body + kCrcBytes;
  return StateStatus::kOk;
}

StateStatus decode_state(https::ConstBytes in, TransferState* out) {
  // The magic first: an empty file, or a short one that starts like ours, was cut (an
  // interrupted write); anything else is foreign.
  if (in.size == 0) return StateStatus::kTruncated;
  const std::size_t magic = in.size < sizeof kMagic ? in.size : sizeof kMagic;
  if (std::memcmp(in.data, kMagic, magic) != 0) return StateStatus::kForeign;
  if (in.size < kHeaderBytes) return StateStatus::kTruncated;
  const std::uint16_t version = get_u16(in.data + 4);
  if (version > kStateVersion) return StateStatus::kNewerVersion;
  if (version == 0 || get_u16(in.data + 6) != 0) return StateStatus::kCorrupt;
  const std::uint32_t length = get_u32(in.data + 8);
  if (length > stepback_pb_transfer_TransferState_size) return StateStatus::kCorrupt;
  const std::size_t body = kHeaderBytes + length;
  if (in.size < body + kCrcBytes) return StateStatus::kTruncated;
  if (in.size > body + kCrcBytes) return StateStatus::kCorrupt;
  if (get_u32(in.data + body) != https::crc32c(https::ConstBytes{in.data, body})) {
    return StateStatus::kCorrupt;
  }
  Message m = stepback_pb_transfer_TransferState_init_zero;
  pb_istream_t stream = pb_istream_from_buffer(in.data + kHeaderBytes, length);
  if (!pb_decode(&stream, stepback_pb_transfer_TransferState_fields, &m)) {
    return StateStatus::kCorrupt;
  }
  if (!consistent(m)) return StateStatus::kInvalid;
  https::IntegrityState integrity;
  if (m.has_integrity) {
    const auto& i = m.integrity;
    if (!get_digest(i.expected_crc32c, https::HashAlgorithm::kCrc32c, &integrity.expected_crc32c) ||
        !get_digest(i.other_crc32c, https::HashAlgorithm::kCrc32c, &integrity.other_crc32c) ||
        !get_digest(i.expected_md5, https::HashAlgorithm::kMd5, &integrity.expected_md5) ||
        !get_digest(i.other_md5, https::HashAlgorithm::kMd5, &integrity.other_md5) ||
        (i.md5_running && i.md5_context.size != https::kMd5ContextSize)) {
      return StateStatus::kInvalid;
    }
    integrity.md5_running = i.md5_running;
    if (i.md5_running)
      std::memcpy(integrity.md5_context, i.md5_context.bytes, https::kMd5ContextSize);
  }
  integrity.size = m.delivered;
  integrity.crc32c = m.crc32c;
  // A record whose check IntegrityCheck::restore() would refuse is refused here already.
  if (!https::plausible(integrity)) return StateStatus::kInvalid;
  TransferState& s = *out;
  s.kind = raw_kind(m) == stepback_pb_transfer_TransferState_Kind_UPLOAD ? TransferKind::kUpload
                                                                         : TransferKind::kDownload;
  // The decoded strings are NUL-terminated within their bounds.
  (void)s.set_url(m.url);
  (void)s.set_session_uri(m.session_uri);
  (void)s.set_validator(m.validator);
  s.total_size = m.total_size;
  s.committed = m.committed;
  s.delivered = m.delivered;
  s.chunk_size = m.chunk_size;
  s.crc32c = m.has_crc32c ? std::optional<std::uint32_t>(m.crc32c) : std::nullopt;
  s.retries = m.has_retry ? m.retry.retries : 0;
  s.wait_remaining = Millis(m.has_retry ? m.retry.wait_remaining_ms : 0);
  s.release_wall_ms = m.has_retry ? m.retry.release_wall_ms : 0;
  s.saved_wall_ms = m.saved_wall_ms;
  (void)s.set_final_url(m.final_url);
  (void)s.set_generation(m.generation);
  s.validator_is_etag = m.validator_is_etag;
  s.integrity = integrity;
  return StateStatus::kOk;
}

Millis remaining_wait(const TransferState& state, Millis wall_now) {
  if (state.wait_remaining.count() == 0) return Millis(0);
  const auto now = static_cast<std::int64_t>(
      wall_now.count() > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : wall_now.count());
  // Until the release instant by the wall clock now (none left once it has passed).
  const std::int64_t until_release = state.release_wall_ms > now ? state.release_wall_ms - now : 0;
  return min(state.wait_remaining, Millis(static_cast<std::uint64_t>(until_release)));
}

}  // namespace stepback::transfer

// google.rpc.RetryInfo from a serialized google.rpc.Status, decoded with nanopb.
//
// Status.details and both fields of Any are callbacks (https/proto/*.options): each detail
// is decoded into one Any on the stack, its type URL compared while it streams past (only
// the last 21 bytes are kept) and its value copied into a 64-byte buffer when it fits. A
// RetryInfo is decoded from that buffer once its Any is complete, so the order of type_url
// and value inside Any does not matter, and large details of other types are skipped.
#include <pb.h>
#include <pb_decode.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "stepback/https/http/retry_info.hpp"
#include "stepback_google_rpc.pb.h"

#if defined(PB_ENABLE_MALLOC)
#error "stepback builds nanopb without PB_ENABLE_MALLOC; nothing may allocate"
#endif
#if defined(PB_WITHOUT_64BIT)
#error "google.protobuf.Duration.seconds needs nanopb's 64-bit integer support"
#endif

namespace stepback::https {
namespace {

using AnyMessage = stepback_pb_google_protobuf_Any;
using RetryInfoMessage = stepback_pb_google_rpc_RetryInfo;
using StatusMessage = stepback_pb_google_rpc_Status;

// The longest type URL suffix that can matter ("/google.rpc.RetryInfo").
constexpr std::size_t kUrlTail = kRetryInfoTypeUrlTail;

// Everything one decode keeps: the detail being read and the answer so far.
struct Search {
  std::uint8_t url_tail[kUrlTail] = {};  // The last bytes of the current type URL.
  std::size_t url_size = 0;              // Its full length.
  std::uint8_t value[kMaxRetryInfoBytes] = {};
  std::size_t value_size = 0;
  bool value_fits = false;  // False when Any.value exceeded kMaxRetryInfoBytes.
  std::optional<Millis> found;

  void start_detail() {
    url_size = 0;
    value_size = 0;
    value_fits = false;
  }
  bool is_retry_info() const {
    const std::size_t kept = url_size < kUrlTail ? url_size : kUrlTail;
    return is_retry_info_type_url(ConstBytes{url_tail, kept});
  }
};

static_assert(sizeof(Search) <= 128, "the decode state lives on the caller's stack");

// Keeps the tail of Any.type_url; a repeated occurrence replaces the earlier one, as the
// protobuf rules for singular fields say.
bool read_type_url(pb_istream_t* stream, const pb_field_iter_t* /*field*/, void** arg) {
  auto& search = *static_cast<Search*>(*arg);
  search.url_size = 0;
  while (stream->bytes_left > 0) {
    pb_byte_t byte = 0;
    if (!pb_read(stream, &byte, 1)) return false;
    if (search.url_size >= kUrlTail) {
      std::memmove(search.url_tail, search.url_tail + 1, kUrlTail - 1);
      search.url_tail[kUrlTail - 1] = byte;
    } else {
      search.url_tail[search.url_size] = byte;
    }
    ++search.url_size;
  }
  return true;
}

// Copies Any.value when it is small enough to be a RetryInfo, else skips it.
bool read_value(pb_istream_t* stream, const pb_field_iter_t* /*field*/, void** arg) {
  auto& search = *static_cast<Search*>(*arg);
  const std::size_t size = stream->bytes_left;
  search.value_fits = size <= kMaxRetryInfoBytes;
  search.value_size = search.value_fits ? size : 0;
  return pb_read(stream, search.value_fits ? search.value : nullptr, size);
}

// Decodes one element of Status.details; a RetryInfo that does not decode or has no valid
// delay is passed over, so a later one can still answer.
bool read_detail(pb_istream_t* stream, const pb_field_iter_t* /*field*/, void** arg) {
  auto& search = *static_cast<Search*>(*arg);
  search.start_detail();
  AnyMessage any = stepback_pb_google_protobuf_Any_init_zero;
  any.type_url.funcs.decode = &read_type_url;
  any.type_url.arg = &search;
  any.value.funcs.decode = &read_value;
  any.value.arg = &search;
  if (!pb_decode(stream, stepback_pb_google_protobuf_Any_fields, &any)) return false;

  if (search.found || !search.is_retry_info() || !search.value_fits) return true;
  RetryInfoMessage info = stepback_pb_google_rpc_RetryInfo_init_zero;
  pb_istream_t in = pb_istream_from_buffer(search.value, search.value_size);
  if (pb_decode(&in, stepback_pb_google_rpc_RetryInfo_fields, &info) && info.has_retry_delay) {
    search.found = millis_from_duration(info.retry_delay.seconds, info.retry_delay.nanos);
  }
  return true;
}

}  // namespace

std::optional<Millis> retry_delay_from_status_proto(ConstBytes body) {
  if (body.data == nullptr && body.size != 0) return std::nullopt;
  Search search;
  StatusMessage status = stepback_pb_google_rpc_Status_init_zero;
  status.details.funcs.decode = &read_detail;
  status.details.arg = &search;
  pb_istream_t in = pb_istream_from_buffer(body.data, body.size);
  if (!pb_decode(&in, stepback_pb_google_rpc_Status_fields, &status)) return std::nullopt;
  return search.found;
}

}  // namespace stepback::https

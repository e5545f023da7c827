// libFuzzer target for ResponseParser: the input's first bytes choose the parser's
// buffers and where the rest is cut into slices; the result must match a whole-input
// parse exactly, or the target aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "stepback/https/http/response_parser.hpp"

namespace {

using stepback::https::BodySink;
using stepback::https::ConstBytes;
using stepback::https::MutableBytes;
using stepback::https::ParseProgress;
using stepback::https::ResponseParser;
using stepback::https::Status;

struct BodyDigest {
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a.
  std::uint64_t size = 0;
};

bool digest(void* context, ConstBytes data) {
  auto* d = static_cast<BodyDigest*>(context);
  if (data.data == nullptr || data.size == 0) std::abort();  // Never called empty.
  for (std::size_t i = 0; i < data.size; ++i) {
    d->hash = (d->hash ^ data.data[i]) * 1099511628211ULL;
  }
  d->size += data.size;
  return true;
}

struct Outcome {
  ParseProgress progress;
  Status error;
  std::uint16_t status;
  std::uint64_t body_hash;
  std::uint64_t body_size;
  std::size_t consumed;
  std::size_t header_bytes;
  bool keep_alive;
  bool chunked;

  bool operator==(const Outcome& o) const {
    return progress == o.progress && error == o.error && status == o.status &&
           body_hash == o.body_hash && body_size == o.body_size && consumed == o.consumed &&
           header_bytes == o.header_bytes && keep_alive == o.keep_alive && chunked == o.chunked;
  }
};

Outcome parse(const std::uint8_t* data, std::size_t size, const std::size_t* cuts,
              std::size_t cut_count, std::size_t head_size, std::uint64_t body_limit,
              bool head_request, bool eof) {
  // Exactly sized, so AddressSanitizer sees any write past the end.
  std::vector<std::uint8_t> head(head_size);
  BodyDigest body;
  ResponseParser parser(MutableBytes{head.data(), head.size()}, BodySink{digest, &body},
                        body_limit);
  parser.reset(head_request);
  ParseProgress p = ParseProgress::kNeedMore;
  std::size_t consumed = 0;
  std::size_t begin = 0;
  for (std::size_t k = 0; k <= cut_count && p == ParseProgress::kNeedMore; ++k) {
    const std::size_t end = k < cut_count ? cuts[k] : size;
    std::size_t used = 0;
    p = parser.feed(ConstBytes{data + begin, end - begin}, &used);
    if (used > end - begin) std::abort();
    if (p == ParseProgress::kNeedMore && used != end - begin) std::abort();
    consumed += used;
    begin = end;
  }
  if (p == ParseProgress::kNeedMore && eof) p = parser.finish();
  if (p == ParseProgress::kFailed && parser.error() == Status::kOk) std::abort();
  if (p != ParseProgress::kFailed && parser.error() != Status::kOk) std::abort();
  // Every failure says why; nothing else does.
  if ((p == ParseProgress::kFailed) != (parser.error_message()[0] != '\0')) std::abort();
  if (parser.body_size() != body.size || body.size > body_limit) std::abort();

  std::size_t header_bytes = parser.reason().size();
  std::size_t cursor = 0;
  std::string_view name;
  std::string_view value;
  while (parser.next_header(&cursor, &name, &value)) {
    if (name.empty()) std::abort();
    header_bytes += name.size() + value.size() + 2;
    if (!parser.header(name)) std::abort();
  }
  if (header_bytes > head_size) std::abort();
  (void)parser.content_type();
  (void)parser.retry_after();
  (void)parser.content_length();
  return Outcome{p,        parser.error(), parser.status(),     body.hash,       body.size,
                 consumed, header_bytes,   parser.keep_alive(), parser.chunked()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kParams = 6;
  if (size < kParams) return 0;
  const bool head_request = (data[0] & 1) != 0;
  const bool eof = (data[0] & 2) != 0;
  const std::size_t head_size = (data[0] & 4) != 0 ? data[1] : 16 + std::size_t{data[1]} * 8;
  const std::uint64_t body_limit = data[2] == 255 ? ~std::uint64_t{0} : data[2];
  const std::uint8_t* msg = data + kParams;
  const std::size_t n = size - kParams;

  // Up to three cut points, from bytes 3..5, in ascending order.
  std::size_t cuts[3];
  std::size_t cut_count = 0;
  for (std::size_t i = 3; i < kParams && n > 0; ++i) {
    std::size_t cut = data[i] * n / 255;
    if (cut_count > 0 && cut < cuts[cut_count - 1]) cut = cuts[cut_count - 1];
    cuts[cut_count++] = cut;
  }
  const Outcome whole = parse(msg, n, nullptr, 0, head_size, body_limit, head_request, eof);
  const Outcome split = parse(msg, n, cuts, cut_count, head_size, body_limit, head_request, eof);
  if (!(whole == split)) std::abort();
  if (n <= 512) {
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < n; ++i) every.push_back(i);
    const Outcome bytewise =
        parse(msg, n, every.data(), every.size(), head_size, body_limit, head_request, eof);
    if (!(whole == bytewise)) std::abort();
  }
  return 0;
}

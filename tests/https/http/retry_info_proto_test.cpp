// google.rpc.RetryInfo from protobuf google.rpc.Status bodies. Bodies are built with a
// small wire-format writer written from the protobuf encoding spec, independent of nanopb
// and of our generated descriptors, plus one body written out byte by byte.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "stepback/https/http/retry_info.hpp"

namespace stepback::https {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::string_view kRetryInfoUrl = "type.googleapis.com/google.rpc.RetryInfo";
constexpr std::string_view kErrorInfoUrl = "type.googleapis.com/google.rpc.ErrorInfo";
constexpr std::optional<std::uint64_t> kNone = std::nullopt;

// Protobuf wire format: https://protobuf.dev/programming-guides/encoding/
void put_varint(Bytes& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}
void put_tag(Bytes& out, std::uint32_t field, std::uint32_t wire_type) {
  put_varint(out, (std::uint64_t{field} << 3) | wire_type);
}
void put_int(Bytes& out, std::uint32_t field, std::int64_t v) {
  put_tag(out, field, 0);
  put_varint(out, static_cast<std::uint64_t>(v));  // Negative ints take 10 bytes.
}
void put_len(Bytes& out, std::uint32_t field, const Bytes& payload) {
  put_tag(out, field, 2);
  put_varint(out, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
}
Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

Bytes duration(std::int64_t seconds, std::int32_t nanos) {
  Bytes out;
  if (seconds != 0) put_int(out, 1, seconds);
  if (nanos != 0) put_int(out, 2, nanos);
  return out;
}
Bytes retry_info(const Bytes& duration_bytes) {
  Bytes out;
  put_len(out, 1, duration_bytes);
  return out;
}
Bytes any(std::string_view type_url, const Bytes& value) {
  Bytes out;
  put_len(out, 1, text(type_url));
  put_len(out, 2, value);
  return out;
}
Bytes status(std::initializer_list<Bytes> details, std::string_view message = "quota exceeded") {
  Bytes out;
  put_int(out, 1, 8);  // RESOURCE_EXHAUSTED
  put_len(out, 2, text(message));
  for (const Bytes& d : details) put_len(out, 3, d);
  return out;
}
Bytes retry_detail(std::int64_t seconds, std::int32_t nanos = 0) {
  return any(kRetryInfoUrl, retry_info(duration(seconds, nanos)));
}
// An ErrorInfo-like detail of `size` bytes of value.
Bytes other_detail(std::size_t size = 200) { return any(kErrorInfoUrl, Bytes(size, 'x')); }

// Decodes from an exact-size heap copy, so a sanitizer sees any read past the end.
std::optional<std::uint64_t> decode(const Bytes& body, std::size_t size) {
  auto copy = std::make_unique<std::uint8_t[]>(size == 0 ? 1 : size);
  std::copy(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(size), copy.get());
  const std::optional<Millis> m = retry_delay_from_status_proto(ConstBytes{copy.get(), size});
  if (!m) return std::nullopt;
  return m->count();
}
std::optional<std::uint64_t> decode(const Bytes& body) { return decode(body, body.size()); }

TEST(RetryInfoProto, ReadsAHandWrittenBody) {
  // Status{code: 8, message: "quota", details: [Any{type_url: RetryInfo, value: {30s}}]}
  const std::string_view wire =
      "\x08\x08"                                          // code = 8
      "\x12\x05quota"                                     // message
      "\x1a\x30"                                          // details[0], 48 bytes
      "\x0a\x28type.googleapis.com/google.rpc.RetryInfo"  //   type_url, 40 bytes
      "\x12\x04"                                          //   value, 4 bytes
      "\x0a\x02\x08\x1e";                                 //     retry_delay{seconds: 30}
  const Bytes body = text(wire);
  EXPECT_EQ(decode(body), 30000U);
  EXPECT_EQ(body, status({retry_detail(30)}, "quota"));  // The writer agrees with the bytes.
}

TEST(RetryInfoProto, FindsRetryInfoWhereverItSits) {
  EXPECT_EQ(decode(status({retry_detail(30)})), 30000U);
  EXPECT_EQ(decode(status({other_detail(), retry_detail(7)})), 7000U);
  EXPECT_EQ(decode(status({other_detail(), retry_detail(7), other_detail(1000)})), 7000U);
  EXPECT_EQ(decode(status({retry_detail(0)})), 0U);
  EXPECT_EQ(decode(status({any(kRetryInfoUrl, retry_info({}))})), 0U);  // Present, zero.
}

TEST(RetryInfoProto, NoRetryInfoMeansNoDelay) {
  EXPECT_EQ(decode(status({})), kNone);
  EXPECT_EQ(decode(status({other_detail(), other_detail(10)})), kNone);
  EXPECT_EQ(decode(Bytes{}), kNone);
  EXPECT_FALSE(retry_delay_from_status_proto(ConstBytes{}).has_value());
  // A RetryInfo without retry_delay, and an empty Any.
  EXPECT_EQ(decode(status({any(kRetryInfoUrl, {})})), kNone);
  EXPECT_EQ(decode(status({Bytes{}})), kNone);
}

TEST(RetryInfoProto, OtherDetailTypesAreIgnoredEvenWhenTheyLookLikeRetryInfo) {
  const Bytes lookalike = retry_info(duration(30, 0));
  EXPECT_EQ(decode(status({any(kErrorInfoUrl, lookalike)})), kNone);
  EXPECT_EQ(decode(status({any("type.googleapis.com/google.rpc.RetryInfoX", lookalike)})), kNone);
  EXPECT_EQ(decode(status({any("google.rpc.RetryInfo", lookalike)})), kNone);
  // Any host works, as with protobuf's Any::Is().
  EXPECT_EQ(decode(status({any("example.com/google.rpc.RetryInfo", lookalike)})), 30000U);
}

TEST(RetryInfoProto, NegativeOrInvalidDurationsAreIgnored) {
  EXPECT_EQ(decode(status({retry_detail(-30)})), kNone);
  EXPECT_EQ(decode(status({retry_detail(0, -5)})), kNone);
  EXPECT_EQ(decode(status({retry_detail(-1, -5)})), kNone);
  EXPECT_EQ(decode(status({retry_detail(1, 1'000'000'000)})), kNone);
  EXPECT_EQ(decode(status({retry_detail(kMaxDurationSeconds + 1)})), kNone);
  EXPECT_EQ(decode(status({retry_detail(INT64_MAX)})), kNone);
  EXPECT_EQ(decode(status({retry_detail(kMaxDurationSeconds)})), 315'576'000'000'000U);
}

TEST(RetryInfoProto, RoundsSubMillisecondsUp) {
  EXPECT_EQ(decode(status({retry_detail(0, 1)})), 1U);
  EXPECT_EQ(decode(status({retry_detail(30, 1)})), 30001U);
  EXPECT_EQ(decode(status({retry_detail(1, 500'000'000)})), 1500U);
  EXPECT_EQ(decode(status({retry_detail(0, 1'000'000)})), 1U);
  EXPECT_EQ(decode(status({retry_detail(0, 1'000'001)})), 2U);
}

TEST(RetryInfoProto, FirstValidRetryInfoWins) {
  EXPECT_EQ(decode(status({retry_detail(5), retry_detail(9)})), 5000U);
  EXPECT_EQ(decode(status({retry_detail(-5), retry_detail(9)})), 9000U);
  EXPECT_EQ(decode(status({any(kRetryInfoUrl, text("\xff\xff")), retry_detail(9)})), 9000U);
}

TEST(RetryInfoProto, FieldOrderAndRepetitionFollowProtobufRules) {
  // value before type_url.
  Bytes reversed;
  put_len(reversed, 2, retry_info(duration(4, 0)));
  put_len(reversed, 1, text(kRetryInfoUrl));
  EXPECT_EQ(decode(status({reversed})), 4000U);
  // A repeated singular field: the last occurrence wins.
  Bytes renamed = any(kRetryInfoUrl, retry_info(duration(4, 0)));
  put_len(renamed, 1, text(kErrorInfoUrl));
  EXPECT_EQ(decode(status({renamed})), kNone);
  Bytes revalued = any(kRetryInfoUrl, retry_info(duration(4, 0)));
  put_len(revalued, 2, retry_info(duration(6, 0)));
  EXPECT_EQ(decode(status({revalued})), 6000U);
  // Details before code and message.
  Bytes late;
  put_len(late, 3, retry_detail(3));
  put_int(late, 1, 14);
  put_len(late, 2, text("unavailable"));
  EXPECT_EQ(decode(late), 3000U);
}

TEST(RetryInfoProto, UnknownFieldsAreSkippedAtEveryLevel) {
  Bytes d = duration(2, 0);
  put_int(d, 9, 1);
  Bytes info = retry_info(d);
  put_len(info, 5, text("future"));
  Bytes detail = any(kRetryInfoUrl, info);
  put_tag(detail, 7, 5);  // fixed32
  detail.insert(detail.end(), {1, 2, 3, 4});
  Bytes body = status({detail});
  put_tag(body, 99, 1);  // fixed64
  body.insert(body.end(), 8, 0);
  EXPECT_EQ(decode(body), 2000U);
}

TEST(RetryInfoProto, ManyDetailsDecodeInConstantSpace) {
  Bytes body = status({});
  for (int i = 0; i < 5000; ++i) put_len(body, 3, other_detail(100));
  put_len(body, 3, retry_detail(11));
  EXPECT_EQ(decode(body), 11000U);

  Bytes retries = status({});
  for (int i = 0; i < 5000; ++i) put_len(retries, 3, retry_detail(i + 1));
  EXPECT_EQ(decode(retries), 1000U);
}

TEST(RetryInfoProto, OversizedFieldsAreHandled) {
  // A 100 KiB message is skipped unread.
  EXPECT_EQ(decode(status({retry_detail(12)}, std::string(100'000, 'm'))), 12000U);
  // A 10 KiB type URL is compared as it streams: it counts when it ends in the type name.
  const Bytes lookalike = retry_info(duration(13, 0));
  EXPECT_EQ(decode(status({any(std::string(10'000, 'h') + "/google.rpc.RetryInfo", lookalike)})),
            13000U);
  EXPECT_EQ(decode(status({any(std::string(10'000, 'h'), lookalike), retry_detail(14)})), 14000U);
  // A RetryInfo larger than kMaxRetryInfoBytes (padded with an unknown field) is ignored;
  // one exactly that large is read.
  Bytes padded = retry_info(duration(15, 0));
  put_len(padded, 5, Bytes(kMaxRetryInfoBytes, 'p'));
  EXPECT_EQ(decode(status({any(kRetryInfoUrl, padded)})), kNone);
  Bytes exact = retry_info(duration(15, 0));
  put_len(exact, 5, Bytes(kMaxRetryInfoBytes - exact.size() - 2, 'p'));
  ASSERT_EQ(exact.size(), kMaxRetryInfoBytes);
  EXPECT_EQ(decode(status({any(kRetryInfoUrl, exact)})), 15000U);
  // A large detail of another type before the RetryInfo does not get in the way.
  EXPECT_EQ(decode(status({other_detail(1'000'000), retry_detail(16)})), 16000U);
}

TEST(RetryInfoProto, EveryTruncationIsSafe) {
  const Bytes body = status({other_detail(70), retry_detail(30, 1)});
  for (std::size_t n = 0; n < body.size(); ++n) {
    // A prefix is either not a message or a Status that ends before the RetryInfo.
    EXPECT_EQ(decode(body, n), kNone) << "length " << n;
  }
  EXPECT_EQ(decode(body), 30001U);
}

TEST(RetryInfoProto, MalformedWireDataIsRejected) {
  const Bytes good = status({retry_detail(30)});
  Bytes overlong_length = good;
  overlong_length.insert(overlong_length.end(), {0x1a, 0x7f, 0x0a});  // Claims 127 bytes.
  EXPECT_EQ(decode(overlong_length), kNone);
  Bytes bad_wire_type = good;
  bad_wire_type.push_back(0x0f);  // Field 1, wire type 7.
  EXPECT_EQ(decode(bad_wire_type), kNone);
  Bytes field_zero = good;
  field_zero.insert(field_zero.end(), {0x00, 0x00});
  EXPECT_EQ(decode(field_zero), kNone);
  Bytes endless_varint = good;
  endless_varint.push_back(0x08);
  endless_varint.insert(endless_varint.end(), 11, 0xff);
  endless_varint.push_back(0x01);
  EXPECT_EQ(decode(endless_varint), kNone);
  // Garbage inside a detail other than RetryInfo fails the whole Status.
  EXPECT_EQ(decode(status({any(kErrorInfoUrl, Bytes{}), Bytes{0xff}, retry_detail(30)})), kNone);
  // The JSON form is not protobuf.
  EXPECT_EQ(decode(text(R"({"error":{"code":429}})")), kNone);
}

// Corrupted and random bodies: each decodes to nothing or to a delay within the documented
// bound (never a wild value), and a one-byte change that leaves the RetryInfo intact still
// reads 30.005 s or nothing. ASan and UBSan builds run the same loop for memory errors.
TEST(RetryInfoProto, CorruptedBodiesGiveNothingOrABoundedDelay) {
  constexpr std::uint64_t kMaxMs = static_cast<std::uint64_t>(kMaxDurationSeconds) * 1000 + 999;
  const Bytes body = status({other_detail(30), retry_detail(30, 5)});
  std::size_t decoded = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    for (int v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      Bytes mutated = body;
      mutated[i] = static_cast<std::uint8_t>(v);
      const std::optional<std::uint64_t> ms = decode(mutated);
      if (ms) {
        ++decoded;
        EXPECT_LE(*ms, kMaxMs) << "byte " << i << " = " << v;
      }
    }
  }
  EXPECT_GT(decoded, 0U);  // Changes outside the RetryInfo leave it readable.
  std::mt19937 rng(12345);
  for (int round = 0; round < 20'000; ++round) {
    Bytes random(rng() % 96);
    for (auto& b : random) b = static_cast<std::uint8_t>(rng());
    const std::optional<std::uint64_t> ms = decode(random);
    if (ms) {
      EXPECT_LE(*ms, kMaxMs) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace stepback::https

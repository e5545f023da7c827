// The TLS session record (https/tls/tls_session_record.hpp): the frame round trip, each reason a
// record is refused (a cut at every length, a flipped bit at every byte, too big, no magic,
// another version, trailing bytes, another host or port, another verification, expiry and a
// clock before the save by a fake wall clock), the verification fingerprint's inputs, and
// what save and load do without a session or with session bytes mbedTLS refuses. A real
// session's round trip and resumption is tests/integration/tls_session_record_test.py's, against
// nginx.
#include "stepback/https/tls/tls_session_record.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "stepback/https/tls/pins.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/trust_store.hpp"

namespace stepback::https {
namespace {

using E = TlsSessionRecordError;

// Two self-signed certificates, to change the trust anchors with.
constexpr char kCaA[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBmzCCAUGgAwIBAgIUcW36gGcc7jdXr02y3If0GLH1JXQwCgYIKoZIzj0EAwIw\n"
    "IjEgMB4GA1UEAwwXc3RlcGJhY2sgc2Vzc2lvbiB0ZXN0IEEwIBcNMjYxMTI5MjAy\n"
    "NTQwWhgPMjEyNjExMDUyMDI1NDBaMCIxIDAeBgNVBAMMF3N0ZXBiYWNrIHNlc3Np\n"
    "b24gdGVzdCBBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEXNpc/Yq6WYAMy4Ko\n"
    "wu3cGSnrysBw8Cc9z0qBd84kjcAKBzLi2DN9jKLieyvH751IgOtfWkmn02rT3En+\n"
    "q9bNVaNTMFEwHQYDVR0OBBYEFCuLl5+FRr5VJeNVIEN5qT/y5y5DMB8GA1UdIwQY\n"
    "MBaAFCuLl5+FRr5VJeNVIEN5qT/y5y5DMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZI\n"
    "zj0EAwIDSAAwRQIgVG+rdzGxSjaSlgPOpZUWTqeu0q+CmAguWrRNvkW4woECIQDY\n"
    "JvzvSYlh0a20wBPChbVjLoWxmBCucQeLHEHWZJQzgA==\n"
    "-----END CERTIFICATE-----\n";
constexpr char kCaB[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBmzCCAUGgAwIBAgIUDkITA6mUvpmEXLZL2iSSTyFTX2cwCgYIKoZIzj0EAwIw\n"
    "IjEgMB4GA1UEAwwXc3RlcGJhY2sgc2Vzc2lvbiB0ZXN0IEIwIBcNMjYxMTI5MjAy\n"
    "NTQwWhgPMjEyNjExMDUyMDI1NDBaMCIxIDAeBgNVBAMMF3N0ZXBiYWNrIHNlc3Np\n"
    "b24gdGVzdCBCMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQAm4abHPdVFt/vSK\n"
    "QnH8T61ZBm9unS5oe7Q8WEctIixQyVrXMHcTl25wPBxGCPnHrI3GDZiJ/ATUM2LQ\n"
    "+ADTcKNTMFEwHQYDVR0OBBYEFNegNN9II2TzNlE/6eSHIWUWcsoAMB8GA1UdIwQY\n"
    "MBaAFNegNN9II2TzNlE/6eSHIWUWcsoAMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZI\n"
    "zj0EAwIDSAAwRQIhAMppR8v6uhFCqupz/pPvHlXkVMbxLifzKMeUOJSwgvWMAiAq\n"
    "nppUjtoPaqYds5EbOnk3wNGoRWAMIau2HvqZiftNrg==\n"
    "-----END CERTIFICATE-----\n";

constexpr Millis kSavedAt(1'700'000'000'000);

struct Sample {
  std::uint8_t session[300] = {};
  TlsSessionRecordFields fields;
  Sample() {
    for (std::size_t i = 0; i < sizeof session; ++i) session[i] = static_cast<std::uint8_t>(i * 7);
    fields.host = "example.com";
    fields.host_size = 11;
    fields.port = 443;
    for (int i = 0; i < 32; ++i) fields.verification[i] = static_cast<std::uint8_t>(i + 1);
    fields.saved_at = kSavedAt;
    fields.issued_at = kSavedAt - Millis(5000);
    fields.lifetime_seconds = 7200;
    fields.session = ConstBytes{session, sizeof session};
  }
};

std::vector<std::uint8_t> encode(const TlsSessionRecordFields& fields) {
  std::vector<std::uint8_t> out(kTlsSessionRecordMaxBytes);
  std::size_t written = 0;
  EXPECT_EQ(encode_tls_session_record(fields, MutableBytes{out.data(), out.size()}, &written),
            E::kNone);
  out.resize(written);
  return out;
}

E decode(const std::vector<std::uint8_t>& record) {
  TlsSessionRecordFields fields;
  return decode_tls_session_record(ConstBytes{record.data(), record.size()}, &fields);
}

TEST(TlsSessionRecordTest, AFramedRecordReadsBackAsWritten) {
  const Sample sample;
  const std::vector<std::uint8_t> record = encode(sample.fields);
  TlsSessionRecordFields read;
  ASSERT_EQ(decode_tls_session_record(ConstBytes{record.data(), record.size()}, &read), E::kNone);
  EXPECT_EQ(std::string(read.host, read.host_size), "example.com");
  EXPECT_EQ(read.port, 443);
  EXPECT_EQ(std::memcmp(read.verification, sample.fields.verification, 32), 0);
  EXPECT_EQ(read.saved_at.count(), kSavedAt.count());
  EXPECT_EQ(read.issued_at.count(), kSavedAt.count() - 5000);
  EXPECT_EQ(read.lifetime_seconds, 7200u);
  ASSERT_EQ(read.session.size, sizeof sample.session);
  EXPECT_EQ(std::memcmp(read.session.data, sample.session, sizeof sample.session), 0);
  EXPECT_EQ(check_tls_session_record(read, "example.com", 443, sample.fields.verification,
                                     kSavedAt + Millis(1000)),
            E::kNone);
}

TEST(TlsSessionRecordTest, EveryCutIsRefused) {
  const std::vector<std::uint8_t> record = encode(Sample().fields);
  for (std::size_t size = 0; size < record.size(); ++size) {
    const std::vector<std::uint8_t> cut(record.data(), record.data() + size);
    EXPECT_EQ(decode(cut), E::kTruncated) << "cut to " << size << " bytes";
  }
}

TEST(TlsSessionRecordTest, AFlippedBitAnywhereIsRefused) {
  const std::vector<std::uint8_t> record = encode(Sample().fields);
  for (std::size_t at = 0; at < record.size(); ++at) {
    std::vector<std::uint8_t> damaged = record;
    damaged[at] ^= 0x10;
    EXPECT_NE(decode(damaged), E::kNone) << "flipped at byte " << at;
  }
  // Past the magic, version and length, the integrity check is what catches it.
  std::vector<std::uint8_t> damaged = record;
  damaged[record.size() / 2] ^= 0x01;
  EXPECT_EQ(decode(damaged), E::kCorrupt);
}

TEST(TlsSessionRecordTest, TooBigNoMagicAnotherVersionAndTrailingBytesAreRefused) {
  const std::vector<std::uint8_t> record = encode(Sample().fields);
  std::vector<std::uint8_t> big = record;
  big.resize(kTlsSessionRecordMaxBytes + 1);
  EXPECT_EQ(decode(big), E::kTooBig);
  std::vector<std::uint8_t> other = record;
  other[0] = 'X';
  EXPECT_EQ(decode(other), E::kNotARecord);
  std::vector<std::uint8_t> version = record;
  version[5] = static_cast<std::uint8_t>(kTlsSessionRecordVersion + 1);
  EXPECT_EQ(decode(version), E::kUnknownVersion);
  std::vector<std::uint8_t> trailing = record;
  trailing.push_back(0);
  EXPECT_EQ(decode(trailing), E::kCorrupt);
  EXPECT_STRNE(describe(E::kCorrupt), describe(E::kTruncated));
}

TEST(TlsSessionRecordTest, AnotherHostPortOrVerificationIsRefused) {
  const Sample sample;
  const std::uint8_t(&v)[32] = sample.fields.verification;
  const Millis now = kSavedAt + Millis(1000);
  EXPECT_EQ(check_tls_session_record(sample.fields, "example.org", 443, v, now), E::kOtherServer);
  EXPECT_EQ(check_tls_session_record(sample.fields, "example.co", 443, v, now), E::kOtherServer);
  EXPECT_EQ(check_tls_session_record(sample.fields, "example.com", 8443, v, now), E::kOtherServer);
  std::uint8_t other[32];
  std::memcpy(other, v, 32);
  other[31] ^= 1;
  EXPECT_EQ(check_tls_session_record(sample.fields, "example.com", 443, other, now),
            E::kOtherVerification);
}

TEST(TlsSessionRecordTest, TheWallClockEndsTheLifetimeAndRefusesAClockBeforeTheSave) {
  const Sample sample;
  const std::uint8_t(&v)[32] = sample.fields.verification;
  const Millis end = sample.fields.issued_at + Millis::seconds(7200);
  EXPECT_EQ(check_tls_session_record(sample.fields, "example.com", 443, v, end - Millis(1)),
            E::kNone);
  EXPECT_EQ(check_tls_session_record(sample.fields, "example.com", 443, v, end), E::kExpired);
  // A clock a little behind the save (corrected backwards) is within the margin; more is not.
  const Millis before = kSavedAt - kTlsSessionClockMargin;
  EXPECT_EQ(check_tls_session_record(sample.fields, "example.com", 443, v, before), E::kNone);
  EXPECT_EQ(check_tls_session_record(sample.fields, "example.com", 443, v, before - Millis(1)),
            E::kClockBeforeSave);
}

TEST(TlsSessionRecordTest, EncodingRefusesABadHostAndASmallBuffer) {
  Sample sample;
  std::uint8_t out[64];
  std::size_t written = 1;
  EXPECT_EQ(encode_tls_session_record(sample.fields, MutableBytes{out, sizeof out}, &written),
            E::kBufferTooSmall);
  EXPECT_EQ(written, 0u);
  sample.fields.host_size = 0;
  EXPECT_EQ(encode_tls_session_record(sample.fields, MutableBytes{out, sizeof out}, &written),
            E::kBadHost);
}

class FingerprintTest : public ::testing::Test {
 protected:
  static std::vector<std::uint8_t> of(const TlsClientConfig& config) {
    std::uint8_t out[32];
    config.verification_fingerprint(out);
    return std::vector<std::uint8_t>(out, out + 32);
  }
};

TEST_F(FingerprintTest, TheSameAnchorsPinsAndVersionsGiveTheSameFingerprint) {
  TlsClientConfig a;
  TlsClientConfig b;
  ASSERT_EQ(a.add_ca_pem(kCaA, sizeof kCaA), Status::kOk);
  ASSERT_EQ(b.add_ca_pem(kCaA, sizeof kCaA), Status::kOk);
  EXPECT_EQ(of(a), of(b));
}

TEST_F(FingerprintTest, AnotherAnchorPinOrVersionChangesIt) {
  TlsClientConfig config;
  ASSERT_EQ(config.add_ca_pem(kCaA, sizeof kCaA), Status::kOk);
  const std::vector<std::uint8_t> base = of(config);
  TlsClientConfig other_anchor;
  ASSERT_EQ(other_anchor.add_ca_pem(kCaB, sizeof kCaB), Status::kOk);
  EXPECT_NE(of(other_anchor), base);
  TlsClientConfig more_anchors;
  ASSERT_EQ(more_anchors.add_ca_pem(kCaA, sizeof kCaA), Status::kOk);
  ASSERT_EQ(more_anchors.add_ca_pem(kCaB, sizeof kCaB), Status::kOk);
  EXPECT_NE(of(more_anchors), base);

  PublicKeyPin pin;
  pin.sha256[0] = 1;
  config.set_public_key_pins(&pin, 1);
  const std::vector<std::uint8_t> pinned = of(config);
  EXPECT_NE(pinned, base);
  pin.sha256[0] = 2;
  EXPECT_NE(of(config), pinned);
  config.set_public_key_pins(nullptr, 0);
  EXPECT_EQ(of(config), base);

  config.set_versions(TlsVersion::kTls13, TlsVersion::kTls13);
  EXPECT_NE(of(config), base);
}

TEST_F(FingerprintTest, ATrustStoreCountsByItsSources) {
  static TrustStore a;
  static TrustStore b;
  ASSERT_EQ(a.add_memory(ConstBytes{reinterpret_cast<const std::uint8_t*>(kCaA), sizeof kCaA}),
            Status::kOk);
  ASSERT_EQ(b.add_memory(ConstBytes{reinterpret_cast<const std::uint8_t*>(kCaB), sizeof kCaB}),
            Status::kOk);
  TlsClientConfig with_a;
  TlsClientConfig with_b;
  TlsClientConfig listed;
  ASSERT_EQ(with_a.use_trust_store(a), Status::kOk);
  ASSERT_EQ(with_b.use_trust_store(b), Status::kOk);
  ASSERT_EQ(listed.add_ca_pem(kCaA, sizeof kCaA), Status::kOk);
  EXPECT_NE(of(with_a), of(with_b));
  EXPECT_NE(of(with_a), of(listed));
}

TEST(TlsSessionRecordTest, SaveNeedsASessionAndLoadRefusesBytesMbedTlsCannotRead) {
  TlsClientConfig config;
  ASSERT_EQ(config.add_ca_pem(kCaA, sizeof kCaA), Status::kOk);
  TlsSession empty;
  std::vector<std::uint8_t> out(kTlsSessionRecordMaxBytes);
  std::size_t written = 0;
  EXPECT_EQ(save_tls_session_record(empty, config, "example.com", 443, kSavedAt,
                                    MutableBytes{out.data(), out.size()}, &written),
            E::kNoSession);

  // A frame that passes every check around session bytes mbedTLS does not take.
  Sample sample;
  config.verification_fingerprint(sample.fields.verification);
  const std::vector<std::uint8_t> record = encode(sample.fields);
  TlsSession session;
  EXPECT_EQ(load_tls_session_record(ConstBytes{record.data(), record.size()}, config, "example.com",
                                    443, kSavedAt, &session),
            E::kUnusable);
  EXPECT_FALSE(session.valid());
  EXPECT_EQ(load_tls_session_record(ConstBytes{record.data(), record.size()}, config, "example.com",
                                    444, kSavedAt, &session),
            E::kOtherServer);
  TlsClientConfig other;
  ASSERT_EQ(other.add_ca_pem(kCaB, sizeof kCaB), Status::kOk);
  EXPECT_EQ(load_tls_session_record(ConstBytes{record.data(), record.size()}, other, "example.com",
                                    443, kSavedAt, &session),
            E::kOtherVerification);
}

}  // namespace
}  // namespace stepback::https

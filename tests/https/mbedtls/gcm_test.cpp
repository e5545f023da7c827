// The pipelined AES-GCM behind mbedTLS's GCM API (https/mbedtls/gcm/): the GCM specification's test
// cases, NIST's CAVP vectors (as shipped in mbedTLS's own test suite), and random differential
// runs on every length 0..4096 against OpenSSL's EVP (host builds) and against mbedTLS's own
// GCM, through the one-shot and the streaming API with random split points; each on the
// accelerated engine and on the forced software fallback.
#include <gtest/gtest.h>
#include <mbedtls/aes.h>
#include <mbedtls/gcm.h>
#include <mbedtls/ssl.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "stepback/gcm/gcm.hpp"
#include "stepback/https/tls/tls.hpp"

#if defined(STEPBACK_GCM_TEST_OPENSSL)
#include <openssl/evp.h>
#endif

namespace {

using Bytes = std::vector<unsigned char>;
using stepback::gcm::Engine;

Bytes hex(const std::string& s) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < s.size(); i += 2) {
    out.push_back(static_cast<unsigned char>(std::stoul(s.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// splitmix64: a seeded, reproducible source for keys, texts and split points.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  Bytes bytes(std::size_t n) {
    Bytes b(n);
    for (auto& c : b) c = static_cast<unsigned char>(next());
    return b;
  }
};

struct Sealed {
  Bytes text;
  Bytes tag;
};

// One key, IV and AAD, run through the one-shot API.
Sealed crypt_one_shot(int mode, const Bytes& key, const Bytes& iv, const Bytes& aad,
                      const Bytes& in, std::size_t tag_len) {
  mbedtls_gcm_context ctx;
  mbedtls_gcm_init(&ctx);
  Sealed out{Bytes(in.size()), Bytes(tag_len)};
  EXPECT_EQ(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(),
                               static_cast<unsigned>(key.size() * 8)),
            0);
  EXPECT_EQ(
      mbedtls_gcm_crypt_and_tag(&ctx, mode, in.size(), iv.data(), iv.size(), aad.data(), aad.size(),
                                in.data(), out.text.data(), tag_len, out.tag.data()),
      0);
  mbedtls_gcm_free(&ctx);
  return out;
}

// The same through starts / update_ad / update / finish, AAD and text cut at random points.
Sealed crypt_streaming(int mode, const Bytes& key, const Bytes& iv, const Bytes& aad,
                       const Bytes& in, std::size_t tag_len, Rng& rng) {
  mbedtls_gcm_context ctx;
  mbedtls_gcm_init(&ctx);
  Sealed out{Bytes(in.size()), Bytes(tag_len)};
  EXPECT_EQ(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(),
                               static_cast<unsigned>(key.size() * 8)),
            0);
  EXPECT_EQ(mbedtls_gcm_starts(&ctx, mode, iv.data(), iv.size()), 0);
  std::size_t done = 0;
  while (done < aad.size()) {
    const std::size_t n = 1 + rng.below(aad.size() - done);
    EXPECT_EQ(mbedtls_gcm_update_ad(&ctx, aad.data() + done, n), 0);
    done += n;
  }
  done = 0;
  while (done < in.size()) {
    // Short pieces as often as long ones: partial blocks on both sides of the 8-block loop.
    const std::size_t left = in.size() - done;
    const std::size_t n = 1 + (rng.next() & 1 ? rng.below(left < 40 ? left : 40) : rng.below(left));
    std::size_t olen = 0;
    EXPECT_EQ(mbedtls_gcm_update(&ctx, in.data() + done, n, out.text.data() + done, n, &olen), 0);
    EXPECT_EQ(olen, n);
    done += n;
  }
  std::size_t olen = 0;
  EXPECT_EQ(mbedtls_gcm_finish(&ctx, nullptr, 0, &olen, out.tag.data(), tag_len), 0);
  EXPECT_EQ(olen, 0u);
  mbedtls_gcm_free(&ctx);
  return out;
}

int auth_decrypt(const Bytes& key, const Bytes& iv, const Bytes& aad, const Bytes& tag,
                 const Bytes& ct, Bytes* pt) {
  mbedtls_gcm_context ctx;
  mbedtls_gcm_init(&ctx);
  pt->assign(ct.size(), 0xa5);
  int ret = mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(),
                               static_cast<unsigned>(key.size() * 8));
  if (ret == 0) {
    ret = mbedtls_gcm_auth_decrypt(&ctx, ct.size(), iv.data(), iv.size(), aad.data(), aad.size(),
                                   tag.data(), tag.size(), ct.data(), pt->data());
  }
  mbedtls_gcm_free(&ctx);
  return ret;
}

#if defined(STEPBACK_GCM_TEST_OPENSSL)
// OpenSSL's AES-GCM: ciphertext and full 16-byte tag.
Sealed openssl_seal(const Bytes& key, const Bytes& iv, const Bytes& aad, const Bytes& pt) {
  Sealed out{Bytes(pt.size() + 16), Bytes(16)};
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
  int len = 0;
  int total = 0;
  const unsigned char dummy = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(c, cipher, nullptr, nullptr, nullptr), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr),
            1);
  EXPECT_EQ(EVP_EncryptInit_ex(c, nullptr, nullptr, key.data(), iv.data()), 1);
  if (!aad.empty()) {
    EXPECT_EQ(EVP_EncryptUpdate(c, nullptr, &len, aad.data(), static_cast<int>(aad.size())), 1);
  }
  EXPECT_EQ(EVP_EncryptUpdate(c, out.text.data(), &len, pt.empty() ? &dummy : pt.data(),
                              static_cast<int>(pt.size())),
            1);
  total = len;
  EXPECT_EQ(EVP_EncryptFinal_ex(c, out.text.data() + total, &len), 1);
  total += len;
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, out.tag.data()), 1);
  EVP_CIPHER_CTX_free(c);
  out.text.resize(static_cast<std::size_t>(total));
  return out;
}
#endif

// Runs each test once on the engine this CPU offers and once forced onto mbedTLS's software.
class Gcm : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { stepback::gcm::force_software(GetParam()); }
  void TearDown() override { stepback::gcm::force_software(false); }
};

INSTANTIATE_TEST_SUITE_P(Engines, Gcm, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return std::string(param.param ? "ForcedSoftware" : "Detected");
                         });

// McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)", revised submission, test
// cases 1-6 (AES-128) and 13-18 (AES-256).
struct SpecCase {
  const char* key;
  const char* iv;
  const char* aad;
  const char* pt;
  const char* ct;
  const char* tag;
};

const char* const kPt64 =
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6"
    "b525b16aedf5aa0de657ba637b391aafd255";
const char* const kPt60 =
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6"
    "b525b16aedf5aa0de657ba637b39";
const char* const kAad = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
const char* const kIv60 =
    "9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728c3c0c95156809539fcf0e2429a6b"
    "525416aedbf5a0de6a57a637b39b";
const char* const kK128 = "feffe9928665731c6d6a8f9467308308";
const char* const kK256 = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308";

const SpecCase kSpecCases[] = {
    {"00000000000000000000000000000000", "000000000000000000000000", "", "", "",
     "58e2fccefa7e3061367f1d57a4e7455a"},
    {"00000000000000000000000000000000", "000000000000000000000000", "",
     "00000000000000000000000000000000", "0388dace60b6a392f328c2b971b2fe78",
     "ab6e47d42cec13bdf53a67b21257bddf"},
    {kK128, "cafebabefacedbaddecaf888", "", kPt64,
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84"
     "aa051ba30b396a0aac973d58e091473f5985",
     "4d5c2af327cd64a62cf35abd2ba6fab4"},
    {kK128, "cafebabefacedbaddecaf888", kAad, kPt60,
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84"
     "aa051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
    {kK128, "cafebabefacedbad", kAad, kPt60,
     "61353b4c2806934a777ff51fa22a4755699b2a714fcdc6f83766e5f97b6c742373806900e49f24b22b097544d489"
     "6b424989b5e1ebac0f07c23f4598",
     "3612d2e79e3b0785561be14aaca2fccb"},
    {kK128, kIv60, kAad, kPt60,
     "8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca701e4a9a4fba43c90ccdcb281d48c"
     "7c6fd62875d2aca417034c34aee5",
     "619cc5aefffe0bfa462af43c1699d050"},
    {"0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
     "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
    {"0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
     "", "00000000000000000000000000000000", "cea7403d4d606b6e074ec5d3baf39d18",
     "d0d1c8a799996bf0265b98b5d48ab919"},
    {kK256, "cafebabefacedbaddecaf888", "", kPt64,
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b105682"
     "8838c5f61e6393ba7a0abcc9f662898015ad",
     "b094dac5d93471bdec1a502270e3cc6c"},
    {kK256, "cafebabefacedbaddecaf888", kAad, kPt60,
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b105682"
     "8838c5f61e6393ba7a0abcc9f662",
     "76fc6ece0f4e1768cddf8853bb2d551b"},
    {kK256, "cafebabefacedbad", kAad, kPt60,
     "c3762df1ca787d32ae47c13bf19844cbaf1ae14d0b976afac52ff7d79bba9de0feb582d33934a4f0954cc2363bc7"
     "3f7862ac430e64abe499f47c9b1f",
     "3a337dbf46a792c45e454913fe2ea8f2"},
    {kK256, kIv60, kAad, kPt60,
     "5a8def2f0c9e53f1f75d7853659e2a20eeb2b22aafde6419a058ab4f6f746bf40fc0c3b780f244452da3ebf1c5d8"
     "2cdea2418997200ef82e44ae7e3f",
     "a44a8266ee1c8eb0c8b5d4cf5ae9f19a"},
};

TEST_P(Gcm, SpecificationTestCases) {
  Rng rng{1};
  for (const SpecCase& c : kSpecCases) {
    SCOPED_TRACE(std::string("key ") + c.key + " iv " + c.iv);
    const Bytes key = hex(c.key), iv = hex(c.iv), aad = hex(c.aad), pt = hex(c.pt);
    const Sealed sealed = crypt_one_shot(MBEDTLS_GCM_ENCRYPT, key, iv, aad, pt, 16);
    EXPECT_EQ(sealed.text, hex(c.ct));
    EXPECT_EQ(sealed.tag, hex(c.tag));
    const Sealed streamed = crypt_streaming(MBEDTLS_GCM_ENCRYPT, key, iv, aad, pt, 16, rng);
    EXPECT_EQ(streamed.text, hex(c.ct));
    EXPECT_EQ(streamed.tag, hex(c.tag));
    Bytes opened;
    EXPECT_EQ(auth_decrypt(key, iv, aad, hex(c.tag), hex(c.ct), &opened), 0);
    EXPECT_EQ(opened, pt);
  }
}

// NIST CAVP gcmEncryptExtIV / gcmDecrypt vectors in mbedTLS's test-suite format:
//   gcm_encrypt_and_tag:ID:"key":"pt":"iv":"aad":"ct":tag_bits:"tag":0
//   gcm_decrypt_and_verify:ID:"key":"ct":"iv":"aad":tag_bits:"tag":"FAIL" or "":"pt":0
std::vector<std::string> quoted_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = line.find(':');
  while (start != std::string::npos) {
    const std::size_t end = line.find(':', start + 1);
    std::string f =
        line.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
    if (f.size() >= 2 && f.front() == '"') f = f.substr(1, f.size() - 2);
    fields.push_back(f);
    start = end;
  }
  return fields;
}

TEST_P(Gcm, NistCavpVectorsFromMbedtlsTestSuite) {
  std::size_t encrypts = 0, decrypts = 0, rejects = 0;
  Rng rng{2};
  for (const char* name :
       {"aes128_en", "aes128_de", "aes192_en", "aes192_de", "aes256_en", "aes256_de"}) {
    const std::string path =
        std::string(STEPBACK_MBEDTLS_TEST_SUITES) + "/test_suite_gcm." + name + ".data";
    std::ifstream file(path);
    ASSERT_TRUE(file) << path;
    std::string line;
    while (std::getline(file, line)) {
      if (line.rfind("gcm_encrypt_and_tag:MBEDTLS_CIPHER_ID_AES:", 0) == 0) {
        const auto f = quoted_fields(line);
        ASSERT_EQ(f.size(), 9u) << line;
        const Bytes key = hex(f[1]), pt = hex(f[2]), iv = hex(f[3]), aad = hex(f[4]);
        const auto tag_len = static_cast<std::size_t>(std::stoi(f[6]) / 8);
        const Sealed s = crypt_streaming(MBEDTLS_GCM_ENCRYPT, key, iv, aad, pt, tag_len, rng);
        EXPECT_EQ(s.text, hex(f[5])) << line;
        EXPECT_EQ(s.tag, hex(f[7])) << line;
        ++encrypts;
      } else if (line.rfind("gcm_decrypt_and_verify:MBEDTLS_CIPHER_ID_AES:", 0) == 0) {
        const auto f = quoted_fields(line);
        ASSERT_EQ(f.size(), 10u) << line;
        const Bytes key = hex(f[1]), ct = hex(f[2]), iv = hex(f[3]), aad = hex(f[4]);
        const Bytes tag = hex(f[6]);
        Bytes pt;
        const int ret = auth_decrypt(key, iv, aad, tag, ct, &pt);
        if (f[7] == "FAIL") {
          EXPECT_EQ(ret, MBEDTLS_ERR_GCM_AUTH_FAILED) << line;
          EXPECT_EQ(pt, Bytes(ct.size(), 0)) << "a rejected text must not be left readable";
          ++rejects;
        } else {
          EXPECT_EQ(ret, 0) << line;
          EXPECT_EQ(pt, hex(f[8])) << line;
        }
        ++decrypts;
      }
    }
  }
  // The six files hold 504 encryptions and 504 decryptions, 246 to reject (mbedTLS 3.6.6); a
  // parse that finds fewer has gone wrong.
  EXPECT_GE(encrypts, 504u);
  EXPECT_GE(decrypts, 504u);
  EXPECT_GE(rejects, 246u);
}

// Every length 0..4096, keys of 128 and 256 bits, 12-byte and other IVs, random AAD, random
// split points, every tag length 4..16; compared with OpenSSL (host builds) and with mbedTLS's
// own GCM, decrypted back, and with a flipped tag, text or AAD bit rejected.
TEST_P(Gcm, DifferentialEveryLengthTo4KiB) {
  Rng rng{3};
  for (std::size_t len = 0; len <= 4096; ++len) {
    const Bytes key = rng.bytes(len % 2 == 0 ? 16 : 32);
    const Bytes iv = rng.bytes(len % 7 == 3 ? 1 + rng.below(70) : 12);
    const Bytes aad = rng.bytes(rng.below(4) == 0 ? rng.below(100) : 13);
    const Bytes pt = rng.bytes(len);
    const std::size_t tag_len = 4 + len % 13;
    SCOPED_TRACE("length " + std::to_string(len) + " key " + std::to_string(key.size()) + " iv " +
                 std::to_string(iv.size()) + " aad " + std::to_string(aad.size()));

    const Sealed one = crypt_one_shot(MBEDTLS_GCM_ENCRYPT, key, iv, aad, pt, tag_len);
    const Sealed streamed = crypt_streaming(MBEDTLS_GCM_ENCRYPT, key, iv, aad, pt, tag_len, rng);
    ASSERT_EQ(streamed.text, one.text);
    ASSERT_EQ(streamed.tag, one.tag);

#if defined(STEPBACK_GCM_TEST_OPENSSL)
    const Sealed ref = openssl_seal(key, iv, aad, pt);
    ASSERT_EQ(one.text, ref.text);
    ASSERT_EQ(one.tag, Bytes(ref.tag.begin(), ref.tag.begin() + static_cast<long>(tag_len)));
#endif
    {
      // mbedTLS's own GCM, whichever engine this run uses.
      const bool forced = GetParam();
      stepback::gcm::force_software(true);
      const Sealed soft = crypt_one_shot(MBEDTLS_GCM_ENCRYPT, key, iv, aad, pt, tag_len);
      stepback::gcm::force_software(forced);
      ASSERT_EQ(one.text, soft.text);
      ASSERT_EQ(one.tag, soft.tag);
    }

    const Sealed opened =
        crypt_streaming(MBEDTLS_GCM_DECRYPT, key, iv, aad, one.text, tag_len, rng);
    ASSERT_EQ(opened.text, pt);
    ASSERT_EQ(opened.tag, one.tag);
    Bytes out;
    ASSERT_EQ(auth_decrypt(key, iv, aad, one.tag, one.text, &out), 0);
    ASSERT_EQ(out, pt);

    Bytes bad_tag = one.tag;
    bad_tag[rng.below(tag_len)] ^= static_cast<unsigned char>(1u << rng.below(8));
    EXPECT_EQ(auth_decrypt(key, iv, aad, bad_tag, one.text, &out), MBEDTLS_ERR_GCM_AUTH_FAILED);
    EXPECT_EQ(out, Bytes(len, 0));
    if (len > 0) {
      Bytes bad_ct = one.text;
      bad_ct[rng.below(len)] ^= static_cast<unsigned char>(1u << rng.below(8));
      EXPECT_EQ(auth_decrypt(key, iv, aad, one.tag, bad_ct, &out), MBEDTLS_ERR_GCM_AUTH_FAILED);
    }
    if (!aad.empty()) {
      Bytes bad_aad = aad;
      bad_aad[rng.below(aad.size())] ^= 0x80;
      EXPECT_EQ(auth_decrypt(key, iv, bad_aad, one.tag, one.text, &out),
                MBEDTLS_ERR_GCM_AUTH_FAILED);
    }
  }
}

// Unaligned buffers, in-place operation and output below input (allowed overlap), as the TLS
// record layer uses them.
TEST_P(Gcm, UnalignedInPlaceAndOverlappingBuffers) {
  Rng rng{4};
  for (std::size_t len : {1u, 15u, 16u, 17u, 127u, 128u, 129u, 255u, 1000u, 16384u}) {
    for (std::size_t shift = 0; shift < 16; shift += 5) {
      const Bytes key = rng.bytes(shift % 2 == 0 ? 16 : 32);
      const Bytes iv = rng.bytes(12);
      const Bytes aad = rng.bytes(13);
      const Bytes pt = rng.bytes(len);
      const Sealed ref = crypt_one_shot(MBEDTLS_GCM_ENCRYPT, key, iv, aad, pt, 16);

      mbedtls_gcm_context ctx;
      mbedtls_gcm_init(&ctx);
      ASSERT_EQ(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(),
                                   static_cast<unsigned>(key.size() * 8)),
                0);
      Bytes buf(len + 64);
      unsigned char tag[16];
      // In place, at an odd address.
      std::memcpy(buf.data() + 1 + shift, pt.data(), len);
      ASSERT_EQ(
          mbedtls_gcm_crypt_and_tag(&ctx, MBEDTLS_GCM_ENCRYPT, len, iv.data(), 12, aad.data(), 13,
                                    buf.data() + 1 + shift, buf.data() + 1 + shift, 16, tag),
          0);
      EXPECT_EQ(Bytes(buf.begin() + 1 + static_cast<long>(shift),
                      buf.begin() + 1 + static_cast<long>(shift + len)),
                ref.text);
      EXPECT_EQ(Bytes(tag, tag + 16), ref.tag);
      // Output 1..16 bytes below the input, overlapping it.
      std::memcpy(buf.data() + 20, ref.text.data(), len);
      ASSERT_EQ(mbedtls_gcm_auth_decrypt(&ctx, len, iv.data(), 12, aad.data(), 13, ref.tag.data(),
                                         16, buf.data() + 20, buf.data() + 19 - shift),
                0);
      EXPECT_EQ(Bytes(buf.begin() + 19 - static_cast<long>(shift),
                      buf.begin() + 19 - static_cast<long>(shift) + static_cast<long>(len)),
                pt);
      mbedtls_gcm_free(&ctx);
    }
  }
}

TEST_P(Gcm, RejectsWhatGcmRejects) {
  const Bytes key(16, 7), iv(12, 1);
  mbedtls_gcm_context ctx;
  mbedtls_gcm_init(&ctx);
  ASSERT_EQ(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(), 128), 0);
  EXPECT_EQ(mbedtls_gcm_starts(&ctx, MBEDTLS_GCM_ENCRYPT, iv.data(), 0), MBEDTLS_ERR_GCM_BAD_INPUT);
  ASSERT_EQ(mbedtls_gcm_starts(&ctx, MBEDTLS_GCM_ENCRYPT, iv.data(), 12), 0);
  unsigned char buf[32] = {};
  std::size_t olen = 0;
  EXPECT_EQ(mbedtls_gcm_update(&ctx, buf, 32, buf, 31, &olen), MBEDTLS_ERR_GCM_BUFFER_TOO_SMALL);
  EXPECT_EQ(mbedtls_gcm_update(&ctx, buf, 16, buf + 1, 16, &olen), MBEDTLS_ERR_GCM_BAD_INPUT);
  unsigned char tag[16];
  EXPECT_EQ(mbedtls_gcm_finish(&ctx, nullptr, 0, &olen, tag, 3), MBEDTLS_ERR_GCM_BAD_INPUT);
  EXPECT_EQ(mbedtls_gcm_finish(&ctx, nullptr, 0, &olen, tag, 17), MBEDTLS_ERR_GCM_BAD_INPUT);
  mbedtls_gcm_free(&ctx);
}

TEST(GcmEngine, KeysGetTheDetectedEngineUnlessForcedOrAes192) {
#if defined(STEPBACK_EXPECT_GCM_ENGINE)
  // Cross runs say which engine the emulated CPU must offer (qemu -cpu max has AES + PMULL).
  EXPECT_STREQ(stepback::gcm::to_string(stepback::gcm::detected_engine()),
               STEPBACK_EXPECT_GCM_ENGINE);
#endif
  const Bytes key(32, 9);
  mbedtls_gcm_context ctx;
  mbedtls_gcm_init(&ctx);
  ASSERT_EQ(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(), 128), 0);
  EXPECT_EQ(stepback::gcm::engine_of(ctx), stepback::gcm::detected_engine());
  ASSERT_EQ(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(), 256), 0);
  EXPECT_EQ(stepback::gcm::engine_of(ctx), stepback::gcm::detected_engine());
  ASSERT_EQ(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(), 192), 0);
  EXPECT_EQ(stepback::gcm::engine_of(ctx), Engine::kSoftware);
  stepback::gcm::force_software(true);
  EXPECT_EQ(stepback::gcm::engine(), Engine::kSoftware);
  ASSERT_EQ(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(), 128), 0);
  EXPECT_EQ(stepback::gcm::engine_of(ctx), Engine::kSoftware);
  stepback::gcm::force_software(false);
  EXPECT_EQ(stepback::gcm::engine(), stepback::gcm::detected_engine());
  mbedtls_gcm_free(&ctx);
}

// One name on every target (cross runs must pass the host's tests): on x86-64 the engine
// follows CPUID; elsewhere it is never the x86 one.
TEST(GcmEngine, TheDetectedEngineFollowsTheCpu) {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
  const bool has = (c & (1u << 25)) != 0 && (c & (1u << 1)) != 0 && (c & (1u << 19)) != 0;
  EXPECT_EQ(stepback::gcm::detected_engine(), has ? Engine::kX86AesniClmul : Engine::kSoftware);
#else
  EXPECT_NE(stepback::gcm::detected_engine(), Engine::kX86AesniClmul);
#endif
}

// Suite preference by hardware (TlsClientConfig::init): AES-128-GCM first where the
// pipelined engine runs, mbedTLS's default order (ChaCha20-Poly1305 first) where it does not.
TEST(GcmSuites, AesGcmFirstWhenTheCpuRunsThePipelinedEngine) {
  stepback::https::TlsClientConfig config;
  ASSERT_EQ(config.init(), stepback::https::Status::kOk);
  if (stepback::gcm::detected_engine() == Engine::kSoftware) {
    EXPECT_EQ(config.ciphersuites(), nullptr);
    return;
  }
  ASSERT_NE(config.ciphersuites(), nullptr);
  EXPECT_EQ(config.ciphersuites()[0], MBEDTLS_TLS1_3_AES_128_GCM_SHA256);
  EXPECT_EQ(config.ciphersuites()[1], MBEDTLS_TLS1_3_AES_256_GCM_SHA384);
  EXPECT_EQ(config.ciphersuites()[2], MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256);
  EXPECT_EQ(config.ciphersuites()[3], MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256);
}

TEST(GcmSuites, ChaChaFirstWithoutThePipelinedEngine) {
  stepback::gcm::force_software(true);
  stepback::https::TlsClientConfig config;
  const auto status = config.init();
  stepback::gcm::force_software(false);
  ASSERT_EQ(status, stepback::https::Status::kOk);
  EXPECT_EQ(config.ciphersuites(), nullptr);
  EXPECT_EQ(mbedtls_ssl_list_ciphersuites()[0], MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256);
}

// The 32-bit counter wraps inside a message only for IVs other than 12 bytes, which random IVs
// practically never reach; so the counter is set just below the wrap by hand (white box: the
// pipelined engine's state) and the keystream checked block by block against AES-ECB of the
// expected counter blocks, across the 8-block loop, the tail and a partial block.
TEST(GcmEngine, CounterWrapsModulo2To32) {
  if (stepback::gcm::detected_engine() == Engine::kSoftware) GTEST_SKIP() << "no pipelined engine";
  Rng rng{5};
  for (std::size_t key_bytes : {16u, 32u}) {
    for (std::size_t len : {16u * 5 + 3, 16u * 20, 16u * 23 + 9}) {
      const Bytes key = rng.bytes(key_bytes), iv = rng.bytes(12), pt = rng.bytes(len);
      mbedtls_gcm_context ctx;
      mbedtls_gcm_init(&ctx);
      ASSERT_EQ(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key.data(),
                                   static_cast<unsigned>(key_bytes * 8)),
                0);
      ASSERT_EQ(mbedtls_gcm_starts(&ctx, MBEDTLS_GCM_ENCRYPT, iv.data(), 12), 0);
      unsigned char* y = ctx.state.accel.y;
      y[12] = 0xff;
      y[13] = 0xff;
      y[14] = 0xff;
      y[15] = 0xfa;
      Bytes ct(len);
      std::size_t olen = 0;
      // Two pieces: a partial block first, then the rest through the bulk path.
      ASSERT_EQ(mbedtls_gcm_update(&ctx, pt.data(), 7, ct.data(), 7, &olen), 0);
      ASSERT_EQ(mbedtls_gcm_update(&ctx, pt.data() + 7, len - 7, ct.data() + 7, len - 7, &olen), 0);
      mbedtls_gcm_free(&ctx);

      mbedtls_aes_context aes;
      mbedtls_aes_init(&aes);
      ASSERT_EQ(mbedtls_aes_setkey_enc(&aes, key.data(), static_cast<unsigned>(key_bytes * 8)), 0);
      std::uint32_t counter = 0xfffffffau;
      for (std::size_t block = 0; block * 16 < len; ++block) {
        ++counter;  // Wraps to 0 after 0xffffffff.
        unsigned char in[16];
        std::memcpy(in, iv.data(), 12);
        in[12] = static_cast<unsigned char>(counter >> 24);
        in[13] = static_cast<unsigned char>(counter >> 16);
        in[14] = static_cast<unsigned char>(counter >> 8);
        in[15] = static_cast<unsigned char>(counter);
        unsigned char ks[16];
        ASSERT_EQ(mbedtls_aes_crypt_ecb(&aes, MBEDTLS_AES_ENCRYPT, in, ks), 0);
        for (std::size_t i = 0; i < 16 && block * 16 + i < len; ++i) {
          ASSERT_EQ(ct[block * 16 + i], pt[block * 16 + i] ^ ks[i])
              << "key " << key_bytes << " length " << len << " block " << block;
        }
      }
      mbedtls_aes_free(&aes);
    }
  }
}

}  // namespace

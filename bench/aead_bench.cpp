// The TLS record AEADs alone, on records of 16 KiB (TLS's largest): mbedTLS through its cipher
// layer, as its record layer calls it (mbedtls_cipher_auth_encrypt_ext / _decrypt_ext), with
// AES-GCM on the pipelined engine (https/mbedtls/gcm/) and forced onto mbedTLS's own GCM; OpenSSL's
// EVP on the same records as the reference. The ns_per_byte counter is the figure.
//
//   build/bench/bench/aead_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>
#include <mbedtls/cipher.h>
#include <openssl/evp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stepback/gcm/gcm.hpp"

namespace {

constexpr std::size_t kTag = 16;
enum Kind : int { kAes128Gcm = 0, kAes256Gcm = 1, kChaChaPoly = 2 };

const char* name(std::int64_t kind) {
  return kind == kAes128Gcm   ? "aes-128-gcm"
         : kind == kAes256Gcm ? "aes-256-gcm"
                              : "chacha20-poly1305";
}

void set_rate(benchmark::State& state, std::size_t len) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(len));
  state.counters["ns_per_byte"] = benchmark::Counter(
      static_cast<double>(len) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Args: record bytes, Kind, force mbedTLS's software GCM (0/1), decrypt (0/1).
void BM_Mbedtls(benchmark::State& state) {
  const auto len = static_cast<std::size_t>(state.range(0));
  const std::int64_t kind = state.range(1);
  const bool software = state.range(2) != 0;
  const bool decrypt = state.range(3) != 0;
  stepback::gcm::force_software(software);
  const mbedtls_cipher_type_t type = kind == kAes128Gcm   ? MBEDTLS_CIPHER_AES_128_GCM
                                     : kind == kAes256Gcm ? MBEDTLS_CIPHER_AES_256_GCM
                                                          : MBEDTLS_CIPHER_CHACHA20_POLY1305;
  const int keybits = kind == kAes128Gcm ? 128 : 256;
  const unsigned char key[32] = {1, 2, 3};
  const unsigned char iv[12] = {4, 5, 6};
  const unsigned char aad[13] = {7};
  std::vector<unsigned char> in(len, 0x5a), out(len + kTag), record(len + kTag);
  mbedtls_cipher_context_t ctx;
  mbedtls_cipher_init(&ctx);
  std::size_t olen = 0;
  if (mbedtls_cipher_setup(&ctx, mbedtls_cipher_info_from_type(type)) != 0 ||
      mbedtls_cipher_setkey(&ctx, key, keybits, MBEDTLS_ENCRYPT) != 0 ||
      mbedtls_cipher_auth_encrypt_ext(&ctx, iv, sizeof iv, aad, sizeof aad, in.data(), len,
                                      record.data(), record.size(), &olen, kTag) != 0 ||
      (decrypt && mbedtls_cipher_setkey(&ctx, key, keybits, MBEDTLS_DECRYPT) != 0)) {
    state.SkipWithError("mbedTLS set-up failed");
    return;
  }
  for (auto _ : state) {
    const int ret =
        decrypt
            ? mbedtls_cipher_auth_decrypt_ext(&ctx, iv, sizeof iv, aad, sizeof aad, record.data(),
                                              record.size(), out.data(), out.size(), &olen, kTag)
            : mbedtls_cipher_auth_encrypt_ext(&ctx, iv, sizeof iv, aad, sizeof aad, in.data(), len,
                                              out.data(), out.size(), &olen, kTag);
    if (ret != 0) state.SkipWithError("mbedTLS AEAD failed");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  mbedtls_cipher_free(&ctx);
  stepback::gcm::force_software(false);
  set_rate(state, len);
  std::string label = std::string("mbedtls ") + name(kind) + (decrypt ? " decrypt" : " encrypt");
  if (kind != kChaChaPoly) {
    label +=
        std::string(" ") + stepback::gcm::to_string(software ? stepback::gcm::Engine::kSoftware
                                                             : stepback::gcm::detected_engine());
  }
  state.SetLabel(label);
}

// Args: record bytes, Kind, decrypt (0/1).
void BM_OpenSsl(benchmark::State& state) {
  const auto len = static_cast<std::size_t>(state.range(0));
  const std::int64_t kind = state.range(1);
  const bool decrypt = state.range(2) != 0;
  const EVP_CIPHER* cipher = kind == kAes128Gcm   ? EVP_aes_128_gcm()
                             : kind == kAes256Gcm ? EVP_aes_256_gcm()
                                                  : EVP_chacha20_poly1305();
  const unsigned char key[32] = {1, 2, 3};
  const unsigned char iv[12] = {4, 5, 6};
  const unsigned char aad[13] = {7};
  std::vector<unsigned char> in(len, 0x5a), out(len + kTag);
  unsigned char tag[kTag] = {};
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  // One record of ciphertext and its tag, for the decrypt runs.
  int n = 0;
  EVP_EncryptInit_ex(c, cipher, nullptr, key, iv);
  EVP_EncryptUpdate(c, nullptr, &n, aad, sizeof aad);
  EVP_EncryptUpdate(c, out.data(), &n, in.data(), static_cast<int>(len));
  EVP_EncryptFinal_ex(c, out.data() + n, &n);
  EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, kTag, tag);
  const std::vector<unsigned char> record(out.begin(), out.begin() + static_cast<long>(len));
  // The key is set once, as a TLS connection does; each record only brings a new nonce.
  if (decrypt) EVP_DecryptInit_ex(c, cipher, nullptr, key, iv);
  for (auto _ : state) {
    bool ok = true;
    if (decrypt) {
      ok = EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, iv) == 1 &&
           EVP_DecryptUpdate(c, nullptr, &n, aad, sizeof aad) == 1 &&
           EVP_DecryptUpdate(c, out.data(), &n, record.data(), static_cast<int>(len)) == 1 &&
           EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, kTag, tag) == 1 &&
           EVP_DecryptFinal_ex(c, out.data() + n, &n) == 1;
    } else {
      ok = EVP_EncryptInit_ex(c, nullptr, nullptr, nullptr, iv) == 1 &&
           EVP_EncryptUpdate(c, nullptr, &n, aad, sizeof aad) == 1 &&
           EVP_EncryptUpdate(c, out.data(), &n, in.data(), static_cast<int>(len)) == 1 &&
           EVP_EncryptFinal_ex(c, out.data() + n, &n) == 1 &&
           EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, kTag, tag) == 1;
    }
    if (!ok) state.SkipWithError("OpenSSL AEAD failed");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  EVP_CIPHER_CTX_free(c);
  set_rate(state, len);
  state.SetLabel(std::string("openssl ") + name(kind) + (decrypt ? " decrypt" : " encrypt"));
}

void mbedtls_args(benchmark::internal::Benchmark* b) {
  for (std::int64_t decrypt : {0, 1}) {
    for (std::int64_t kind : {kAes128Gcm, kAes256Gcm}) {
      for (std::int64_t software : {0, 1}) b->Args({16384, kind, software, decrypt});
    }
    b->Args({16384, kChaChaPoly, 0, decrypt});
  }
}

void openssl_args(benchmark::internal::Benchmark* b) {
  for (std::int64_t decrypt : {0, 1}) {
    for (std::int64_t kind : {kAes128Gcm, kAes256Gcm, kChaChaPoly}) b->Args({16384, kind, decrypt});
  }
}

BENCHMARK(BM_Mbedtls)->Apply(mbedtls_args);
BENCHMARK(BM_OpenSsl)->Apply(openssl_args);

}  // namespace

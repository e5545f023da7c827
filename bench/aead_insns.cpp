// Encrypts or decrypts RECORDS records of 16 KiB through mbedTLS's cipher layer (as the TLS
// record layer does), for instruction counts per byte: run it with two record counts and
// divide the difference by the extra bytes (bench/aead_insns.sh), which cancels start-up.
//
//   aead_insns {aes-128-gcm|aes-256-gcm|chacha20-poly1305} {detected|software} {encrypt|decrypt}
//   RECORDS
#include <mbedtls/cipher.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "stepback/gcm/gcm.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: aead_insns CIPHER {detected|software} {encrypt|decrypt} RECORDS\n");
    return 2;
  }
  const bool chacha = std::strcmp(argv[1], "chacha20-poly1305") == 0;
  const bool aes256 = std::strcmp(argv[1], "aes-256-gcm") == 0;
  const mbedtls_cipher_type_t type = chacha   ? MBEDTLS_CIPHER_CHACHA20_POLY1305
                                     : aes256 ? MBEDTLS_CIPHER_AES_256_GCM
                                              : MBEDTLS_CIPHER_AES_128_GCM;
  stepback::gcm::force_software(std::strcmp(argv[2], "software") == 0);
  const bool decrypt = std::strcmp(argv[3], "decrypt") == 0;
  const long records = std::strtol(argv[4], nullptr, 10);
  constexpr std::size_t kLen = 16384;
  constexpr std::size_t kTag = 16;
  const unsigned char key[32] = {1, 2, 3};
  const unsigned char iv[12] = {4, 5, 6};
  const unsigned char aad[13] = {7};
  std::vector<unsigned char> in(kLen, 0x5a), out(kLen + kTag), record(kLen + kTag);
  mbedtls_cipher_context_t ctx;
  mbedtls_cipher_init(&ctx);
  std::size_t olen = 0;
  const int bits = chacha || aes256 ? 256 : 128;
  if (mbedtls_cipher_setup(&ctx, mbedtls_cipher_info_from_type(type)) != 0 ||
      mbedtls_cipher_setkey(&ctx, key, bits, MBEDTLS_ENCRYPT) != 0 ||
      mbedtls_cipher_auth_encrypt_ext(&ctx, iv, sizeof iv, aad, sizeof aad, in.data(), kLen,
                                      record.data(), record.size(), &olen, kTag) != 0 ||
      mbedtls_cipher_setkey(&ctx, key, bits, decrypt ? MBEDTLS_DECRYPT : MBEDTLS_ENCRYPT) != 0) {
    std::fprintf(stderr, "aead_insns: set-up failed\n");
    return 1;
  }
  unsigned sum = 0;
  for (long r = 0; r < records; ++r) {
    const int ret =
        decrypt
            ? mbedtls_cipher_auth_decrypt_ext(&ctx, iv, sizeof iv, aad, sizeof aad, record.data(),
                                              record.size(), out.data(), out.size(), &olen, kTag)
            : mbedtls_cipher_auth_encrypt_ext(&ctx, iv, sizeof iv, aad, sizeof aad, in.data(), kLen,
                                              out.data(), out.size(), &olen, kTag);
    if (ret != 0) {
      std::fprintf(stderr, "aead_insns: AEAD failed\n");
      return 1;
    }
    sum += out[static_cast<std::size_t>(r) % kLen];
  }
  mbedtls_cipher_free(&ctx);
  std::printf("%s %s %s %ld records checksum %u\n", argv[1],
              chacha ? "-" : stepback::gcm::to_string(stepback::gcm::engine()), argv[3], records,
              sum);
  return 0;
}

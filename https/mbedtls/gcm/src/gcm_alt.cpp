// mbedTLS's GCM API (MBEDTLS_GCM_ALT) over the pipelined engines of gcm_x86.cpp and
// gcm_arm.cpp, with mbedTLS's own GCM (gcm_soft.c) for every key they do not take. The
// streaming logic follows gcm.c's: additional data and a partial text block are XORed into
// the GHASH accumulator as they come and multiplied by H once the block is whole; output is
// immediate (update() returns as many bytes as it was given).
// constant_time.h has no extern "C" of its own.
extern "C" {
#include <mbedtls/constant_time.h>
}
#include <mbedtls/error.h>
#include <mbedtls/gcm.h>
#include <mbedtls/platform_util.h>

#include <atomic>
#include <cstring>

#include "kernel.hpp"
#include "stepback/gcm/gcm.hpp"

extern "C" {
struct stepback_gcm_soft_context;
void stepback_gcm_soft_init(stepback_gcm_soft_context* ctx);
int stepback_gcm_soft_setkey(stepback_gcm_soft_context* ctx, mbedtls_cipher_id_t cipher,
                             const unsigned char* key, unsigned int keybits);
int stepback_gcm_soft_starts(stepback_gcm_soft_context* ctx, int mode, const unsigned char* iv,
                             size_t iv_len);
int stepback_gcm_soft_update_ad(stepback_gcm_soft_context* ctx, const unsigned char* add,
                                size_t add_len);
int stepback_gcm_soft_update(stepback_gcm_soft_context* ctx, const unsigned char* input,
                             size_t input_length, unsigned char* output, size_t output_size,
                             size_t* output_length);
int stepback_gcm_soft_finish(stepback_gcm_soft_context* ctx, unsigned char* output,
                             size_t output_size, size_t* output_length, unsigned char* tag,
                             size_t tag_len);
void stepback_gcm_soft_free(stepback_gcm_soft_context* ctx);
}

namespace stepback::gcm {
namespace {

using detail::Kernel;

enum : unsigned char { kNone = 0, kSoft = 1, kX86 = 2, kArm = 3 };

std::atomic<bool> g_force_software{false};

stepback_gcm_soft_context* soft(mbedtls_gcm_context* ctx) {
  return reinterpret_cast<stepback_gcm_soft_context*>(ctx->state.soft);
}

const Kernel* kernel_of(unsigned char engine) {
  if (engine == kX86) return detail::x86_kernel();
  if (engine == kArm) return detail::arm_kernel();
  return nullptr;
}

// The accelerated context's kernel, or nullptr for mbedTLS's own.
const Kernel* accel(const mbedtls_gcm_context* ctx) { return kernel_of(ctx->engine); }

const unsigned char kZeroBlock[16] = {};

void put_be64(unsigned char* p, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<unsigned char>(v);
    v >>= 8;
  }
}

void next_counter(unsigned char y[16]) {
  for (int i = 15; i >= 12; --i) {
    if (++y[i] != 0) break;
  }
}

// XORs n bytes of keystream (from ks + off) into in -> out and the ciphertext into x + off.
void mask_partial(stepback_gcm_accel_state* s, std::size_t off, const unsigned char* in,
                  unsigned char* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char in_byte = in[i];
    const auto out_byte = static_cast<unsigned char>(in_byte ^ s->ks[off + i]);
    out[i] = out_byte;
    s->x[off + i] ^= s->mode == MBEDTLS_GCM_ENCRYPT ? out_byte : in_byte;
  }
}

}  // namespace

const char* to_string(Engine engine) {
  switch (engine) {
    case Engine::kSoftware:
      return "software";
    case Engine::kX86AesniClmul:
      return "x86-aesni-clmul";
    case Engine::kArmv8AesPmull:
      return "armv8-aes-pmull";
  }
  return "?";
}

Engine detected_engine() {
  if (detail::x86_kernel() != nullptr) return Engine::kX86AesniClmul;
  if (detail::arm_kernel() != nullptr) return Engine::kArmv8AesPmull;
  return Engine::kSoftware;
}

Engine engine() {
  return g_force_software.load(std::memory_order_relaxed) ? Engine::kSoftware : detected_engine();
}

void force_software(bool on) { g_force_software.store(on, std::memory_order_relaxed); }

Engine engine_of(const mbedtls_gcm_context& ctx) {
  if (ctx.engine == kX86) return Engine::kX86AesniClmul;
  if (ctx.engine == kArm) return Engine::kArmv8AesPmull;
  return Engine::kSoftware;
}

}  // namespace stepback::gcm

using stepback::gcm::accel;
using stepback::gcm::kZeroBlock;
using stepback::gcm::put_be64;
using stepback::gcm::soft;

extern "C" {

void mbedtls_gcm_init(mbedtls_gcm_context* ctx) {
  std::memset(ctx, 0, sizeof *ctx);
  ctx->engine = stepback::gcm::kNone;
}

int mbedtls_gcm_setkey(mbedtls_gcm_context* ctx, mbedtls_cipher_id_t cipher,
                       const unsigned char* key, unsigned int keybits) {
  if (ctx->engine == stepback::gcm::kSoft) stepback_gcm_soft_free(soft(ctx));
  mbedtls_platform_zeroize(ctx, sizeof *ctx);
  ctx->engine = stepback::gcm::kNone;

  const stepback::gcm::Engine e = stepback::gcm::engine();
  if (cipher == MBEDTLS_CIPHER_ID_AES && (keybits == 128 || keybits == 256) &&
      e != stepback::gcm::Engine::kSoftware) {
    const unsigned char id =
        e == stepback::gcm::Engine::kX86AesniClmul ? stepback::gcm::kX86 : stepback::gcm::kArm;
    stepback::gcm::kernel_of(id)->setup(&ctx->state.accel, key, keybits);
    ctx->engine = id;
    return 0;
  }
  stepback_gcm_soft_init(soft(ctx));
  ctx->engine = stepback::gcm::kSoft;
  return stepback_gcm_soft_setkey(soft(ctx), cipher, key, keybits);
}

int mbedtls_gcm_starts(mbedtls_gcm_context* ctx, int mode, const unsigned char* iv, size_t iv_len) {
  const stepback::gcm::detail::Kernel* k = accel(ctx);
  if (k == nullptr) {
    if (ctx->engine != stepback::gcm::kSoft) return MBEDTLS_ERR_GCM_BAD_INPUT;
    return stepback_gcm_soft_starts(soft(ctx), mode, iv, iv_len);
  }
  if (iv_len == 0 || static_cast<std::uint64_t>(iv_len) >> 61 != 0)
    return MBEDTLS_ERR_GCM_BAD_INPUT;
  stepback_gcm_accel_state* s = &ctx->state.accel;
  s->mode = static_cast<unsigned char>(mode);
  s->len = 0;
  s->add_len = 0;
  std::memset(s->x, 0, sizeof s->x);
  std::memset(s->ks, 0, sizeof s->ks);
  if (iv_len == 12) {
    std::memcpy(s->y, iv, 12);
    s->y[12] = 0;
    s->y[13] = 0;
    s->y[14] = 0;
    s->y[15] = 1;
  } else {
    // J0 = GHASH(IV, zero-padded, || 0^64 || [bits(IV)]_64).
    std::memset(s->y, 0, sizeof s->y);
    const std::size_t whole = iv_len / 16;
    if (whole > 0) k->ghash(s, s->y, iv, whole);
    if (iv_len % 16 != 0) {
      unsigned char last[16] = {};
      std::memcpy(last, iv + 16 * whole, iv_len % 16);
      k->ghash(s, s->y, last, 1);
    }
    unsigned char lengths[16] = {};
    put_be64(lengths + 8, static_cast<std::uint64_t>(iv_len) * 8);
    k->ghash(s, s->y, lengths, 1);
  }
  k->encrypt_block(s, s->y, s->base_ectr);
  return 0;
}

int mbedtls_gcm_update_ad(mbedtls_gcm_context* ctx, const unsigned char* add, size_t add_len) {
  const stepback::gcm::detail::Kernel* k = accel(ctx);
  if (k == nullptr) {
    if (ctx->engine != stepback::gcm::kSoft) return MBEDTLS_ERR_GCM_BAD_INPUT;
    return stepback_gcm_soft_update_ad(soft(ctx), add, add_len);
  }
  stepback_gcm_accel_state* s = &ctx->state.accel;
  const std::uint64_t total = s->add_len + static_cast<std::uint64_t>(add_len);
  if (total < s->add_len || total >> 61 != 0) return MBEDTLS_ERR_GCM_BAD_INPUT;
  // Additional data after text would be hashed out of order (gcm.c silently mis-tags it).
  if (s->len != 0) return MBEDTLS_ERR_GCM_BAD_INPUT;
  std::size_t off = static_cast<std::size_t>(s->add_len % 16);
  s->add_len = total;
  if (off != 0) {
    std::size_t use = 16 - off;
    if (use > add_len) use = add_len;
    for (std::size_t i = 0; i < use; ++i) s->x[off + i] ^= add[i];
    if (off + use == 16) k->ghash(s, s->x, kZeroBlock, 1);
    add += use;
    add_len -= use;
  }
  if (add_len >= 16) {
    k->ghash(s, s->x, add, add_len / 16);
    add += add_len / 16 * 16;
    add_len %= 16;
  }
  for (std::size_t i = 0; i < add_len; ++i) s->x[i] ^= add[i];
  return 0;
}

int mbedtls_gcm_update(mbedtls_gcm_context* ctx, const unsigned char* input, size_t input_length,
                       unsigned char* output, size_t output_size, size_t* output_length) {
  const stepback::gcm::detail::Kernel* k = accel(ctx);
  if (k == nullptr) {
    if (ctx->engine != stepback::gcm::kSoft) return MBEDTLS_ERR_GCM_BAD_INPUT;
    return stepback_gcm_soft_update(soft(ctx), input, input_length, output, output_size,
                                    output_length);
  }
  stepback_gcm_accel_state* s = &ctx->state.accel;
  if (output_size < input_length) return MBEDTLS_ERR_GCM_BUFFER_TOO_SMALL;
  *output_length = input_length;
  if (input_length == 0) return 0;
  if (output > input && static_cast<std::size_t>(output - input) < input_length) {
    return MBEDTLS_ERR_GCM_BAD_INPUT;
  }
  // At most 2^32 - 2 blocks of text: 2^36 - 32 bytes.
  const std::uint64_t len = s->len;
  if (len + input_length < len || len + input_length > 0xFFFFFFFE0ull) {
    return MBEDTLS_ERR_GCM_BAD_INPUT;
  }
  if (len == 0 && s->add_len % 16 != 0) k->ghash(s, s->x, kZeroBlock, 1);
  s->len = len + input_length;

  const std::size_t off = static_cast<std::size_t>(len % 16);
  if (off != 0) {
    std::size_t use = 16 - off;
    if (use > input_length) use = input_length;
    stepback::gcm::mask_partial(s, off, input, output, use);
    if (off + use == 16) k->ghash(s, s->x, kZeroBlock, 1);
    input += use;
    output += use;
    input_length -= use;
  }
  const std::size_t blocks = input_length / 16;
  if (blocks > 0) {
    k->crypt(s, input, output, blocks, s->mode == MBEDTLS_GCM_ENCRYPT);
    input += 16 * blocks;
    output += 16 * blocks;
    input_length -= 16 * blocks;
  }
  if (input_length > 0) {
    stepback::gcm::next_counter(s->y);
    k->encrypt_block(s, s->y, s->ks);
    stepback::gcm::mask_partial(s, 0, input, output, input_length);
  }
  return 0;
}

int mbedtls_gcm_finish(mbedtls_gcm_context* ctx, unsigned char* output, size_t output_size,
                       size_t* output_length, unsigned char* tag, size_t tag_len) {
  const stepback::gcm::detail::Kernel* k = accel(ctx);
  if (k == nullptr) {
    if (ctx->engine != stepback::gcm::kSoft) return MBEDTLS_ERR_GCM_BAD_INPUT;
    return stepback_gcm_soft_finish(soft(ctx), output, output_size, output_length, tag, tag_len);
  }
  (void)output;
  (void)output_size;
  *output_length = 0;
  if (tag_len > 16 || tag_len < 4) return MBEDTLS_ERR_GCM_BAD_INPUT;
  stepback_gcm_accel_state* s = &ctx->state.accel;
  if ((s->len == 0 && s->add_len % 16 != 0) || s->len % 16 != 0) {
    k->ghash(s, s->x, kZeroBlock, 1);
  }
  unsigned char lengths[16];
  put_be64(lengths, s->add_len * 8);
  put_be64(lengths + 8, s->len * 8);
  unsigned char x[16];
  std::memcpy(x, s->x, 16);
  k->ghash(s, x, lengths, 1);
  for (std::size_t i = 0; i < tag_len; ++i)
    tag[i] = static_cast<unsigned char>(x[i] ^ s->base_ectr[i]);
  mbedtls_platform_zeroize(x, sizeof x);
  return 0;
}

int mbedtls_gcm_crypt_and_tag(mbedtls_gcm_context* ctx, int mode, size_t length,
                              const unsigned char* iv, size_t iv_len, const unsigned char* add,
                              size_t add_len, const unsigned char* input, unsigned char* output,
                              size_t tag_len, unsigned char* tag) {
  int ret = mbedtls_gcm_starts(ctx, mode, iv, iv_len);
  if (ret != 0) return ret;
  ret = mbedtls_gcm_update_ad(ctx, add, add_len);
  if (ret != 0) return ret;
  size_t olen = 0;
  ret = mbedtls_gcm_update(ctx, input, length, output, length, &olen);
  if (ret != 0) return ret;
  return mbedtls_gcm_finish(ctx, nullptr, 0, &olen, tag, tag_len);
}

int mbedtls_gcm_auth_decrypt(mbedtls_gcm_context* ctx, size_t length, const unsigned char* iv,
                             size_t iv_len, const unsigned char* add, size_t add_len,
                             const unsigned char* tag, size_t tag_len, const unsigned char* input,
                             unsigned char* output) {
  unsigned char check[16];
  const int ret = mbedtls_gcm_crypt_and_tag(ctx, MBEDTLS_GCM_DECRYPT, length, iv, iv_len, add,
                                            add_len, input, output, tag_len, check);
  if (ret != 0) return ret;
  const int diff = mbedtls_ct_memcmp(tag, check, tag_len);
  mbedtls_platform_zeroize(check, sizeof check);
  if (diff != 0) {
    mbedtls_platform_zeroize(output, length);
    return MBEDTLS_ERR_GCM_AUTH_FAILED;
  }
  return 0;
}

void mbedtls_gcm_free(mbedtls_gcm_context* ctx) {
  if (ctx == nullptr) return;
  if (ctx->engine == stepback::gcm::kSoft) stepback_gcm_soft_free(soft(ctx));
  mbedtls_platform_zeroize(ctx, sizeof *ctx);
}

}  // extern "C"

/* The mbedTLS GCM context under MBEDTLS_GCM_ALT (set in https/mbedtls/stepback_mbedtls_config.h):
 * mbedtls/gcm.h includes this file instead of defining its own context, and
 * https/mbedtls/gcm/src/gcm_alt.cpp implements the mbedtls_gcm_* functions on it. A key set up with
 * the pipelined AES-GCM (x86-64 AES-NI + PCLMULQDQ, ARMv8 AES + PMULL) keeps its state in
 * `accel`; any other key (AES-192, a CPU without the instructions, or the software path
 * forced by stepback::gcm::force_software) keeps mbedTLS's own GCM context in `soft`. */
#ifndef STEPBACK_GCM_ALT_H
#define STEPBACK_GCM_ALT_H

#include <stddef.h>
#include <stdint.h>

/* Bytes reserved for mbedTLS's own context (its size is checked where it is compiled,
 * https/mbedtls/gcm/src/gcm_soft.c). */
#define STEPBACK_GCM_SOFT_CONTEXT_SIZE 640

/* The pipelined engine's state: expanded key, powers of H, counter and GHASH accumulator. */
typedef struct stepback_gcm_accel_state {
  unsigned char rk[15 * 16];   /* round keys, FIPS-197 byte order */
  unsigned char htab[8 * 16];  /* H^1..H^8 in the engine's own representation */
  unsigned char y[16];         /* counter block of the last keystream block */
  unsigned char x[16];         /* GHASH accumulator (partial block XORed in) */
  unsigned char base_ectr[16]; /* E(K, J0), masks the tag */
  unsigned char ks[16];        /* keystream of the partial block */
  uint64_t len;                /* bytes of text so far */
  uint64_t add_len;            /* bytes of additional data so far */
  unsigned char rounds;        /* 10 or 14 */
  unsigned char mode;          /* MBEDTLS_GCM_ENCRYPT or MBEDTLS_GCM_DECRYPT */
} stepback_gcm_accel_state;

typedef struct mbedtls_gcm_context {
  union {
    stepback_gcm_accel_state accel;
    uint64_t soft[STEPBACK_GCM_SOFT_CONTEXT_SIZE / 8];
    void* align_pointer;
  } state;
  unsigned char engine; /* 0 none, 1 mbedTLS software, 2 x86-64, 3 ARMv8 */
} mbedtls_gcm_context;

#endif /* STEPBACK_GCM_ALT_H */

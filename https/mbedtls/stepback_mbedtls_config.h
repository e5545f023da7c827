/* stepback's complete mbedTLS 3.6 configuration (MBEDTLS_CONFIG_FILE), not an adjustment of
 * the default: every option that is not defined here is off. cmake/StepbackMbedTLS.cmake
 * passes it to the mbedTLS build and, as a public definition, to everything that includes
 * mbedTLS headers, so the library and its users always agree on the layout of mbedTLS
 * structures. */

/* Platform: time for certificate validity, and file I/O to load CA files and directories. */
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_HAVE_TIME_DATE
/* Certificate validity is read from the wall clock the app gives its TlsClientConfig
 * (set_wall_clock), through stepback_mbedtls_time (https/mbedtls/certificate_clock.cpp,
 * compiled into mbedcrypto); without one, from time(). */
#define MBEDTLS_PLATFORM_TIME_ALT
#define MBEDTLS_PLATFORM_STD_TIME stepback_mbedtls_time
#include <time.h>
#ifdef __cplusplus
extern "C" {
#endif
time_t stepback_mbedtls_time(time_t* timer);
#ifdef __cplusplus
}
#endif
/* Certificate dates through https/mbedtls/mbedtls_time.cpp: no time-zone files, no heap. */
#define MBEDTLS_PLATFORM_GMTIME_R_ALT
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_FS_IO

/* Memory: every mbedTLS allocation goes to the caller's static arena (stepback/https/
 * tls_arena.hpp) instead of the system heap, through the calloc/free pointers PLATFORM_MEMORY
 * lets tls_arena_init() set. The arena's allocator is stepback's (8-byte block headers, blocks
 * 8-aligned for mbedTLS's 64-bit integers and pointers), not MEMORY_BUFFER_ALLOC_C, whose
 * headers are eight machine words (https/src/tls/arena_allocator.hpp says why). */
#define MBEDTLS_PLATFORM_MEMORY

/* Randomness: the OS entropy source (getrandom, /dev/urandom) feeding CTR_DRBG. */
#define MBEDTLS_ENTROPY_C
#define MBEDTLS_CTR_DRBG_C

/* PSA Crypto: TLS 1.3's key schedule (HKDF) and ECDHE run on it; the PSA_WANT_* set is derived
 * from the legacy options in this file (MBEDTLS_PSA_CRYPTO_CONFIG stays off), so HKDF_C is
 * what turns on PSA's HKDF. */
#define MBEDTLS_PSA_CRYPTO_C
#define MBEDTLS_HKDF_C

/* Big numbers and elliptic curves: ECDHE over X25519 and P-256, ECDSA with P-256 (our own
 * certificates) and P-384 (real CA chains, e.g. Let's Encrypt E5/E6, sign with P-384). */
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C

/* RSA signature verification: most public servers still present RSA certificates;
 * PKCS#1 v1.5 for certificate signatures, PSS for TLS 1.3 handshake signatures. */
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_PKCS1_V21
/* Without it the client offers no rsa_pss_rsae_* signature scheme, which TLS 1.3 requires of
 * an RSA certificate: every TLS 1.3 server with one (openssl s_server, nginx) refused the
 * handshake (tools.tls_interop.*.rsa). */
#define MBEDTLS_X509_RSASSA_PSS_SUPPORT

/* Hashes: SHA-256 and SHA-384 for the TLS cipher suites and certificate signatures
 * (SHA-384 is built on the SHA-512 code). */
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA384_C
#define MBEDTLS_SHA512_C

/* Ciphers: AEADs only, AES-GCM and ChaCha20-Poly1305; AES tables in read-only memory (saves
 * 8 KiB of RAM), with AES-NI / Armv8 crypto extensions used where the CPU has them. */
#define MBEDTLS_CIPHER_C
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES
/* AES only ever encrypts here (GCM and CTR_DRBG run the block cipher forwards; no CBC or ECB
 * decryption): the decryption tables and code left out (docs/performance.md,
 * bench/apk_footprint.sh). */
#define MBEDTLS_BLOCK_CIPHER_NO_DECRYPT
#define MBEDTLS_AESNI_C
#define MBEDTLS_AESCE_C
#define MBEDTLS_GCM_C
/* GCM through stepback's pipelined AES-GCM (https/mbedtls/gcm/: AES-NI + PCLMULQDQ on x86-64, AES +
 * PMULL on ARMv8, chosen at run time) with mbedTLS's own GCM as its fallback; that fallback is
 * gcm.c compiled once more under other names (https/mbedtls/gcm/src/gcm_soft.c), the one file that
 * defines STEPBACK_GCM_SOFTWARE_TU. */
#if !defined(STEPBACK_GCM_SOFTWARE_TU)
#define MBEDTLS_GCM_ALT
#endif
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C

/* Keys and ASN.1: parse CA and server keys (ASN.1 writing is ECDSA's signature encoding). */
#define MBEDTLS_OID_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_BASE64_C
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_PEM_PARSE_C

/* X.509: verify server chains (DER and PEM). */
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C

/* TLS: 1.2 and 1.3 only (no SSLv3/TLS 1.0/1.1, no DTLS), client (the server side below). */
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_SSL_PROTO_TLS1_3

/* Key exchange: ECDHE only (forward secrecy); TLS 1.2 with ECDSA or RSA certificates, TLS 1.3
 * full handshakes (ephemeral) and ticket resumption (PSK + ephemeral). */
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#define MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ENABLED
#define MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_EPHEMERAL_ENABLED

/* TLS 1.3 details: middlebox compatibility mode (some networks drop TLS 1.3 without it), and
 * the peer certificate kept in the session, which mbedTLS's TLS 1.3 code requires. */
#define MBEDTLS_SSL_TLS1_3_COMPATIBILITY_MODE
#define MBEDTLS_SSL_KEEP_PEER_CERTIFICATE

/* Extensions: SNI (virtual hosts), ALPN (to say http/1.1), extended master secret (TLS 1.2
 * resumption safety), session tickets (retries resume instead of a full handshake), and max
 * fragment length (ask for small records where servers honour it). */
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
#define MBEDTLS_SSL_ALPN
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_SSL_SESSION_TICKETS
#define MBEDTLS_SSL_MAX_FRAGMENT_LENGTH
#define MBEDTLS_SSL_ALL_ALERT_MESSAGES

/* TLS 1.3 early data (0-RTT): a request that may be replayed rides in the first flight of a
 * resumed session whose ticket allows it, saving a round trip per reconnection (needs the
 * session tickets and PSK + ephemeral resumption above; TlsClientConfig::set_early_data). */
#define MBEDTLS_SSL_EARLY_DATA

/* The server side, which the library never runs: the TLS server and its session-ticket keys,
 * and writing keys and self-signed certificates, for the tests' and `stepback demo`'s
 * in-process servers. CMake option STEPBACK_TLS_SERVER (build-wide definition,
 * cmake/StepbackMbedTLS.cmake): on when the tests or the tools are built, off in an app's
 * build (bench/apk_footprint.sh). */
#if defined(STEPBACK_TLS_SERVER) && STEPBACK_TLS_SERVER
#define MBEDTLS_SSL_SRV_C
#define MBEDTLS_SSL_TICKET_C
#define MBEDTLS_PK_WRITE_C
#define MBEDTLS_PEM_WRITE_C
#define MBEDTLS_X509_CREATE_C
#define MBEDTLS_X509_CRT_WRITE_C
#endif

/* Record buffers, from the CMake options STEPBACK_TLS_IN_CONTENT_LEN and _OUT_ (build-wide
 * definitions, cmake/StepbackMbedTLS.cmake): by default the incoming one takes a full 16 KiB
 * record (servers may ignore max fragment length), and we never send more than 4 KiB at a
 * time. The small-RAM build (preset `small-ram`) takes 4 KiB records, which servers send when
 * they honour max_fragment_length; a larger record fails the exchange, saying so. */
#if defined(STEPBACK_TLS_IN_CONTENT_LEN)
#define MBEDTLS_SSL_IN_CONTENT_LEN STEPBACK_TLS_IN_CONTENT_LEN
#else
#define MBEDTLS_SSL_IN_CONTENT_LEN 16384
#endif
#if defined(STEPBACK_TLS_OUT_CONTENT_LEN)
#define MBEDTLS_SSL_OUT_CONTENT_LEN STEPBACK_TLS_OUT_CONTENT_LEN
#else
#define MBEDTLS_SSL_OUT_CONTENT_LEN 4096
#endif

/* The small-RAM build (CMake option STEPBACK_SMALL_RAM) trades handshake CPU for RAM:
 * elliptic-curve multiplications by an unknown point with a window of 2 instead of 4 (the
 * precomputed points of an ECDSA verification live in the arena, so its peak is lower), and
 * 8 PSA key slots instead of 32 (less static data; a client handshake holds one key at a
 * time, its ephemeral key share); figures in docs/small_ram.md. The
 * stepback tools take small buffers in this build too (tools/client_loop.cpp). */
#if defined(STEPBACK_SMALL_RAM) && STEPBACK_SMALL_RAM
#define MBEDTLS_ECP_WINDOW_SIZE 2
#define MBEDTLS_PSA_KEY_SLOT_COUNT 8
/* The only entropy source either context (TlsClientConfig's, PSA's) is given is the
 * platform's, so one slot instead of 20; and the accumulator a SHA-256 instead of a SHA-512
 * context (the DRBG is then seeded with 32 bytes, AES-256's key size). Both shrink the
 * TlsClientConfig object and PSA's static data. */
#define MBEDTLS_ENTROPY_MAX_SOURCES 1
#define MBEDTLS_ENTROPY_FORCE_SHA256
#endif

/* Trust anchors looked up when a handshake needs them (stepback/https/tls/trust_store.hpp):
 * mbedTLS asks a callback for the candidate issuers of each certificate it verifies instead of
 * searching a list loaded up front. SHA-1 and MD5 compute OpenSSL's subject-name hashes, the
 * file names of hashed certificate directories (SHA-1: `openssl rehash`, Debian; MD5: the
 * pre-1.0 hash Android's cacerts use). Neither signs or protects anything: the X.509 profile
 * and the TLS signature algorithms still refuse both, and without CBC no cipher suite uses
 * SHA-1. */
#define MBEDTLS_X509_TRUSTED_CERTIFICATE_CALLBACK
#define MBEDTLS_SHA1_C
#define MBEDTLS_MD5_C

/* Diagnostics: mbedtls_strerror() and x509_crt_verify_info() text for error messages. */
#define MBEDTLS_ERROR_C

/* ---- Handshake public-key work: chosen by measurement ------------------------------------
 * Each option alone against what is set here, in instructions of one `stepback get` against
 * nginx (callgrind) and the .text of libmbedcrypto.a (figures: docs/performance.md, "handshake
 * public-key options"): a smaller ECP window (the small-RAM build takes 2 above, for less
 * arena), no fixed-point tables or no NIST reduction each cost instructions for little text
 * saved; a window of 5 or 6 changes nothing for P-256 (mbedTLS caps its window at 4 and its
 * generator has a static comb table; only P-384 and RAM would grow). p256-m
 * (MBEDTLS_PSA_P256M_DRIVER_ENABLED, with MBEDTLS_USE_PSA_CRYPTO so that X.509 and TLS verify
 * through PSA) costs both instructions and text on x86-64; under qemu-user on ARM (no
 * hardware's timing) it verified faster: worth measuring on a device, not taken on qemu's word.
 * So the defaults stay, written out so that a change is a decision. The groups offered, P-256
 * first, are https/src/tls/tls.cpp's. */
#if !(defined(STEPBACK_SMALL_RAM) && STEPBACK_SMALL_RAM)
#define MBEDTLS_ECP_WINDOW_SIZE 4
#endif
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 1
/* ---- end of the handshake block ---------------------------------------------------------- */

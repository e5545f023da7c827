/* mbedTLS's own GCM (library/gcm.c of the mbedTLS tree being built), compiled a second time
 * under the names stepback_gcm_soft_*: with MBEDTLS_GCM_ALT set, mbedcrypto's copy compiles to
 * nothing and gcm_alt.cpp calls this one for every key the pipelined engine does not take.
 * STEPBACK_GCM_SOFTWARE_TU keeps MBEDTLS_GCM_ALT off in the configuration for this file only,
 * so gcm.h declares mbedTLS's own context here. */
#define STEPBACK_GCM_SOFTWARE_TU 1

#define mbedtls_gcm_context stepback_gcm_soft_context
#define mbedtls_gcm_init stepback_gcm_soft_init
#define mbedtls_gcm_setkey stepback_gcm_soft_setkey
#define mbedtls_gcm_starts stepback_gcm_soft_starts
#define mbedtls_gcm_update_ad stepback_gcm_soft_update_ad
#define mbedtls_gcm_update stepback_gcm_soft_update
#define mbedtls_gcm_finish stepback_gcm_soft_finish
#define mbedtls_gcm_crypt_and_tag stepback_gcm_soft_crypt_and_tag
#define mbedtls_gcm_auth_decrypt stepback_gcm_soft_auth_decrypt
#define mbedtls_gcm_free stepback_gcm_soft_free
#define mbedtls_gcm_self_test stepback_gcm_soft_self_test

#include "gcm.c" /* NOLINT(bugprone-suspicious-include): the point of this file */

#undef mbedtls_gcm_context
#include "gcm_alt.h"

_Static_assert(sizeof(stepback_gcm_soft_context) <= STEPBACK_GCM_SOFT_CONTEXT_SIZE,
               "raise STEPBACK_GCM_SOFT_CONTEXT_SIZE in gcm_alt.h");
_Static_assert(_Alignof(stepback_gcm_soft_context) <= _Alignof(mbedtls_gcm_context),
               "mbedTLS's GCM context needs more alignment than gcm_alt.h gives it");

size_t stepback_gcm_soft_context_size(void) { return sizeof(stepback_gcm_soft_context); }

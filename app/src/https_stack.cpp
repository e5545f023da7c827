#include "stepback/app/https_stack.hpp"

#include <psa/crypto.h>
#include <sys/stat.h>

#include <cstdio>

#include "stepback/platform/clock.hpp"

namespace stepback::app {

HttpsStack::ArenaOwner::~ArenaOwner() {
  if (!owns) return;
  mbedtls_psa_crypto_free();
  https::tls_arena_release();
}

https::Status HttpsStack::fail(https::Status status, const char* what, const char* path) {
  std::snprintf(message_, sizeof message_, "%s%s%s", what, path != nullptr ? path : "",
                path != nullptr ? "'" : "");
  return status;
}

bool HttpsStack::init_resolver() {
#if defined(__ANDROID__) && __ANDROID_API__ >= 29 && defined(STEPBACK_HAVE_CARES)
  return true;  // AndroidResolver needs no setting up.
#elif defined(__ANDROID__) || !defined(STEPBACK_HAVE_CARES)
  if (resolver_.init() == https::Status::kOk) return true;
  fail(https::Status::kError, resolver_.message(), nullptr);
  return false;
#else
  // A resolv.conf that cannot be used is not fatal here: each lookup then fails with its
  // words, and numeric hosts need none.
  (void)resolver_.init(https::CaresOptions{});
  return true;
#endif
}

https::Status HttpsStack::init(const char* ca) {
  message_[0] = '\0';
  if (!https::tls_arena_installed()) {
    if (https::tls_arena_init(arena_, sizeof arena_) != https::Status::kOk) {
      return fail(https::Status::kInvalidArgument, "cannot install the TLS arena", nullptr);
    }
    arena_owner_.owns = true;
  }
  if (const https::Status s = tls_.init(); s != https::Status::kOk) {
    return fail(s, "cannot set up TLS (entropy or crypto initialization failed)", nullptr);
  }
  struct stat st {};
  if (ca == nullptr) {
    if (trust_.add_platform_default() != https::Status::kOk) {
      return fail(https::Status::kInvalidArgument,
                  "no system CA store found (/etc/ssl/certs, ...); name a CA file or directory",
                  nullptr);
    }
  } else if (::stat(ca, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (trust_.add_directory(ca) != https::Status::kOk) {
      return fail(https::Status::kInvalidArgument,
                  "not a hashed CA directory (run openssl rehash on it): '", ca);
    }
  } else if (trust_.add_bundle(ca) != https::Status::kOk) {
    return fail(https::Status::kInvalidArgument, "no usable CA certificate in '", ca);
  }
  if (const https::Status s = tls_.use_trust_store(trust_); s != https::Status::kOk) {
    return fail(s, "cannot use the CA store", nullptr);
  }
  tls_.set_wall_clock(&platform::wall_now);
  if (!init_resolver()) return https::Status::kError;
  connector_.emplace(tls_, resolver_);
  return https::Status::kOk;
}

}  // namespace stepback::app

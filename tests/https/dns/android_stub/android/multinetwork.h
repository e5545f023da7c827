// A STUB of the NDK's <android/multinetwork.h>, for compile checks on the host only: the
// declarations AndroidResolver (API level 29) and SystemResolver (API level 23) use, written
// from the NDK's API reference, not copied from the NDK. It proves that android_resolver.cpp
// and system_resolver.cpp compile against these signatures; it says nothing about the real
// header or a device.
#ifndef STEPBACK_TESTS_ANDROID_STUB_MULTINETWORK_H_
#define STEPBACK_TESTS_ANDROID_STUB_MULTINETWORK_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct addrinfo;

typedef uint64_t net_handle_t;
#define NETWORK_UNSPECIFIED ((net_handle_t)0)

enum ResNsendFlags {
  ANDROID_RESOLV_NO_RETRY = 1 << 0,
  ANDROID_RESOLV_NO_CACHE_STORE = 1 << 1,
  ANDROID_RESOLV_NO_CACHE_LOOKUP = 1 << 2,
};

int android_getaddrinfofornetwork(net_handle_t network, const char* node, const char* service,
                                  const struct addrinfo* hints, struct addrinfo** res);
int android_res_nquery(net_handle_t network, const char* dname, int ns_class, int ns_type,
                       uint32_t flags);
int android_res_nsend(net_handle_t network, const uint8_t* msg, size_t msglen, uint32_t flags);
int android_res_nresult(int fd, int* rcode, uint8_t* answer, size_t anslen);
void android_res_cancel(int nsend_fd);

#ifdef __cplusplus
}
#endif

#endif  // STEPBACK_TESTS_ANDROID_STUB_MULTINETWORK_H_

#include "stepback/https/dns/android_resolver.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tcp/no_path.hpp"

#if defined(STEPBACK_HAVE_CARES)
#include <ares.h>
#endif

#if defined(__ANDROID__) && __ANDROID_API__ >= 29
#include <android/multinetwork.h>
#include <poll.h>
#endif

namespace stepback::https {

#if defined(STEPBACK_HAVE_CARES)

// dns_pool.cpp: the pool c-ares allocates from, installed if the app installed none.
bool dns_pool_ensure();

ResolveError parse_dns_answer(const std::uint8_t* message, std::size_t size, int rcode,
                              std::uint16_t port, SocketAddress* out, std::size_t capacity,
                              std::size_t* count) {
  switch (rcode) {
    case 0:
      break;  // NOERROR
    case 3:
      return ResolveError::kNxDomain;  // NXDOMAIN
    case 2:
    case 4:
    case 5:
      return ResolveError::kServerFailure;  // SERVFAIL, NOTIMP, REFUSED
    default:
      return ResolveError::kBadResponse;
  }
  if (!dns_pool_ensure()) return ResolveError::kInternal;
  ares_dns_record_t* record = nullptr;
  const ares_status_t parsed = ares_dns_parse(message, size, 0, &record);
  if (parsed != ARES_SUCCESS) {
    return parsed == ARES_ENOMEM ? ResolveError::kOutOfMemory : ResolveError::kBadResponse;
  }
  const std::size_t answers = ares_dns_record_rr_cnt(record, ARES_SECTION_ANSWER);
  for (std::size_t i = 0; i < answers && *count < capacity; ++i) {
    const ares_dns_rr_t* rr = ares_dns_record_rr_get_const(record, ARES_SECTION_ANSWER, i);
    SocketAddress& a = out[*count];
    a = SocketAddress{};
    if (ares_dns_rr_get_type(rr) == ARES_REC_TYPE_A) {
      sockaddr_in sin{};
      sin.sin_family = AF_INET;
      std::memcpy(&sin.sin_addr, ares_dns_rr_get_addr(rr, ARES_RR_A_ADDR), sizeof sin.sin_addr);
      std::memcpy(a.bytes, &sin, sizeof sin);
      a.size = sizeof sin;
    } else if (ares_dns_rr_get_type(rr) == ARES_REC_TYPE_AAAA) {
      sockaddr_in6 sin6{};
      sin6.sin6_family = AF_INET6;
      std::memcpy(&sin6.sin6_addr, ares_dns_rr_get_addr6(rr, ARES_RR_AAAA_ADDR),
                  sizeof sin6.sin6_addr);
      std::memcpy(a.bytes, &sin6, sizeof sin6);
      a.size = sizeof sin6;
    } else {
      continue;  // CNAMEs and the like: the addresses they lead to follow in the same answer.
    }
    if (set_address_port(&a, port)) ++*count;
  }
  ares_dns_record_destroy(record);
  return ResolveError::kNone;
}

#else  // !STEPBACK_HAVE_CARES

ResolveError parse_dns_answer(const std::uint8_t*, std::size_t, int, std::uint16_t, SocketAddress*,
                              std::size_t, std::size_t*) {
  return ResolveError::kInternal;
}

#endif  // STEPBACK_HAVE_CARES

#if defined(__ANDROID__)

#if __ANDROID_API__ >= 29
namespace {

// Used only by android_res_nquery (API 29): below that level they would be unused.
constexpr int kClassIn = 1;
constexpr int kTypeA = 1;
constexpr int kTypeAaaa = 28;
// A/AAAA answers are a few hundred bytes; a larger one makes android_res_nresult fail
// (a negative errno: kNoNetwork).
constexpr std::size_t kAnswerBuffer = 8192;

}  // namespace
#endif  // __ANDROID_API__ >= 29

void AndroidResolver::start(const char* host, std::uint16_t port, Millis now) {
  cancel();
  result_ = ResolveResult{};
  count_ = 0;
  found_count_[0] = found_count_[1] = 0;
  port_ = port;
  std::snprintf(host_, sizeof host_, "%s", host == nullptr ? "" : host);
  deadline_ = now + limit_;
#if __ANDROID_API__ >= 29
  const int types[2] = {kTypeAaaa, kTypeA};
  for (int i = 0; i < 2; ++i) {
    queries_[i] = Query{};
    // Not blocking: the query is sent and its answer awaited on the returned descriptor.
    const int fd =
        android_res_nquery(static_cast<net_handle_t>(network_), host_, kClassIn, types[i], 0);
    if (fd < 0) {
      queries_[i].os_error = fd;
      queries_[i].error = ResolveError::kNoNetwork;
    } else {
      queries_[i].fd = fd;
    }
  }
  pending_ = true;
  finish();  // Ends at once if neither query could be sent.
#else
  (void)port;
  result_.error = ResolveError::kInternal;
  std::snprintf(message_, sizeof message_,
                "cannot look up '%.200s': android_res_nquery needs API 29; this build targets "
                "API %d (use a SystemResolver)",
                host_, __ANDROID_API__);
  result_.message = message_;
#endif
}

ResolverNext AndroidResolver::step(Millis now) {
  if (!pending_) return ResolverNext{};
#if __ANDROID_API__ >= 29
  if (now >= deadline_) {
    for (Query& q : queries_) {
      if (q.fd < 0) continue;
      android_res_cancel(q.fd);  // Closes the descriptor.
      q.fd = -1;
      q.error = ResolveError::kTimeout;
      q.os_error = -ETIMEDOUT;
    }
    finish();
    return ResolverNext{};
  }
  for (std::size_t i = 0; i < 2; ++i) {
    Query& q = queries_[i];
    if (q.fd < 0) continue;
    pollfd p{q.fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) continue;  // Zero timeout: never waits.
    std::uint8_t answer[kAnswerBuffer];
    int rcode = -1;
    const int n = android_res_nresult(q.fd, &rcode, answer, sizeof answer);  // Closes fd.
    q.fd = -1;
    q.rcode = rcode;
    if (n < 0) {
      q.os_error = n;
      q.error = n == -ETIMEDOUT ? ResolveError::kTimeout : ResolveError::kNoNetwork;
      continue;
    }
    q.error = parse_dns_answer(answer, static_cast<std::size_t>(n), rcode, port_, found_[i],
                               kMaxAddresses, &found_count_[i]);
  }
  finish();
  if (!pending_) return ResolverNext{};
  ResolverNext next;
  next.kind = ResolverNext::Kind::kWaitIo;
  next.interest = IoInterest::kRead;
  next.at = deadline_;
  std::size_t open = 0;
  for (const Query& q : queries_) {
    if (q.fd < 0) continue;
    if (open++ == 0) next.fd = q.fd;
  }
  // Two descriptors, one named to the loop: the other is polled at each step.
  if (open > 1) next.at = min(next.at, now + Millis(10));
  return next;
#else
  (void)now;
  return ResolverNext{};
#endif
}

void AndroidResolver::cancel() {
#if __ANDROID_API__ >= 29
  for (Query& q : queries_) {
    if (q.fd >= 0) android_res_cancel(q.fd);
    q.fd = -1;
  }
#endif
  if (pending_) {
    pending_ = false;
    result_ = ResolveResult{};
    result_.error = ResolveError::kCancelled;
    std::snprintf(message_, sizeof message_, "the lookup of '%.200s' was cancelled", host_);
    result_.message = message_;
  }
}

void AndroidResolver::finish() {
  for (const Query& q : queries_) {
    if (q.fd >= 0) return;  // Still waiting for one.
  }
  pending_ = false;
  result_ = ResolveResult{};
  // Each answer was kept whole: both families fit in addresses_, whichever came first.
  std::size_t v6 = 0;
  std::size_t all = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::size_t k = 0; k < found_count_[i]; ++k) {
      if (address_family(found_[i][k]) == AF_INET6) ++v6;
      ++all;
    }
  }
  FamilyQuota left = family_quota(v6, all - v6, kMaxAddresses);
  count_ = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::size_t k = 0; k < found_count_[i]; ++k) {
      std::size_t& room = address_family(found_[i][k]) == AF_INET6 ? left.v6 : left.v4;
      if (room == 0) continue;
      --room;
      addresses_[count_++] = found_[i][k];
    }
  }
  if (count_ > 0) {
    result_.addresses = addresses_;
    result_.count = count_;
    return;
  }
  // No address: a transient failure of either query wins (a retry may help); then NXDOMAIN;
  // else the name has no address of either family.
  const Query* worst = nullptr;
  for (const Query& q : queries_) {
    if (q.error != ResolveError::kNone && !is_definite(q.error)) worst = &q;
  }
  for (const Query& q : queries_) {
    if (worst == nullptr && q.error == ResolveError::kNxDomain) worst = &q;
  }
  result_.error = worst != nullptr ? worst->error : ResolveError::kNoData;
  if (result_.error == ResolveError::kNoNetwork) {
    // Neither query found a path from this device (the network is down or has no route).
    bool unreachable = true;
    for (const Query& q : queries_) {
      unreachable = unreachable && q.os_error < 0 && detail::no_path(-q.os_error);
    }
    result_.unreachable = unreachable;
  }
  const char* os = worst != nullptr && worst->os_error < 0 ? std::strerror(-worst->os_error) : "";
  switch (result_.error) {
    case ResolveError::kNxDomain:
      std::snprintf(message_, sizeof message_,
                    "no such host '%.200s': the DNS server answered NXDOMAIN (Android DnsResolver)",
                    host_);
      break;
    case ResolveError::kNoData:
      std::snprintf(message_, sizeof message_,
                    "host '%.200s' has no IPv4 or IPv6 address: no A or AAAA record", host_);
      break;
    case ResolveError::kServerFailure:
      std::snprintf(message_, sizeof message_,
                    "looking up '%.200s' failed: the DNS server answered rcode %d", host_,
                    worst->rcode);
      break;
    default:
      std::snprintf(message_, sizeof message_, "looking up '%.200s' failed: %s%s%.80s", host_,
                    to_string(result_.error), os[0] != '\0' ? ": " : "", os);
      break;
  }
  result_.message = message_;
}

#endif  // __ANDROID__

}  // namespace stepback::https

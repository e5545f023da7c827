#include "stepback/https/dns/cares_resolver.hpp"

#include <cstdio>
#include <cstring>

#include "tcp/socket_length.hpp"

#if defined(STEPBACK_HAVE_CARES)

#include <ares.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "dns/hosts_file.hpp"
#include "tcp/no_path.hpp"

namespace stepback::https {

// dns_pool.cpp: installs the built-in pool unless the app installed one; false if c-ares
// could not be initialized.
bool dns_pool_ensure();

namespace {

// How long the loop may sleep on one socket while c-ares has others open (it names only one
// descriptor to the loop); the others are polled without waiting at each step().
constexpr Millis kOtherSocketsPoll{10};

// The whole milliseconds of `tv`, rounded up so that the loop never wakes a moment early
// and spins.
Millis ceil_millis(const timeval& tv) {
  const std::int64_t us =
      static_cast<std::int64_t>(tv.tv_sec) * 1000000 + static_cast<std::int64_t>(tv.tv_usec);
  return Millis(us <= 0 ? 0 : static_cast<std::uint64_t>((us + 999) / 1000));
}

int to_int(Millis m) {
  const auto count = m.count();
  return count > 0x3fffffff ? 0x3fffffff : static_cast<int>(count);
}

// Whether `name` ends with `suffix` (lower case), ASCII case-insensitively.
bool ends_with_ignoring_case(const char* name, const char* suffix) {
  const std::size_t n = std::strlen(name);
  const std::size_t k = std::strlen(suffix);
  if (k > n) return false;
  for (std::size_t i = 0; i < k; ++i) {
    char c = name[n - k + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

// RFC 6761's localhost names, as c-ares recognizes them: "localhost" and its subdomains.
bool is_localhost_name(const char* name) {
  return ends_with_ignoring_case(name, ".localhost") ||
         (std::strlen(name) == 9 && ends_with_ignoring_case(name, "localhost"));
}

bool holds_family(const SocketAddress* addresses, std::size_t count, int family) {
  for (std::size_t i = 0; i < count; ++i) {
    if (address_family(addresses[i]) == family) return true;
  }
  return false;
}

// Copies the addresses of c-ares's `answer` into `out` (`capacity` slots), each with `port`,
// cut per family_quota() so that a long list of one family leaves the other its room.
// Returns how many it copied.
std::size_t copy_answer(const ares_addrinfo& answer, std::uint16_t port, SocketAddress* out,
                        std::size_t capacity) {
  std::size_t v6 = 0;
  std::size_t v4 = 0;
  for (const ares_addrinfo_node* node = answer.nodes; node != nullptr; node = node->ai_next) {
    if (node->ai_family == AF_INET6) ++v6;
    if (node->ai_family == AF_INET) ++v4;
  }
  FamilyQuota left = family_quota(v6, v4, capacity);
  std::size_t n = 0;
  for (const ares_addrinfo_node* node = answer.nodes; node != nullptr && n < capacity;
       node = node->ai_next) {
    std::size_t& room = node->ai_family == AF_INET6 ? left.v6 : left.v4;
    if (room == 0) continue;
    if (detail::copy_socket_address(node->ai_addr, node->ai_addrlen, port, &out[n])) {
      ++n;
      --room;
    }
  }
  return n;
}

}  // namespace

CaresResolver::~CaresResolver() { destroy(); }

void CaresResolver::destroy() {
  if (channel_ != nullptr) {
    ares_channeldata* channel = channel_;
    ares_destroy(channel);  // Ends a pending lookup through on_answer (ARES_EDESTRUCTION).
    channel_ = nullptr;
  }
  for (Socket& s : sockets_) s = Socket{};
  pending_ = false;
}

Status CaresResolver::init(const CaresOptions& options) {
  destroy();
  init_message_[0] = '\0';
  if (!dns_pool_ensure()) {
    std::snprintf(init_message_, sizeof init_message_,
                  "the DNS resolver could not be initialized (ares_library_init_mem failed)");
    return Status::kError;
  }
  if (options.tries < 1 || options.ndots < 0 || options.try_timeout.count() < 1 ||
      options.max_try < options.try_timeout) {
    std::snprintf(init_message_, sizeof init_message_,
                  "invalid resolver options (tries >= 1, ndots >= 0, 0 < try_timeout <= "
                  "max_try)");
    return Status::kInvalidArgument;
  }
  const bool given_servers = options.servers != nullptr && options.servers[0] != '\0';

  ares_options o{};
  int mask = 0;
  // Names as given only (no search domains, not even the one gethostname() implies, no
  // HOSTALIASES); without given servers, no silent fallback to 127.0.0.1.
  o.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
  if (options.edns_payload > 0) o.flags |= ARES_FLAG_EDNS;
  if (options.tcp_only) o.flags |= ARES_FLAG_USEVC;
  if (!given_servers) o.flags |= ARES_FLAG_NO_DFLT_SVR;
  mask |= ARES_OPT_FLAGS;
  o.timeout = to_int(options.try_timeout);
  mask |= ARES_OPT_TIMEOUTMS;
  o.maxtimeout = to_int(options.max_try);
  mask |= ARES_OPT_MAXTIMEOUTMS;
  o.tries = options.tries;
  mask |= ARES_OPT_TRIES;
  o.ndots = options.ndots;
  mask |= ARES_OPT_NDOTS;
  o.domains = nullptr;
  o.ndomains = 0;
  mask |= ARES_OPT_DOMAINS;
  // DNS only: start() reads the hosts file itself (hosts_file.hpp says why).
  char lookups[] = "b";
  o.lookups = lookups;
  mask |= ARES_OPT_LOOKUPS;
  o.sock_state_cb = &CaresResolver::on_socket_state;
  o.sock_state_cb_data = this;
  mask |= ARES_OPT_SOCK_STATE_CB;
  if (options.edns_payload > 0) {
    o.ednspsz = options.edns_payload;
    mask |= ARES_OPT_EDNSPSZ;
  }
  mask |= ARES_OPT_NOROTATE;
  o.qcache_max_ttl = 0;  // No cache: an answer from an old network is never reused.
  mask |= ARES_OPT_QUERY_CACHE;
  o.udp_max_queries = 0;
  mask |= ARES_OPT_UDP_MAX_QUERIES;
  o.sortlist = nullptr;
  o.nsort = 0;
  mask |= ARES_OPT_SORTLIST;
  o.server_failover_opts.retry_chance = 10;  // c-ares's defaults, stated.
  o.server_failover_opts.retry_delay = 5000;
  mask |= ARES_OPT_SERVER_FAILOVER;
  char resolv_conf[256] = {};
  if (given_servers) {
    // An empty server list keeps resolv.conf's servers out; the given ones replace the
    // placeholder c-ares then adds, below.
    o.servers = nullptr;
    o.nservers = 0;
    mask |= ARES_OPT_SERVERS;
  } else if (options.resolv_conf != nullptr) {
    std::snprintf(resolv_conf, sizeof resolv_conf, "%s", options.resolv_conf);
    o.resolvconf_path = resolv_conf;
    mask |= ARES_OPT_RESOLVCONF;
  }

  ares_channel_t* channel = nullptr;
  const int rc = ares_init_options(&channel, &o, mask);
  if (rc != ARES_SUCCESS) {
    std::snprintf(init_message_, sizeof init_message_, "the DNS resolver could not start: %s%s",
                  ares_strerror(rc),
                  rc == ARES_ENOSERVER ? " (no nameserver in resolv.conf; give servers)" : "");
    return rc == ARES_ENOMEM ? Status::kError
                             : (rc == ARES_ENOSERVER ? Status::kError : Status::kInvalidArgument);
  }
  if (given_servers) {
    const int set = ares_set_servers_ports_csv(channel, options.servers);
    if (set != ARES_SUCCESS) {
      std::snprintf(init_message_, sizeof init_message_, "bad DNS server list '%.80s': %s",
                    options.servers, ares_strerror(set));
      ares_destroy(channel);
      return Status::kInvalidArgument;
    }
  }
  ares_set_socket_configure_callback(channel, &CaresResolver::on_socket_configure, this);
  channel_ = channel;
  limit_ = options.limit;
  hosts_file_ = options.hosts_file;
  return Status::kOk;
}

void CaresResolver::start(const char* host, std::uint16_t port, Millis now) {
  cancel();
  result_ = ResolveResult{};
  message_[0] = '\0';
  std::snprintf(host_, sizeof host_, "%s", host == nullptr ? "" : host);
  port_ = port;
  timed_out_ = false;
  out_of_memory_ = false;
  bind_error_ = 0;
  deadline_ = limit_.count() > 0 ? now + limit_ : Millis::max();
  if (channel_ == nullptr) {
    result_.error = ResolveError::kInternal;
    std::snprintf(message_, sizeof message_, "cannot look up '%.200s': %.100s", host_,
                  init_message_[0] != '\0' ? init_message_ : "the resolver was not initialized");
    result_.message = message_;
    return;
  }
  if (hosts_file_ && answer_from_hosts_file()) return;
  ares_addrinfo_hints hints{};
  hints.ai_family = AF_UNSPEC;  // AAAA and A, asked together.
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  pending_ = true;
  // May answer at once (a malformed name, an exhausted pool).
  ares_getaddrinfo(channel_, host_, nullptr, &hints, &CaresResolver::on_answer, this);
}

bool CaresResolver::answer_from_hosts_file() {
  // c-ares answers NXDOMAIN for .onion names before it reads anything (RFC 7686).
  if (ends_with_ignoring_case(host_, ".onion") || ends_with_ignoring_case(host_, ".onion.")) {
    return false;
  }
  detail::HostsSearch search(host_, port_, addresses_, kMaxAddresses);
  // As with c-ares, a file that cannot be read names nothing and the name goes to DNS.
  if (!detail::read_hosts_file(detail::kHostsPath, &search)) search.clear();
  if (is_localhost_name(host_)) {
    // RFC 6761 as c-ares applied it: a localhost name always has the loopback address of
    // each family the hosts file gives it none of, and is never asked of DNS.
    SocketAddress loopback;
    if (!holds_family(addresses_, search.count(), AF_INET6) &&
        parse_numeric_address("::1", port_, &loopback) == Status::kOk) {
      search.offer(loopback);
    }
    if (!holds_family(addresses_, search.count(), AF_INET) &&
        parse_numeric_address("127.0.0.1", port_, &loopback) == Status::kOk) {
      search.offer(loopback);
    }
  }
  if (search.count() == 0) return false;
  result_.error = ResolveError::kNone;
  result_.addresses = addresses_;
  result_.count = search.count();
  return true;
}

ResolverNext CaresResolver::step(Millis now) {
  if (!pending_) return ResolverNext{};
  if (now >= deadline_) {
    timed_out_ = true;
    ares_cancel(channel_);  // Ends the lookup through on_answer (ARES_ECANCELLED).
    return ResolverNext{};
  }
  // Which of c-ares's sockets are ready, without waiting (poll with a zero timeout).
  pollfd fds[kMaxSockets];
  nfds_t n = 0;
  for (const Socket& s : sockets_) {
    if (s.fd < 0) continue;
    fds[n].fd = s.fd;
    fds[n].events = static_cast<decltype(pollfd::events)>(
        ((static_cast<unsigned>(s.interest) & static_cast<unsigned>(IoInterest::kRead)) != 0
             ? POLLIN
             : 0) |
        ((static_cast<unsigned>(s.interest) & static_cast<unsigned>(IoInterest::kWrite)) != 0
             ? POLLOUT
             : 0));
    fds[n].revents = 0;
    ++n;
  }
  ares_fd_events_t events[kMaxSockets];
  std::size_t ready = 0;
  if (n > 0 && poll(fds, n, 0) > 0) {
    for (nfds_t i = 0; i < n; ++i) {
      unsigned e = 0;
      if ((fds[i].revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) != 0) e |= ARES_FD_EVENT_READ;
      if ((fds[i].revents & POLLOUT) != 0) e |= ARES_FD_EVENT_WRITE;
      if (e == 0) continue;
      events[ready].fd = fds[i].fd;
      events[ready].events = e;
      ++ready;
    }
  }
  // Reads what arrived, sends what is due, and runs c-ares's own timeouts. Out of pool, c-ares
  // drops the connection and would try again later; the lookup ends here instead.
  if (ares_process_fds(channel_, events, ready, ARES_PROCESS_FLAG_NONE) == ARES_ENOMEM &&
      pending_) {
    out_of_memory_ = true;
    ares_cancel(channel_);
  }
  if (!pending_) return ResolverNext{};

  Millis at = deadline_;
  timeval tv{};
  if (ares_timeout(channel_, nullptr, &tv) != nullptr) at = min(at, now + ceil_millis(tv));
  ResolverNext next;
  next.at = at;
  std::size_t open = 0;
  for (const Socket& s : sockets_) {
    if (s.fd < 0 || s.interest == IoInterest::kNone) continue;
    if (open++ == 0) {
      next.fd = s.fd;
      next.interest = s.interest;
    }
  }
  if (open > 1) next.at = min(next.at, now + kOtherSocketsPoll);
  next.kind = open > 0 ? ResolverNext::Kind::kWaitIo : ResolverNext::Kind::kWaitUntil;
  return next;
}

void CaresResolver::cancel() {
  if (pending_ && channel_ != nullptr) ares_cancel(channel_);
  pending_ = false;
}

void CaresResolver::network_changed() {
  cancel();
  // Without c-ares's threads this reads resolv_conf here, synchronously (outside step()).
  if (channel_ != nullptr) (void)ares_reinit(channel_);
}

int CaresResolver::on_socket_configure(int fd, int /*type*/, void* self) {
  auto* r = static_cast<CaresResolver*>(self);
  if (r->binding_ == nullptr) return 0;
  const int error = apply_binding(*r->binding_, fd);
  if (error != 0) r->bind_error_ = error;
  return error != 0 ? -1 : 0;
}

void CaresResolver::on_socket_state(void* self, int fd, int readable, int writable) {
  auto* r = static_cast<CaresResolver*>(self);
  const auto interest = static_cast<IoInterest>((readable != 0 ? 1 : 0) | (writable != 0 ? 2 : 0));
  Socket* slot = nullptr;
  for (Socket& s : r->sockets_) {
    if (s.fd == fd) slot = &s;
  }
  if (slot == nullptr && interest != IoInterest::kNone) {
    for (Socket& s : r->sockets_) {
      if (s.fd < 0) {
        slot = &s;
        break;
      }
    }
    // More sockets than slots: the extra one is still served, by c-ares's timeouts.
    if (slot == nullptr) return;
  }
  if (slot == nullptr) return;
  if (interest == IoInterest::kNone) {
    *slot = Socket{};
  } else {
    slot->fd = fd;
    slot->interest = interest;
  }
}

bool CaresResolver::no_server_reachable() const {
  // The bound device refused the sockets: it is gone (ENODEV), or the app's hook said no.
  if (bind_error_ != 0) return detail::no_path(bind_error_);
  char* csv = ares_get_servers_csv(channel_);  // From the pool, like all of c-ares's memory.
  if (csv == nullptr) return false;
  bool none = csv[0] != '\0';
  // "127.0.0.1:53,[::1]:53": each server's address, its port and zone left off.
  for (const char* at = csv; none && *at != '\0';) {
    const char* end = std::strchr(at, ',');
    const std::size_t size = end != nullptr ? static_cast<std::size_t>(end - at) : std::strlen(at);
    char host[64] = {};
    if (size < sizeof host) {
      (void)std::snprintf(host, sizeof host, "%.*s", static_cast<int>(size), at);
      if (host[0] == '[') {
        char* close = std::strchr(host, ']');
        if (close != nullptr) *close = '\0';
        std::memmove(host, host + 1, std::strlen(host + 1) + 1);
      } else if (char* colon = std::strchr(host, ':');
                 colon != nullptr && std::strchr(colon + 1, ':') == nullptr) {
        *colon = '\0';  // IPv4 with a port; a bare IPv6 address has several.
      }
      if (char* zone = std::strchr(host, '%')) *zone = '\0';
      none = !has_path(host);
    } else {
      none = false;
    }
    at += size;
    if (*at == ',') ++at;
  }
  ares_free_string(csv);
  return none;
}

bool CaresResolver::has_path(const char* server) const {
  SocketAddress address;
  if (parse_numeric_address(server, 53, &address) != Status::kOk) return true;  // Unknown.
  // A UDP connect() sends nothing: it asks the routing table, as a query would, and fails at
  // once where there is no route.
  const int fd = ::socket(address_family(address), SOCK_DGRAM, 0);
  if (fd < 0) return true;
  int error = binding_ != nullptr ? apply_binding(*binding_, fd) : 0;
  if (error == 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(address.bytes),
                              detail::to_socket_length<socklen_t>(address.size)) != 0) {
    error = errno;
  }
  ::close(fd);
  return !detail::no_path(error);
}

void CaresResolver::on_answer(void* self, int status, int /*timeouts*/, ares_addrinfo* result) {
  static_cast<CaresResolver*>(self)->finish(status, result);
}

void CaresResolver::finish(int status, ares_addrinfo* answer) {
  pending_ = false;
  result_ = ResolveResult{};
  const std::size_t n = status == ARES_SUCCESS && answer != nullptr
                            ? copy_answer(*answer, port_, addresses_, kMaxAddresses)
                            : 0;
  if (answer != nullptr) ares_freeaddrinfo(answer);

  const ResolveError e = error_of(status, n);
  result_.error = e;
  if (e == ResolveError::kNoNetwork) result_.unreachable = no_server_reachable();
  if (e == ResolveError::kNone) {
    result_.addresses = addresses_;
    result_.count = n;
    return;
  }
  describe_failure(e, status);
  result_.message = message_;
}

ResolveError CaresResolver::error_of(int status, std::size_t count) const {
  switch (status) {
    case ARES_SUCCESS:
      return count > 0 ? ResolveError::kNone : ResolveError::kNoData;
    case ARES_ENOTFOUND:
      return ResolveError::kNxDomain;
    case ARES_ENODATA:
      return ResolveError::kNoData;
    case ARES_ETIMEOUT:
      return ResolveError::kTimeout;
    case ARES_ESERVFAIL:
    case ARES_EREFUSED:
    case ARES_ENOTIMP:
      return ResolveError::kServerFailure;
    case ARES_EFORMERR:
    case ARES_EBADRESP:
      return ResolveError::kBadResponse;
    case ARES_ECONNREFUSED:
    case ARES_ENOSERVER:
      return ResolveError::kNoNetwork;
    case ARES_ENOMEM:
      return ResolveError::kOutOfMemory;
    case ARES_EBADNAME:
    case ARES_EBADQUERY:
      return ResolveError::kInvalidName;
    case ARES_ECANCELLED:
    case ARES_EDESTRUCTION:
      return out_of_memory_ ? ResolveError::kOutOfMemory
                            : (timed_out_ ? ResolveError::kTimeout : ResolveError::kCancelled);
    default:
      return ResolveError::kInternal;
  }
}

void CaresResolver::describe_failure(ResolveError e, int status) {
  const char* words = ares_strerror(status);
  const char* h = host_;
  switch (e) {
    case ResolveError::kNxDomain:
      std::snprintf(message_, sizeof message_,
                    "no such host '%.200s': the DNS server answered NXDOMAIN (resolver: %.60s)", h,
                    words);
      break;
    case ResolveError::kNoData:
      std::snprintf(
          message_, sizeof message_,
          "host '%.200s' has no IPv4 or IPv6 address: no A or AAAA record (resolver: %.60s)", h,
          words);
      break;
    case ResolveError::kTimeout:
      describe_timeout(words);
      break;
    case ResolveError::kServerFailure:
      std::snprintf(
          message_, sizeof message_,
          "looking up '%.200s' failed: the DNS server answered %s (resolver: %.60s)", h,
          status == ARES_EREFUSED ? "REFUSED" : (status == ARES_ENOTIMP ? "NOTIMP" : "SERVFAIL"),
          words);
      break;
    case ResolveError::kBadResponse:
      std::snprintf(
          message_, sizeof message_,
          "looking up '%.200s' failed: the DNS server's answer was malformed (resolver: %.60s)", h,
          words);
      break;
    case ResolveError::kNoNetwork:
      describe_no_network(words);
      break;
    case ResolveError::kOutOfMemory:
      std::snprintf(
          message_, sizeof message_,
          "looking up '%.200s' failed: the resolver's memory pool (%zu bytes) is exhausted", h,
          dns_pool_stats().capacity);
      break;
    case ResolveError::kInvalidName:
      std::snprintf(message_, sizeof message_,
                    "'%.200s' is not a valid host name (resolver: %.60s)", h, words);
      break;
    case ResolveError::kCancelled:
      std::snprintf(message_, sizeof message_, "the lookup of '%.200s' was cancelled", h);
      break;
    case ResolveError::kNone:
    case ResolveError::kInternal:
      std::snprintf(message_, sizeof message_, "looking up '%.200s' failed (resolver: %.60s)", h,
                    words);
      break;
  }
}

void CaresResolver::describe_timeout(const char* words) {
  if (timed_out_) {
    std::snprintf(message_, sizeof message_,
                  "looking up '%.200s' took longer than the resolver's limit of %lld ms", host_,
                  static_cast<long long>(limit_.count()));
  } else {
    std::snprintf(message_, sizeof message_,
                  "looking up '%.200s' timed out: no DNS server answered (resolver: %.60s)", host_,
                  words);
  }
}

void CaresResolver::describe_no_network(const char* words) {
  if (bind_error_ != 0) {
    std::snprintf(message_, sizeof message_,
                  "looking up '%.200s' failed: no DNS server could be reached over device "
                  "'%.16s' (%.60s)",
                  host_,
                  binding_ != nullptr && binding_->interface != nullptr ? binding_->interface : "",
                  std::strerror(bind_error_));
  } else {
    std::snprintf(message_, sizeof message_,
                  "looking up '%.200s' failed: no DNS server could be reached (resolver: %.60s)",
                  host_, words);
  }
}

}  // namespace stepback::https

#else  // !STEPBACK_HAVE_CARES: built without c-ares (-DSTEPBACK_CARES=OFF); every lookup fails.

namespace stepback::https {

CaresResolver::~CaresResolver() = default;
void CaresResolver::destroy() {}

Status CaresResolver::init(const CaresOptions& /*options*/) {
  std::snprintf(init_message_, sizeof init_message_,
                "stepback was built without c-ares (STEPBACK_CARES=OFF); give the connector a "
                "Resolver");
  return Status::kError;
}

void CaresResolver::start(const char* host, std::uint16_t /*port*/, Millis /*now*/) {
  result_ = ResolveResult{};
  result_.error = ResolveError::kInternal;
  std::snprintf(message_, sizeof message_, "cannot look up '%s': %s", host == nullptr ? "" : host,
                "stepback was built without c-ares; give the connector a Resolver");
  result_.message = message_;
}

ResolverNext CaresResolver::step(Millis /*now*/) { return ResolverNext{}; }
void CaresResolver::cancel() {}
void CaresResolver::network_changed() {}
void CaresResolver::on_socket_state(void*, int, int, int) {}
int CaresResolver::on_socket_configure(int, int, void*) { return 0; }
void CaresResolver::on_answer(void*, int, int, ares_addrinfo*) {}
void CaresResolver::finish(int, ares_addrinfo*) {}

Status dns_pool_init(MutableBytes /*buffer*/) { return Status::kError; }
DnsPoolStats dns_pool_stats() { return DnsPoolStats{}; }

}  // namespace stepback::https

#endif  // STEPBACK_HAVE_CARES

#include "stepback/https/dns/system_resolver.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "stepback/https/tcp/address.hpp"
#include "tcp/no_path.hpp"
#include "tcp/socket_length.hpp"

#if defined(__linux__)
#include <sys/eventfd.h>
#endif
#if defined(__ANDROID__) && __ANDROID_API__ >= 23
#include <android/multinetwork.h>
#endif

namespace stepback::https {

namespace {

int system_lookup(std::uint64_t network, const char* host, const addrinfo* hints, addrinfo** out) {
#if defined(__ANDROID__) && __ANDROID_API__ >= 23
  return android_getaddrinfofornetwork(static_cast<net_handle_t>(network), host, nullptr, hints,
                                       out);
#else
  (void)network;
  return getaddrinfo(host, nullptr, hints, out);
#endif
}

void system_release(addrinfo* list) { freeaddrinfo(list); }

}  // namespace

// A worker's state, shared by the resolver (the loop's thread) and the worker's thread. The
// fields under `mutex` are the hand-over; the descriptors are made readable when an answer is
// in. Freed by the resolver after joining an idle worker, or by the worker itself when the
// resolver left it busy (`detached`).
struct SystemResolver::Worker {
  pthread_t thread{};
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
  int read_fd = -1;   // Polled by the loop (an eventfd on Linux and Android: the same as write_fd).
  int write_fd = -1;  // Written by the worker after each answer.
  SystemLookup lookup = nullptr;
  SystemLookupFree release = nullptr;

  // Under `mutex`:
  bool has_request = false;    // A lookup is waiting for the worker to take it.
  bool working = false;        // The worker is in the lookup.
  bool quit = false;           // The resolver is gone or re-initialized: the thread ends.
  bool detached = false;       // ... and left this state to the thread to free.
  std::uint32_t ticket = 0;    // The request's (has_request) or the lookup's (working).
  std::uint32_t answered = 0;  // The ticket of the last answer below.
  char host[256] = {};
  std::uint64_t network = 0;
  int status = 0;    // The lookup's EAI_* code, 0 on success.
  int os_error = 0;  // errno after EAI_SYSTEM.
  SocketAddress found[Resolver::kMaxAddresses];
  std::size_t count = 0;

  // Made and freed with malloc and free: the library references no C++ runtime.
  static Worker* make() {
    void* memory = std::malloc(sizeof(Worker));
    return memory == nullptr ? nullptr : new (memory) Worker;
  }
  static void destroy(Worker* w) {
    if (w == nullptr) return;
    w->~Worker();
    std::free(w);
  }

  ~Worker() {
    if (read_fd >= 0) close(read_fd);
    if (write_fd >= 0 && write_fd != read_fd) close(write_fd);
    pthread_cond_destroy(&wake);
    pthread_mutex_destroy(&mutex);
  }

  // Makes the descriptors; false when none could be made.
  bool open_descriptors() {
#if defined(__linux__)
    read_fd = write_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return read_fd >= 0;
#else
    int fds[2];
    if (pipe(fds) != 0) return false;
    for (int fd : fds) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
      fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    read_fd = fds[0];
    write_fd = fds[1];
    return true;
#endif
  }

  // Empties the descriptor (non-blocking).
  void drain() const {
    std::uint8_t buffer[64];
    while (read(read_fd, buffer, sizeof buffer) > 0) {
    }
  }

  // Makes the descriptor readable (non-blocking; an eventfd counter or a pipe that already
  // holds bytes needs no more).
  void signal() const {
#if defined(__linux__)
    using Token = std::uint64_t;  // An eventfd takes eight bytes, added to its count.
#else
    using Token = std::uint8_t;  // A pipe: any byte makes it readable.
#endif
    const Token one = 1;
    const ssize_t n = write(write_fd, &one, sizeof one);
    (void)n;  // A full pipe is already readable.
  }

  // Stores the answer `list` (or the failure `status`) of lookup `number`, as the resolver
  // takes it: both families per family_quota(), each address once, in the system's order.
  void store(std::uint32_t number, int lookup_status, int error, const addrinfo* list) {
    status = lookup_status;
    os_error = error;
    count = 0;
    std::size_t v6 = 0;
    std::size_t all = 0;
    for (const addrinfo* a = list; a != nullptr; a = a->ai_next) {
      if (a->ai_family == AF_INET6) ++v6;
      if (a->ai_family == AF_INET6 || a->ai_family == AF_INET) ++all;
    }
    FamilyQuota left = family_quota(v6, all - v6, Resolver::kMaxAddresses);
    for (const addrinfo* a = list; a != nullptr; a = a->ai_next) {
      if (a->ai_family != AF_INET6 && a->ai_family != AF_INET) continue;
      std::size_t& room = a->ai_family == AF_INET6 ? left.v6 : left.v4;
      SocketAddress s;  // Its port is start()'s, set when the loop takes the answer.
      if (room == 0 || !detail::copy_socket_address(a->ai_addr, a->ai_addrlen, 0, &s)) continue;
      bool seen = false;
      for (std::size_t i = 0; i < count && !seen; ++i) {
        seen = found[i].size == s.size && std::memcmp(found[i].bytes, s.bytes, s.size) == 0;
      }
      if (seen) continue;
      --room;
      found[count++] = s;
    }
    answered = number;
  }

  static void* run(void* self) {
    static_cast<Worker*>(self)->loop();
    return nullptr;
  }

  void loop() {
    pthread_mutex_lock(&mutex);
    for (;;) {
      while (!has_request && !quit) pthread_cond_wait(&wake, &mutex);
      if (quit) break;
      has_request = false;
      working = true;
      const std::uint32_t number = ticket;
      char name[sizeof host];
      std::memcpy(name, host, sizeof name);
      const std::uint64_t on = network;
      pthread_mutex_unlock(&mutex);

      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;  // One entry per address (not one per socket type).
      // No AI_ADDRCONFIG: it hides 127.0.0.1 and ::1 on a machine with no other network.
      addrinfo* list = nullptr;
      errno = 0;
      const int got = lookup(on, name, &hints, &list);
      const int error = errno;

      pthread_mutex_lock(&mutex);
      store(number, got, error, got == 0 ? list : nullptr);
      // Signalled before the worker counts as idle: a resolver that finds it idle and
      // drains its descriptor never sees this answer's wake-up afterwards.
      signal();
      working = false;
      pthread_mutex_unlock(&mutex);
      if (got == 0 && list != nullptr) release(list);
      pthread_mutex_lock(&mutex);
    }
    const bool free_self = detached;
    pthread_mutex_unlock(&mutex);
    if (free_self) destroy(this);
  }
};

SystemResolver::~SystemResolver() { shut_down(); }

void SystemResolver::shut_down() {
  cancel();
  for (std::size_t i = 0; i < worker_count_; ++i) {
    Worker* w = workers_[i];
    pthread_mutex_lock(&w->mutex);
    const bool busy = w->working;
    w->quit = true;
    w->detached = busy;
    const pthread_t thread = w->thread;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->mutex);
    if (busy) {
      pthread_detach(thread);  // The thread frees `w` when its lookup returns.
    } else {
      pthread_join(thread, nullptr);  // Idle: it ends at once.
      Worker::destroy(w);
    }
    workers_[i] = nullptr;
  }
  worker_count_ = 0;
  active_ = nullptr;
}

Status SystemResolver::init(const SystemResolverOptions& options) {
  shut_down();
  init_message_[0] = '\0';
  if (options.workers < 1 || options.workers > kMaxWorkers || options.limit.count() < 1 ||
      (options.lookup == nullptr) != (options.release == nullptr)) {
    std::snprintf(init_message_, sizeof init_message_,
                  "invalid resolver options (1 to %zu workers, a limit of at least 1 ms, a "
                  "lookup with its release)",
                  kMaxWorkers);
    return Status::kInvalidArgument;
  }
  limit_ = options.limit;
  for (std::size_t i = 0; i < options.workers; ++i) {
    Worker* w = Worker::make();
    if (w == nullptr || !w->open_descriptors()) {
      const int error = w == nullptr ? ENOMEM : errno;
      Worker::destroy(w);
      shut_down();
      std::snprintf(init_message_, sizeof init_message_,
                    "the system resolver's worker could not be set up: %s", std::strerror(error));
      return Status::kError;
    }
    w->lookup = options.lookup != nullptr ? options.lookup : system_lookup;
    w->release = options.release != nullptr ? options.release : system_release;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    const int made = pthread_create(&w->thread, &attr, &Worker::run, w);
    pthread_attr_destroy(&attr);
    if (made != 0) {
      Worker::destroy(w);
      shut_down();
      std::snprintf(init_message_, sizeof init_message_,
                    "the system resolver's worker thread could not be started: %s",
                    std::strerror(made));
      return Status::kError;
    }
    workers_[worker_count_++] = w;
  }
  return Status::kOk;
}

void SystemResolver::set_binding(const NetworkBinding* binding) {
  if (binding != nullptr && binding->network != 0) network_ = binding->network;
}

std::size_t SystemResolver::busy_workers() const {
  std::size_t busy = 0;
  for (std::size_t i = 0; i < worker_count_; ++i) {
    Worker* w = workers_[i];
    pthread_mutex_lock(&w->mutex);
    if (w->working || w->has_request) ++busy;
    pthread_mutex_unlock(&w->mutex);
  }
  return busy;
}

void SystemResolver::start(const char* host, std::uint16_t port, Millis now) {
  cancel();
  result_ = ResolveResult{};
  port_ = port;
  const char* name = host == nullptr ? "" : host;
  std::snprintf(host_, sizeof host_, "%s", name);
  deadline_ = now + limit_;
  const std::size_t length = std::strlen(name);
  // A DNS name is at most 253 characters written out (a trailing dot aside).
  if (length == 0 || length > 254 || (length == 254 && name[253] != '.')) {
    std::snprintf(message_, sizeof message_, "cannot look up '%.200s': not a valid host name",
                  host_);
    fail(ResolveError::kInvalidName);
    return;
  }
  if (!ready()) {
    std::snprintf(message_, sizeof message_,
                  "cannot look up '%.150s': the system resolver is not set up (%.150s)", host_,
                  init_message_[0] != '\0' ? init_message_ : "init() was not called");
    fail(ResolveError::kInternal);
    return;
  }
  ++ticket_;
  pending_ = true;
  dispatch();  // With every worker busy, step() hands it over when one is idle.
}

bool SystemResolver::dispatch() {
  for (std::size_t i = 0; i < worker_count_; ++i) {
    Worker* w = workers_[i];
    pthread_mutex_lock(&w->mutex);
    const bool idle = !w->working && !w->has_request;
    if (idle) {
      w->drain();  // An earlier answer's wake-up, already signalled (see Worker::loop).
      std::memcpy(w->host, host_, sizeof w->host);
      w->network = network_;
      w->ticket = ticket_;
      w->has_request = true;
      pthread_cond_signal(&w->wake);
    }
    pthread_mutex_unlock(&w->mutex);
    if (idle) {
      active_ = w;
      return true;
    }
  }
  return false;
}

ResolverNext SystemResolver::step(Millis now) {
  if (!pending_) return ResolverNext{};
  if (active_ == nullptr && !dispatch()) {
    if (now >= deadline_) {
      std::snprintf(message_, sizeof message_,
                    "looking up '%.200s' failed: timeout (all %zu workers of the system "
                    "resolver were still in earlier lookups after %lld ms)",
                    host_, worker_count_, static_cast<long long>(limit_.count()));
      fail(ResolveError::kTimeout);
      return ResolverNext{};
    }
    // Every worker is busy with an abandoned lookup: sleep on one's descriptor, and look at
    // the others now and then.
    ResolverNext next;
    next.kind = ResolverNext::Kind::kWaitIo;
    next.fd = workers_[0]->read_fd;
    next.interest = IoInterest::kRead;
    next.at = min(deadline_, now + Millis(50));
    return next;
  }
  Worker* w = active_;
  w->drain();  // Before looking: an answer that lands after this makes it readable again.
  pthread_mutex_lock(&w->mutex);
  const bool in = w->answered == ticket_ && !w->working && !w->has_request;
  pthread_mutex_unlock(&w->mutex);
  if (in) {
    finish(w);  // The worker is idle: nothing writes its answer now.
    return ResolverNext{};
  }
  if (now >= deadline_) {
    std::snprintf(message_, sizeof message_,
                  "looking up '%.200s' failed: timeout (the system resolver did not answer "
                  "within %lld ms)",
                  host_, static_cast<long long>(limit_.count()));
    abandon();  // The worker finishes the call and drops the answer.
    fail(ResolveError::kTimeout);
    return ResolverNext{};
  }
  ResolverNext next;
  next.kind = ResolverNext::Kind::kWaitIo;
  next.fd = w->read_fd;
  next.interest = IoInterest::kRead;
  next.at = deadline_;
  return next;
}

void SystemResolver::abandon() {
  if (active_ == nullptr) return;
  Worker* w = active_;
  pthread_mutex_lock(&w->mutex);
  // Not taken yet: withdrawn, and the worker stays idle.
  if (w->has_request && w->ticket == ticket_) w->has_request = false;
  pthread_mutex_unlock(&w->mutex);
  active_ = nullptr;
}

void SystemResolver::cancel() {
  abandon();
  if (pending_) {
    std::snprintf(message_, sizeof message_, "the lookup of '%.200s' was cancelled", host_);
    fail(ResolveError::kCancelled);
  }
}

void SystemResolver::fail(ResolveError error) {
  pending_ = false;
  active_ = nullptr;
  result_ = ResolveResult{};
  result_.error = error;
  result_.message = message_;
}

void SystemResolver::finish(Worker* w) {
  pending_ = false;
  active_ = nullptr;
  result_ = ResolveResult{};
  std::size_t count = 0;
  for (std::size_t i = 0; i < w->count; ++i) {
    addresses_[count] = w->found[i];
    if (set_address_port(&addresses_[count], port_)) ++count;
  }
  if (w->status == 0 && count > 0) {
    result_.addresses = addresses_;
    result_.count = count;
    return;
  }
  const int status = w->status;
  ResolveError error = ResolveError::kInternal;
  switch (status) {
    case EAI_NONAME:
      error = ResolveError::kNxDomain;
      break;
#if defined(EAI_NODATA) && EAI_NODATA != EAI_NONAME
    case EAI_NODATA:
#endif
#if defined(EAI_ADDRFAMILY)
    case EAI_ADDRFAMILY:
#endif
    case 0:  // An answer without an IPv4 or IPv6 address.
      error = ResolveError::kNoData;
      break;
    case EAI_AGAIN:
      error = ResolveError::kTimeout;  // glibc and bionic: no server answered, or SERVFAIL.
      break;
    case EAI_FAIL:
      error = ResolveError::kServerFailure;
      break;
    case EAI_MEMORY:
      error = ResolveError::kOutOfMemory;
      break;
    case EAI_SYSTEM:
      error = ResolveError::kNoNetwork;
      result_.unreachable = detail::no_path(w->os_error);
      break;
    default:
      break;
  }
  result_.error = error;
  const char* words = status == 0 ? "no IPv4 or IPv6 address" : gai_strerror(status);
  if (status == EAI_SYSTEM && w->os_error != 0) words = std::strerror(w->os_error);
  if (error == ResolveError::kNxDomain) {
    std::snprintf(message_, sizeof message_,
                  "no such host '%.200s': the system resolver found no such name (%s)", host_,
                  words);
  } else {
    std::snprintf(message_, sizeof message_, "looking up '%.200s' failed: %s (system resolver: %s)",
                  host_, to_string(error), words);
  }
  result_.message = message_;
}

}  // namespace stepback::https

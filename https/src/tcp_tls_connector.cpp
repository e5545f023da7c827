#include "stepback/https/tcp_tls_connector.hpp"

#include <cstdio>
#include <cstring>

namespace stepback::https {
namespace {

// The connector's status for a lookup that failed with `e`: definite answers about the name
// are the caller's error (terminal); the rest is a transient lookup failure (retried).
Status lookup_status(ResolveError e) {
  return is_definite(e) ? Status::kInvalidArgument : Status::kDnsFailed;
}

}  // namespace

Status TcpTlsConnector::open(const Url& url, const char* host, Millis now,
                             const Timeouts& timeouts) {
  close();
  message_[0] = '\0';
  resumed_ = false;
  use_tls_ = url.tls;
  host_ = host;
  handshake_timeout_ = timeouts.tls_handshake;
  handshake_deadline_ = Millis::max();
  connect_timeout_ = timeouts.connect;
  // The lookup and the connect share the connect timeout, as curl's --connect-timeout does.
  resolve_deadline_ = now + timeouts.connect;
  port_ = url.port;
  if (use_tls_ && tls_ == nullptr)
    return fail(Status::kInvalidArgument, "https needs a TLS configuration");
  if (host == nullptr || host[0] == '\0' || url.port == 0) {
    return fail(Status::kInvalidArgument, "no host or port to connect to");
  }
  if (is_numeric_host(host)) {
    SocketAddress address;
    if (parse_numeric_address(host, url.port, &address) != Status::kOk) {
      std::snprintf(message_, sizeof message_, "'%.200s' is not a valid IP address", host);
      return fail(Status::kInvalidArgument, message_);
    }
    return start_connect(&address, 1, now);
  }
  phase_ = Phase::kResolving;
  resolving_ = ResolverNext{};
  resolver().start(host, url.port, now);
  return Status::kOk;
}

Resolver& TcpTlsConnector::resolver() {
  if (resolver_ != nullptr) return *resolver_;
  if (!own_resolver_tried_) {
    // Reads resolv.conf once; a failure is reported by the lookup (kInternal, with why).
    own_resolver_tried_ = true;
    (void)own_resolver_.init(CaresOptions{});
  }
  return own_resolver_;
}

Status TcpTlsConnector::start_connect(const SocketAddress* addresses, std::size_t count,
                                      Millis now) {
  phase_ = Phase::kConnecting;
  if (now >= resolve_deadline_) {
    std::snprintf(message_, sizeof message_,
                  "looking up '%.200s' took the whole connect timeout (%lld ms)", host_,
                  static_cast<long long>(connect_timeout_.count()));
    return fail(Status::kConnectTimeout, message_);
  }
  const Status s = tcp_.start(addresses, count, now, resolve_deadline_ - now);
  if (s != Status::kOk && s != Status::kWouldBlock) return connect_failed(s);
  return Status::kOk;
}

Status TcpTlsConnector::step_resolve(Millis now) {
  Resolver& r = resolver();
  resolving_ = r.step(now);
  if (resolving_.kind != ResolverNext::Kind::kDone) {
    if (now < resolve_deadline_) return Status::kWouldBlock;
    r.cancel();
    std::snprintf(message_, sizeof message_,
                  "looking up '%.200s' took longer than the connect timeout (%lld ms)", host_,
                  static_cast<long long>(connect_timeout_.count()));
    return fail(Status::kDnsFailed, message_);
  }
  const ResolveResult& result = r.result();
  if (result.error != ResolveError::kNone || result.count == 0) {
    return fail(lookup_status(result.error),
                result.message[0] != '\0' ? result.message : "name lookup failed");
  }
  const Status s = start_connect(result.addresses, result.count, now);
  return s == Status::kOk ? Status::kWouldBlock : s;
}

Status TcpTlsConnector::step(Millis now) {
  if (phase_ == Phase::kResolving) {
    const Status s = step_resolve(now);
    // Connecting has begun: go on with it in this same step (it may have connected at once).
    if (s != Status::kWouldBlock || phase_ == Phase::kResolving) return s;
  }
  if (phase_ == Phase::kConnecting) {
    const Status s = tcp_.step_connect(now);
    if (s == Status::kWouldBlock) return s;
    if (s != Status::kOk) return connect_failed(s);
    if (!use_tls_) {
      phase_ = Phase::kReady;
      return Status::kOk;
    }
    const Status started = tls_stream_.start(tcp_, *tls_, host_, &session_);
    if (started != Status::kOk) return fail(started, tls_stream_.failure_message());
    phase_ = Phase::kHandshaking;
    handshake_deadline_ = now + handshake_timeout_;
  }
  if (phase_ == Phase::kHandshaking) {
    const Status s = tls_stream_.handshake();
    if (s == Status::kWouldBlock) {
      if (now >= handshake_deadline_) return fail(Status::kTimeout, "TLS handshake timed out");
      return s;
    }
    if (s != Status::kOk) return fail(s, tls_stream_.failure_message());
    resumed_ = tls_stream_.resumed();
    (void)tls_stream_.save_session(&session_);
    phase_ = Phase::kReady;
  }
  return phase_ == Phase::kReady ? Status::kOk : Status::kInvalidArgument;
}

int TcpTlsConnector::fd() const {
  if (phase_ == Phase::kResolving) {
    return resolving_.kind == ResolverNext::Kind::kWaitIo ? resolving_.fd : -1;
  }
  // While TCP connects, the TLS transport has no descriptor yet: the socket is the TCP one.
  return phase_ == Phase::kHandshaking || (phase_ == Phase::kReady && use_tls_) ? tls_stream_.fd()
                                                                                : tcp_.fd();
}

IoInterest TcpTlsConnector::wants() const {
  if (phase_ == Phase::kResolving) {
    return resolving_.kind == ResolverNext::Kind::kWaitIo ? resolving_.interest : IoInterest::kNone;
  }
  return phase_ == Phase::kHandshaking || (phase_ == Phase::kReady && use_tls_)
             ? tls_stream_.wants()
             : tcp_.wants();
}

Transport& TcpTlsConnector::stream() {
  if (use_tls_) return tls_stream_;
  return tcp_;
}

Millis TcpTlsConnector::deadline() const {
  if (phase_ == Phase::kResolving) {
    return resolving_.kind == ResolverNext::Kind::kDone ? resolve_deadline_
                                                        : min(resolving_.at, resolve_deadline_);
  }
  return phase_ == Phase::kHandshaking ? handshake_deadline_ : tcp_.deadline();
}

void TcpTlsConnector::exchange_done() {
  if (use_tls_ && phase_ == Phase::kReady) (void)tls_stream_.save_session(&session_);
}

void TcpTlsConnector::close() {
  if (phase_ == Phase::kResolving) resolver().cancel();
  if (use_tls_) tls_stream_.close();
  tcp_.close();
  phase_ = Phase::kIdle;
}

void TcpTlsConnector::network_changed() {
  close();
  // The next name re-initializes the own resolver (resolv.conf may name other servers now);
  // done here, outside step(), so no step() reads the file.
  if (resolver_ == nullptr && own_resolver_tried_) (void)own_resolver_.init(CaresOptions{});
}

Status TcpTlsConnector::connect_failed(Status s) {
  // Every address tried, with the OS's words for each ("Connection refused"), which say more
  // than ours; a name is named too, since its addresses are not what the user typed.
  char tried[304];  // With the host cut to 120 characters, the message fits message_.
  const std::size_t count = tcp_.describe_failure(tried, sizeof tried);
  const bool named = !is_numeric_host(host_);
  const char* verdict = s == Status::kConnectTimeout ? " within the connect timeout" : "";
  if (count > 1) {
    std::snprintf(message_, sizeof message_,
                  "could not connect to %s%.120s%s%s (%zu addresses): %.300s", named ? "'" : "",
                  named ? host_ : "any address", named ? "'" : "", verdict, count, tried);
  } else if (named) {
    std::snprintf(message_, sizeof message_, "could not connect to '%.120s'%s: %.300s", host_,
                  verdict, tried);
  } else {
    std::snprintf(message_, sizeof message_, "could not connect%s: %.300s", verdict, tried);
  }
  return fail(s, message_);
}

Status TcpTlsConnector::fail(Status s, const char* what) {
  if (what != message_) std::snprintf(message_, sizeof message_, "%s", what);
  close();
  return s;
}

}  // namespace stepback::https

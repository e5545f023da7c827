#include "stepback/https/tcp_connector.hpp"

#include <cstdio>

namespace stepback::https {
namespace {

// The connector's status for a lookup that failed with `e`: definite answers about the name
// are the caller's error (terminal); the rest is a transient lookup failure (retried).
Status lookup_status(ResolveError e) {
  return is_definite(e) ? Status::kInvalidArgument : Status::kDnsFailed;
}

}  // namespace

Status TcpConnector::open(const Url& url, const char* host, Millis now, const Timeouts& timeouts) {
  if (url.tls) {
    close();
    return fail(Status::kInvalidArgument,
                "an https:// URL needs TLS: give the Client a TcpTlsConnector");
  }
  return dial(host, url.port, now, timeouts.connect);
}

Status TcpConnector::dial(const char* host, std::uint16_t port, Millis now,
                          Millis connect_timeout) {
  close();
  message_[0] = '\0';
  host_ = host == nullptr ? "" : host;
  connect_timeout_ = connect_timeout;
  // The lookup and the connect share the connect timeout, as curl's --connect-timeout does.
  deadline_ = now + connect_timeout;
  if (host_[0] == '\0' || port == 0) {
    return fail(Status::kInvalidArgument, "no host or port to connect to");
  }
  if (is_numeric_host(host_)) {
    SocketAddress address;
    if (parse_numeric_address(host_, port, &address) != Status::kOk) {
      std::snprintf(message_, sizeof message_, "'%.200s' is not a valid IP address", host_);
      return fail(Status::kInvalidArgument, message_);
    }
    return start_connect(&address, 1, now);
  }
  phase_ = Phase::kResolving;
  resolving_ = ResolverNext{};
  resolver_.start(host_, port, now);
  return Status::kOk;
}

Status TcpConnector::start_connect(const SocketAddress* addresses, std::size_t count, Millis now) {
  phase_ = Phase::kConnecting;
  if (now >= deadline_) {
    std::snprintf(message_, sizeof message_,
                  "looking up '%.200s' took the whole connect timeout (%lld ms)", host_,
                  static_cast<long long>(connect_timeout_.count()));
    return fail(Status::kConnectTimeout, message_);
  }
  const Status s = tcp_.start(addresses, count, now, deadline_ - now);
  if (s != Status::kOk && s != Status::kWouldBlock) return connect_failed(s);
  return Status::kOk;
}

Status TcpConnector::step_resolve(Millis now) {
  resolving_ = resolver_.step(now);
  if (resolving_.kind != ResolverNext::Kind::kDone) {
    if (now < deadline_) return Status::kWouldBlock;
    resolver_.cancel();
    std::snprintf(message_, sizeof message_,
                  "looking up '%.200s' took longer than the connect timeout (%lld ms)", host_,
                  static_cast<long long>(connect_timeout_.count()));
    return fail(Status::kDnsFailed, message_);
  }
  const ResolveResult& result = resolver_.result();
  if (result.error != ResolveError::kNone || result.count == 0) {
    return fail(lookup_status(result.error),
                result.message[0] != '\0' ? result.message : "name lookup failed");
  }
  const Status s = start_connect(result.addresses, result.count, now);
  return s == Status::kOk ? Status::kWouldBlock : s;
}

Status TcpConnector::step(Millis now) {
  if (phase_ == Phase::kResolving) {
    const Status s = step_resolve(now);
    // Connecting has begun: go on with it in this same step (it may have connected at once).
    if (s != Status::kWouldBlock || phase_ == Phase::kResolving) return s;
  }
  if (phase_ == Phase::kConnecting) {
    const Status s = tcp_.step_connect(now);
    if (s == Status::kWouldBlock) return s;
    if (s != Status::kOk) return connect_failed(s);
    phase_ = Phase::kConnected;
  }
  return phase_ == Phase::kConnected ? Status::kOk : Status::kInvalidArgument;
}

int TcpConnector::fd() const {
  if (phase_ == Phase::kResolving) {
    return resolving_.kind == ResolverNext::Kind::kWaitIo ? resolving_.fd : -1;
  }
  return tcp_.fd();
}

IoInterest TcpConnector::wants() const {
  if (phase_ == Phase::kResolving) {
    return resolving_.kind == ResolverNext::Kind::kWaitIo ? resolving_.interest : IoInterest::kNone;
  }
  return tcp_.wants();
}

Millis TcpConnector::deadline() const {
  if (phase_ == Phase::kResolving) {
    return resolving_.kind == ResolverNext::Kind::kDone ? deadline_ : min(resolving_.at, deadline_);
  }
  return tcp_.deadline();
}

void TcpConnector::close() {
  if (phase_ == Phase::kResolving) resolver_.cancel();
  tcp_.close();
  phase_ = Phase::kIdle;
}

void TcpConnector::network_changed() {
  close();
  resolver_.network_changed();
}

Status TcpConnector::connect_failed(Status s) {
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

Status TcpConnector::fail(Status s, const char* what) {
  if (what != message_) std::snprintf(message_, sizeof message_, "%s", what);
  close();
  return s;
}

}  // namespace stepback::https

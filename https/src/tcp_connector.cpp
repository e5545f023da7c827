#include "stepback/https/tcp_connector.hpp"

#include <cstdio>
#include <cstring>

#include "stepback/https/integrity/base64.hpp"
#include "stepback/https/proxy/tunnel.hpp"

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
  const char* target = host == nullptr ? "" : host;
  if (proxy_ != nullptr && uses_proxy(*proxy_, target, url.port)) {
    return dial_to(room_->host_, proxy_->port, now, timeouts.connect, true);
  }
  return dial(host, url.port, now, timeouts.connect);
}

bool TcpConnector::forwards(const Url& url, std::string_view* proxy_authorization) const {
  if (url.tls || proxy_ == nullptr || !uses_proxy(*proxy_, url.host, url.port)) return false;
  if (proxy_authorization != nullptr) *proxy_authorization = room_->authorization_;
  return true;
}

Status TcpConnector::set_binding(const NetworkBinding* binding) {
  if (binding != nullptr && binding->interface != nullptr &&
      std::strlen(binding->interface) >= kInterfaceNameCapacity) {
    tcp_.set_binding(nullptr);
    resolver_.set_binding(nullptr);
    return Status::kInvalidArgument;
  }
  tcp_.set_binding(binding);
  resolver_.set_binding(binding);
  return Status::kOk;
}

Status TcpConnector::set_proxy(const ProxyConfig* proxy, ProxyRoom* room) {
  proxy_ = nullptr;
  room_ = nullptr;
  if (proxy == nullptr || proxy->host.empty()) return Status::kOk;
  if (room == nullptr || proxy->host.size() >= sizeof room->host_) return Status::kInvalidArgument;
  room->host_[0] = '\0';
  room->authorization_[0] = '\0';
  if (!proxy->user.empty()) {
    char credentials[256];
    const std::size_t size = proxy->user.size() + 1 + proxy->password.size();
    if (size > sizeof credentials) return Status::kInvalidArgument;
    std::memcpy(credentials, proxy->user.data(), proxy->user.size());
    credentials[proxy->user.size()] = ':';
    if (!proxy->password.empty()) {
      std::memcpy(credentials + proxy->user.size() + 1, proxy->password.data(),
                  proxy->password.size());
    }
    std::memcpy(room->authorization_, "Basic ", 6);
    const std::size_t n =
        base64_encode(ConstBytes{reinterpret_cast<const std::uint8_t*>(credentials), size},
                      room->authorization_ + 6, sizeof room->authorization_ - 7);
    std::memset(credentials, 0, sizeof credentials);
    if (n == 0) return Status::kInvalidArgument;
    room->authorization_[6 + n] = '\0';
  }
  std::memcpy(room->host_, proxy->host.data(), proxy->host.size());
  room->host_[proxy->host.size()] = '\0';
  room_ = room;
  proxy_ = proxy;
  return Status::kOk;
}

Status TcpConnector::tunnel(const char* host, std::uint16_t port, Millis now,
                            Millis connect_timeout) {
  const char* target = host == nullptr ? "" : host;
  if (proxy_ == nullptr || !uses_proxy(*proxy_, target, port)) {
    return dial(host, port, now, connect_timeout);
  }
  const ConnectRequest request = write_connect_request(target, port, room_->authorization_,
                                                       room_->request_, sizeof room_->request_);
  if (request.size == 0) {
    close();
    return fail(Status::kInvalidArgument, request.error);
  }
  const Status s = dial_to(room_->host_, proxy_->port, now, connect_timeout, true);
  if (s != Status::kOk) return s;
  tunnel_size_ = request.size;
  tunnel_sent_ = 0;
  start_connect_answer(room_->parser_);
  return Status::kOk;
}

Status TcpConnector::dial(const char* host, std::uint16_t port, Millis now,
                          Millis connect_timeout) {
  return dial_to(host, port, now, connect_timeout, false);
}

Status TcpConnector::dial_to(const char* host, std::uint16_t port, Millis now,
                             Millis connect_timeout, bool proxy) {
  close();
  message_[0] = '\0';
  unreachable_ = false;
  via_proxy_ = proxy;  // Set first: a connect that fails at once names the proxy too.
  tunnel_size_ = 0;
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
    unreachable_ = result.error == ResolveError::kNoNetwork && result.unreachable;
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
    phase_ = tunnel_size_ > 0 ? Phase::kTunnelSending : Phase::kConnected;
  }
  if (phase_ == Phase::kTunnelSending || phase_ == Phase::kTunnelReading) {
    return step_tunnel(now);
  }
  return phase_ == Phase::kConnected ? Status::kOk : Status::kInvalidArgument;
}

Status TcpConnector::step_tunnel(Millis now) {
  while (phase_ == Phase::kTunnelSending) {
    std::size_t sent = 0;
    const ConstBytes rest{reinterpret_cast<const std::uint8_t*>(room_->request_) + tunnel_sent_,
                          tunnel_size_ - tunnel_sent_};
    const Status s = tcp_.send(rest, &sent);
    if (s == Status::kWouldBlock) break;
    if (s != Status::kOk) {
      return tunnel_failed(Status::kConnectFailed, "closed the connection before answering");
    }
    tunnel_sent_ += sent;
    if (tunnel_sent_ == tunnel_size_) phase_ = Phase::kTunnelReading;
  }
  while (phase_ == Phase::kTunnelReading) {
    // Small reads: the proxy sends nothing after its answer until the TLS handshake begins.
    std::uint8_t chunk[256];
    std::size_t received = 0;
    const Status s = tcp_.recv(MutableBytes{chunk, sizeof chunk}, &received);
    if (s == Status::kWouldBlock) break;
    if (s != Status::kOk || received == 0) {
      return tunnel_failed(Status::kConnectFailed, room_->parser_.started()
                                                       ? "cut its answer short"
                                                       : "closed the connection before answering");
    }
    const Status answer = read_connect_answer(room_->parser_, ConstBytes{chunk, received},
                                              room_->authorization_[0] != '\0', room_->host_,
                                              message_, sizeof message_);
    if (answer == Status::kOk) {
      phase_ = Phase::kConnected;
      return Status::kOk;
    }
    if (answer != Status::kWouldBlock) return fail(answer, message_);
  }
  if (now < deadline_) return Status::kWouldBlock;
  std::snprintf(message_, sizeof message_,
                "the proxy '%.120s' did not answer CONNECT within the connect timeout (%lld ms)",
                room_->host_, static_cast<long long>(connect_timeout_.count()));
  return fail(Status::kConnectTimeout, message_);
}

Status TcpConnector::tunnel_failed(Status s, const char* what) {
  std::snprintf(message_, sizeof message_, "the proxy '%.120s' %s to CONNECT", room_->host_, what);
  return fail(s, message_);
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
  if (phase_ == Phase::kTunnelSending) return IoInterest::kWrite;
  if (phase_ == Phase::kTunnelReading) return IoInterest::kRead;
  return tcp_.wants();
}

Millis TcpConnector::deadline() const {
  if (phase_ == Phase::kTunnelSending || phase_ == Phase::kTunnelReading) return deadline_;
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
  unreachable_ = tcp_.unreachable();
  const bool named = !is_numeric_host(host_) || via_proxy_;
  const char* proxy = via_proxy_ ? "the proxy " : "";
  const char* verdict = s == Status::kConnectTimeout ? " within the connect timeout" : "";
  if (count > 1) {
    std::snprintf(message_, sizeof message_,
                  "could not connect to %s%s%.100s%s%s (%zu addresses): %.300s", proxy,
                  named ? "'" : "", named ? host_ : "any address", named ? "'" : "", verdict, count,
                  tried);
  } else if (named) {
    std::snprintf(message_, sizeof message_, "could not connect to %s'%.120s'%s: %.300s", proxy,
                  host_, verdict, tried);
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

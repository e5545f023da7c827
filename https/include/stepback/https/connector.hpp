// Connector: how a Client opens connections. The built-in ones: TcpConnector
// (tcp_connector.hpp) resolves and connects over TCP for http://; TcpTlsConnector
// (tcp_tls_connector.hpp) adds the TLS handshake for https:// (and stays plain for http://).
// An app can bring its own (pre-resolved addresses, another socket API), and tests
// script one. This header needs no TLS library.
#ifndef STEPBACK_HTTPS_CONNECTOR_HPP_
#define STEPBACK_HTTPS_CONNECTOR_HPP_

#include <cstdint>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/core/timeouts.hpp"
#include "stepback/https/http/url.hpp"
#include "stepback/https/transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// Opens one connection at a time, step-driven; the stream stays valid until close().
class Connector {
 public:
  // Begins a connection to `url` (`host` is url.host NUL-terminated) at `now`; kOk to go on
  // with step(), or the failure (kInvalidArgument, kDnsFailed, kConnectFailed, ...).
  [[nodiscard]] virtual Status open(const Url& url, const char* host, Millis now,
                                    const Timeouts& timeouts) = 0;
  // Advances the connection: kOk when stream() is ready for the request, kWouldBlock (poll
  // fd() for wants() until deadline()), or the failure.
  [[nodiscard]] virtual Status step(Millis now) = 0;
  // The descriptor the connection under way waits on after step() answered kWouldBlock (the
  // connecting socket, then the one the handshake runs over); -1 when there is nothing to
  // watch, and the caller then waits for deadline() alone.
  virtual int fd() const = 0;
  // What fd() waits for: kWrite while a TCP connect is under way, the handshake's need after.
  virtual IoInterest wants() const = 0;
  // The connected stream.
  virtual Transport& stream() = 0;
  // When the connect or handshake under way times out.
  virtual Millis deadline() const = 0;
  // Whether the last connection resumed a saved TLS session.
  virtual bool resumed() const = 0;
  // TLS 1.3 early data (0-RTT): after open(), the request's first bytes (a request that may
  // be replayed: the Client decides) for the handshake's first flight, when the connection
  // resumes a session whose ticket allows them. They stay unchanged until step() answers kOk
  // or fails. A connector without early data ignores them (the default).
  virtual void offer_early_data(ConstBytes bytes) { (void)bytes; }
  // Once step() answered kOk: what became of the bytes offered; the Client sends the rest
  // (all of them unless the server accepted some) after the handshake. kNone by default.
  virtual EarlyDataResult early_data() const { return EarlyDataResult{}; }
  // What the last failure was, in words ("" if none).
  virtual const char* failure_message() const = 0;
  // Whether the last failure was for lack of a network, not at the far end: no address could
  // be reached from here (no route, network unreachable, the bound device gone) or no DNS
  // server could be. With the platform saying it is offline, the Client then waits for a
  // network instead of spending retries (Client::network_changed). False by default.
  virtual bool unreachable() const { return false; }
  // A response was read completely; a TLS connector saves the session (TLS 1.3 tickets
  // arrive after the handshake).
  virtual void exchange_done() = 0;
  // Closes the connection, if any; safe to call twice.
  virtual void close() = 0;
  // The device's network changed or came back (Client::network_available()): whatever the
  // connector keeps that belongs to the old network (resolver configuration, cached
  // addresses) is refreshed. Called outside step(), after close(); nothing by default.
  virtual void network_changed() {}
  // Whether a request to `url` goes to a forward proxy (an http:// URL through an HTTP proxy),
  // so the Client writes its target in absolute form; then *proxy_authorization is the
  // Proxy-Authorization value to send ("" for none). False by default.
  virtual bool forwards(const Url& url, std::string_view* proxy_authorization) const {
    (void)url;
    (void)proxy_authorization;
    return false;
  }

 protected:
  Connector() = default;
  Connector(const Connector&) = default;
  Connector& operator=(const Connector&) = default;
  ~Connector() = default;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_CONNECTOR_HPP_

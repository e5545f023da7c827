// The Client's connection: opened through the Connector, kept after a response that allows
// it, reused by the next request to the same origin while it is alive, and closed when it
// may no longer serve (another origin, a changed network, a failed or refused exchange).
#ifndef STEPBACK_HTTPS_CLIENT_CONNECTION_HPP_
#define STEPBACK_HTTPS_CLIENT_CONNECTION_HPP_

#include <cstdint>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/core/timeouts.hpp"
#include "stepback/https/connector.hpp"
#include "stepback/https/http/url.hpp"
#include "stepback/https/transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

class Connection {
 public:
  explicit Connection(Connector& connector) : connector_(connector) {}

  // A new request to `url`: a kept connection serves it only when no exchange is under way
  // (`idle`) and it goes to the origin the connection was opened for, whose host is
  // `open_host` (the last request's); otherwise it is closed.
  void keep_for(const Url& url, std::string_view open_host, bool idle);
  // At an attempt's start: whether a kept connection is there to send on. One the server
  // closed while it waited, or that holds stray bytes (an unsolicited response), is closed
  // first: a new one is opened before any request byte is written, which is safe for any
  // method.
  bool reuse();
  // Opens a new connection to `url` (`host` NUL-terminated, for the resolver and SNI).
  [[nodiscard]] Status open(const Url& url, const char* host, Millis now, const Timeouts& timeouts);
  // Advances the lookup, connect and handshake; kOk once the stream is ready.
  [[nodiscard]] Status step(Millis now);
  // The exchange on it ended: kept for the next request when `keep`, else closed.
  void exchange_done(bool keep);
  void close();
  // The device's network changed: the connection is closed and the connector told.
  void network_changed();

  Connector& connector() { return connector_; }
  const Connector& connector() const { return connector_; }
  Transport& stream() { return connector_.stream(); }
  bool kept() const { return kept_; }
  // This attempt runs on a kept connection.
  bool reused() const { return reused_; }
  // The last handshake resumed a saved TLS session.
  bool resumed() const { return resumed_; }
  // Connections opened (reused ones are not counted again).
  std::uint32_t opened() const { return opened_; }

 private:
  Connector& connector_;
  std::uint32_t opened_ = 0;
  std::uint16_t port_ = 0;  // The origin the connection goes to (its host is the caller's).
  bool tls_ = false;
  bool kept_ = false;  // A connected, handshaken stream kept for reuse.
  bool reused_ = false;
  bool resumed_ = false;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_CLIENT_CONNECTION_HPP_

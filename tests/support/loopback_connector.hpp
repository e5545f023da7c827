// LoopbackConnector: the built-in connectors for tests whose servers listen on loopback
// addresses (numeric hosts, so the resolver is never asked): TLS when the test gives a
// configuration, plain TCP otherwise.
#ifndef STEPBACK_TESTS_SUPPORT_LOOPBACK_CONNECTOR_HPP_
#define STEPBACK_TESTS_SUPPORT_LOOPBACK_CONNECTOR_HPP_

#include <optional>

#include "stepback/https/connector.hpp"
#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/tcp_connector.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"

namespace stepback::testing {

class LoopbackConnector {
 public:
  // `tls` null: http:// only. Otherwise it must outlive the connector.
  explicit LoopbackConnector(https::TlsClientConfig* tls) : plain_(no_names_) {
    if (tls != nullptr) secure_.emplace(*tls, no_names_);
  }
  LoopbackConnector(const LoopbackConnector&) = delete;
  LoopbackConnector& operator=(const LoopbackConnector&) = delete;

  // Sends connections through `proxy` (null: none), which must outlive the connector.
  [[nodiscard]] https::Status set_proxy(const https::ProxyConfig* proxy) {
    if (secure_ && secure_->set_proxy(proxy, &secure_room_) != https::Status::kOk) {
      return https::Status::kInvalidArgument;
    }
    return plain_.set_proxy(proxy, &plain_room_);
  }

  https::Connector& get() {
    if (secure_) return *secure_;
    return plain_;
  }

 private:
  https::FixedResolver no_names_;  // Holds no address: a name fails the lookup.
  https::ProxyRoom plain_room_;
  https::ProxyRoom secure_room_;
  https::TcpConnector plain_;
  std::optional<https::TcpTlsConnector> secure_;
};

}  // namespace stepback::testing

#endif  // STEPBACK_TESTS_SUPPORT_LOOPBACK_CONNECTOR_HPP_

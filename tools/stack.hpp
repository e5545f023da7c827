// What the requests of a subcommand go through (get, upload, demo), built once, the same way
// for each: the TLS arena and client configuration with its trust anchors and pins, a
// resolver, and the connector over them with the proxy and the --interface binding.
#ifndef STEPBACK_TOOLS_STACK_HPP_
#define STEPBACK_TOOLS_STACK_HPP_

#include <cstddef>
#include <optional>
#include <string>

#include "request_flags.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/dns/system_resolver.hpp"
#include "stepback/app/tls_session_file.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"

namespace stepback::tools {

// What a Stack is built with; every pointer may be null and must outlive the Stack.
struct StackSpec {
  bool tls = false;  // Set up TLS: a request goes to an https:// URL.
  // The trust anchors and --tls-max-fragment (with tls); null: the caller adds its own.
  const TrustFlags* trust = nullptr;
  const https::PublicKeyPin* pins = nullptr;  // --pin, `pin_count` of them.
  std::size_t pin_count = 0;
  bool lookups = true;  // Names are looked up with c-ares; false: numeric hosts only.
  // --system-resolver (with lookups): names are looked up with the system's resolver
  // (getaddrinfo on worker threads: the hosts file, nsswitch, the system's DNS servers)
  // instead of c-ares; workers that cannot be started are an internal error.
  bool system_resolver = false;
  // --dns-servers (c-ares CSV): servers that cannot be used are a usage error. Null: those of
  // resolv.conf, and a resolv.conf that cannot be used fails each lookup with its words.
  const char* dns_servers = nullptr;
  const ProxySetup* proxy = nullptr;    // The proxy (make_proxy()); null: none.
  const RetryFlags* binding = nullptr;  // --interface (bind_network()); null: none.
};

// The TLS configuration, resolver and connector of a subcommand's requests.
class Stack {
 public:
  Stack() = default;
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  // Builds the stack as `spec` says, in this order: the TLS arena, TLS, the trust anchors,
  // the resolver (c-ares reads resolv.conf here, the system's starts its workers: before any
  // step()), the proxy, the binding.
  // kExitOk, or the exit code with *error saying why.
  int build(const StackSpec& spec, std::string* error);

  // The TLS configuration, for anchors of the caller's own (after build()).
  https::TlsClientConfig& tls() { return tls_; }
  // The connector the requests go through (after build() succeeded).
  https::TcpTlsConnector& connector() { return *connector_; }

  // --tls-session FILE (after build()): hands the session kept in FILE to the connector for
  // `url`; a file it refuses is removed, said on stderr after `prefix`. Nothing without it.
  void load_session(const TrustFlags& trust, std::string_view url, const char* prefix);
  // Replaces the --tls-session file with the connector's session, when it has one; a file
  // that cannot be written is said on stderr (the run's outcome stays what it was).
  void store_session(const char* prefix);

 private:
  https::TlsClientConfig tls_;
  https::CaresResolver cares_;
  https::SystemResolver system_;  // Before connector_, which uses it.
  https::FixedResolver no_names_;
  std::optional<https::TcpTlsConnector> connector_;
  app::TlsSessionFile session_file_;
  bool keep_session_ = false;
};

// Sets up the trust anchors (a hashed --capath directory, a --cacert bundle, or the system's
// store, looked up on demand) and `pin_count` public-key pins on `tls`; false with *error.
bool load_trust(const TrustFlags& trust, const https::PublicKeyPin* pins, std::size_t pin_count,
                https::TlsClientConfig* tls, std::string* error);

// Binds `connector`'s connections and lookups to --interface, if given (the binding is the
// program's, static); false with *error for a name too long to be a device's.
bool bind_network(const RetryFlags& flags, https::TcpTlsConnector* connector, std::string* error);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_STACK_HPP_

#include "stack.hpp"

#include <net/if.h>

#include <cstdio>

#include "client_loop.hpp"
#include "stepback/https/tls/trust_store.hpp"
#include "stepback/platform/clock.hpp"

namespace stepback::tools {
namespace {

// The process's trust store: fixed buffers, roots parsed only while a handshake verifies.
https::TrustStore g_trust_store;

// What going through a proxy takes, made on first use (a constructor at namespace scope could
// throw before main).
https::ProxyRoom& proxy_room() {
  static https::ProxyRoom room;
  return room;
}

}  // namespace

int Stack::build(const StackSpec& spec, std::string* error) {
  if (install_tls_arena() != https::Status::kOk) {
    *error = "cannot install the TLS arena";
    return kExitInternal;
  }
  if (spec.tls) {
    if (tls_.init() != https::Status::kOk) {
      *error = "cannot set up TLS (entropy or crypto initialization failed)";
      return kExitInternal;
    }
    if (spec.trust != nullptr &&
        !load_trust(*spec.trust, spec.pins, spec.pin_count, &tls_, error)) {
      return kExitUsage;
    }
  }
  if (spec.lookups && spec.system_resolver) {
    // The workers start here, outside the loop; a lookup then takes an idle one.
    if (system_.init(https::SystemResolverOptions{}) != https::Status::kOk) {
      *error = system_.message();
      return kExitInternal;
    }
    connector_.emplace(tls_, system_);  // http:// URLs go without TLS.
  } else if (spec.lookups) {
    https::CaresOptions dns;
    dns.servers = spec.dns_servers;
    if (cares_.init(dns) != https::Status::kOk && spec.dns_servers != nullptr) {
      *error = std::string("invalid --dns-servers: ") + cares_.message();
      return kExitUsage;
    }
    connector_.emplace(tls_, cares_);  // http:// URLs go without TLS.
  } else {
    connector_.emplace(tls_, no_names_);
  }
  if (spec.proxy != nullptr &&
      connector_->set_proxy(&spec.proxy->config, &proxy_room()) != https::Status::kOk) {
    *error = "the proxy's host name or credentials are too long";
    return kExitUsage;
  }
  if (spec.binding != nullptr && !bind_network(*spec.binding, &*connector_, error)) {
    return kExitUsage;
  }
  return kExitOk;
}

bool load_trust(const TrustFlags& trust, const https::PublicKeyPin* pins, std::size_t pin_count,
                https::TlsClientConfig* tls, std::string* error) {
  if (trust.capath != nullptr) {
    if (g_trust_store.add_directory(trust.capath) != https::Status::kOk) {
      *error = std::string("'") + trust.capath +
               "' is not a hashed CA directory (no <hash>.0 files); run: openssl rehash " +
               trust.capath;
      return false;
    }
  } else if (trust.cacert != nullptr) {
    if (g_trust_store.add_bundle(trust.cacert) != https::Status::kOk) {
      *error = std::string("no usable CA certificate in '") + trust.cacert + "'";
      return false;
    }
  } else if (g_trust_store.add_platform_default() != https::Status::kOk) {
    *error = std::string("no system CA store found (/etc/ssl/certs, ") + kSystemBundle +
             ", ...); pass --cacert FILE or --capath DIR";
    return false;
  }
  if (tls->use_trust_store(g_trust_store) != https::Status::kOk) {
    *error = "cannot use the CA store";
    return false;
  }
  if (pin_count > 0) tls->set_public_key_pins(pins, pin_count);
  tls->set_early_data(!trust.no_early_data);
  if (tls->set_max_fragment_length(trust.max_fragment) != https::Status::kOk) {
    *error = "--tls-max-fragment " + std::to_string(trust.max_fragment) +
             " is more than this build's TLS record buffers take (at most " +
             std::to_string(https::kTlsLargestMaxFragment) + ")";
    return false;
  }
  return true;
}

void Stack::load_session(const TrustFlags& trust, std::string_view url, const char* prefix) {
  keep_session_ = false;
  if (trust.tls_session == nullptr || !connector_) return;
  if (!session_file_.set_path(trust.tls_session)) {
    std::fprintf(stderr, "%s--tls-session: the path is too long; the session is not kept\n",
                 prefix);
    return;
  }
  keep_session_ = true;
  if (session_file_.load(*connector_, url, platform::wall_now()) ==
      app::TlsSessionFile::Load::kRefused) {
    std::fprintf(stderr, "%s--tls-session: %s; this run shakes hands in full\n", prefix,
                 session_file_.message());
  }
}

void Stack::store_session(const char* prefix) {
  if (!keep_session_) return;
  connector_->refresh_session();  // A ticket read with a body cut short (Ctrl-C, a failure).
  if (!connector_->has_session()) return;
  if (!session_file_.store(*connector_, platform::wall_now())) {
    std::fprintf(stderr, "%s--tls-session: %s\n", prefix, session_file_.message());
  }
}

bool bind_network(const RetryFlags& flags, https::TcpTlsConnector* connector, std::string* error) {
  static https::NetworkBinding binding;
  binding.interface = flags.interface;
  if (connector->set_binding(&binding) != https::Status::kOk) {
    *error = "--interface: a device name has at most " +
             std::to_string(https::kInterfaceNameCapacity - 1) + " characters";
    return false;
  }
  // A device that goes away later is waited for, as a lost network; one that is not there
  // at the start is most likely a typo.
  if (flags.interface != nullptr && flags.interface[0] != '\0' &&
      ::if_nametoindex(flags.interface) == 0) {
    *error = std::string("--interface: no such device '") + flags.interface + "'";
    return false;
  }
  return true;
}

}  // namespace stepback::tools

#include "demo_server.hpp"

#include <arpa/inet.h>
#include <mbedtls/ecp.h>
#include <mbedtls/error.h>
#include <mbedtls/x509.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string_view>

namespace stepback::tools {
namespace {

constexpr char kPersonalization[] = "stepback demo server";
constexpr char kSubject[] = "CN=localhost,O=stepback demo";
constexpr char kDnsName[] = "localhost";
constexpr unsigned char kLoopback[4] = {127, 0, 0, 1};
// Session tickets' lifetime, in seconds.
constexpr std::uint32_t kTicketLifetime = 3600;

std::string mbedtls_text(const char* what, int ret) {
  char text[128];
  mbedtls_strerror(ret, text, sizeof text);
  char out[256];
  std::snprintf(out, sizeof out, "%s failed: -0x%04X %s", what, static_cast<unsigned>(-ret), text);
  return out;
}

// `t` as the YYYYMMDDhhmmss UTC text mbedtls_x509write_crt_set_validity() takes.
void validity_time(std::time_t t, char (&out)[16]) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(out, sizeof out, "%Y%m%d%H%M%S", &tm);
}

// Whether `line` is a Content-Length field; then *length is its value.
bool content_length_field(std::string_view line, std::size_t* length) {
  constexpr std::string_view kName = "content-length:";
  if (line.size() < kName.size()) return false;
  for (std::size_t i = 0; i < kName.size(); ++i) {
    const char c = line[i];
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (lower != kName[i]) return false;
  }
  std::size_t v = 0;
  for (const char c : line.substr(kName.size())) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + static_cast<std::size_t>(c - '0');
      if (v > (1U << 20)) return false;
    }
  }
  *length = v;
  return true;
}

}  // namespace

DemoServer::DemoServer() {
  mbedtls_entropy_init(&entropy_);
  mbedtls_ctr_drbg_init(&drbg_);
  mbedtls_pk_init(&key_);
  mbedtls_x509_crt_init(&cert_);
  mbedtls_ssl_config_init(&conf_);
  mbedtls_ssl_ticket_init(&tickets_);
  for (Connection& c : connections_slots_) mbedtls_ssl_init(&c.ssl);
}

DemoServer::~DemoServer() {
  for (Connection& c : connections_slots_) {
    if (c.fd >= 0) ::close(c.fd);
    mbedtls_ssl_free(&c.ssl);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  mbedtls_ssl_ticket_free(&tickets_);
  mbedtls_ssl_config_free(&conf_);
  mbedtls_x509_crt_free(&cert_);
  mbedtls_pk_free(&key_);
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_entropy_free(&entropy_);
}

bool DemoServer::start(std::uint32_t retry_after_s, bool close_after_response, std::string* error) {
  retry_after_s_ = retry_after_s;
  close_after_response_ = close_after_response;
  int ret = mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_,
                                  reinterpret_cast<const unsigned char*>(kPersonalization),
                                  sizeof kPersonalization - 1);
  if (ret != 0) {
    *error = mbedtls_text("seeding the server's random generator", ret);
    return false;
  }
  if (!make_credentials(error)) return false;
  ret = mbedtls_ssl_config_defaults(&conf_, MBEDTLS_SSL_IS_SERVER, MBEDTLS_SSL_TRANSPORT_STREAM,
                                    MBEDTLS_SSL_PRESET_DEFAULT);
  if (ret != 0) {
    *error = mbedtls_text("the server's TLS configuration", ret);
    return false;
  }
  mbedtls_ssl_conf_rng(&conf_, mbedtls_ctr_drbg_random, &drbg_);
  mbedtls_ssl_conf_min_tls_version(&conf_, MBEDTLS_SSL_VERSION_TLS1_2);
  mbedtls_ssl_conf_max_tls_version(&conf_, MBEDTLS_SSL_VERSION_TLS1_3);
  ret = mbedtls_ssl_conf_own_cert(&conf_, &cert_, &key_);
  if (ret == 0) {
    ret = mbedtls_ssl_ticket_setup(&tickets_, mbedtls_ctr_drbg_random, &drbg_,
                                   MBEDTLS_CIPHER_AES_256_GCM, kTicketLifetime);
  }
  if (ret != 0) {
    *error = mbedtls_text("the server's certificate or session tickets", ret);
    return false;
  }
  mbedtls_ssl_conf_session_tickets_cb(&conf_, &DemoServer::write_ticket, &DemoServer::parse_ticket,
                                      this);
  return listen_on_loopback(error);
}

bool DemoServer::make_credentials(std::string* error) {
  int ret = mbedtls_pk_setup(&key_, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
  if (ret == 0) {
    ret = mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key_),
                              mbedtls_ctr_drbg_random, &drbg_);
  }
  if (ret != 0) {
    *error = mbedtls_text("generating the ECDSA P-256 key", ret);
    return false;
  }

  // Valid from an hour ago (clock skew) for a day; the serial is random and positive.
  char not_before[16];
  char not_after[16];
  const std::time_t now = std::time(nullptr);
  validity_time(now - 3600, not_before);
  validity_time(now + 86400, not_after);  // one day
  unsigned char serial[16];
  ret = mbedtls_ctr_drbg_random(&drbg_, serial, sizeof serial);
  serial[0] = static_cast<unsigned char>((serial[0] & 0x7F) | 0x01);

  mbedtls_x509_san_list ip{};
  ip.node.type = MBEDTLS_X509_SAN_IP_ADDRESS;
  ip.node.san.unstructured_name.p = const_cast<unsigned char*>(kLoopback);
  ip.node.san.unstructured_name.len = sizeof kLoopback;
  mbedtls_x509_san_list dns{};
  dns.node.type = MBEDTLS_X509_SAN_DNS_NAME;
  dns.node.san.unstructured_name.p = reinterpret_cast<unsigned char*>(const_cast<char*>(kDnsName));
  dns.node.san.unstructured_name.len = sizeof kDnsName - 1;
  dns.next = &ip;

  mbedtls_x509write_cert crt;
  mbedtls_x509write_crt_init(&crt);
  mbedtls_x509write_crt_set_version(&crt, MBEDTLS_X509_CRT_VERSION_3);
  mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
  mbedtls_x509write_crt_set_subject_key(&crt, &key_);
  mbedtls_x509write_crt_set_issuer_key(&crt, &key_);
  if (ret == 0) ret = mbedtls_x509write_crt_set_serial_raw(&crt, serial, sizeof serial);
  if (ret == 0) ret = mbedtls_x509write_crt_set_subject_name(&crt, kSubject);
  if (ret == 0) ret = mbedtls_x509write_crt_set_issuer_name(&crt, kSubject);
  if (ret == 0) ret = mbedtls_x509write_crt_set_validity(&crt, not_before, not_after);
  if (ret == 0) ret = mbedtls_x509write_crt_set_basic_constraints(&crt, 1, 0);
  if (ret == 0) ret = mbedtls_x509write_crt_set_subject_alternative_name(&crt, &dns);
  if (ret == 0) {
    ret = mbedtls_x509write_crt_pem(&crt, pem_, sizeof pem_, mbedtls_ctr_drbg_random, &drbg_);
  }
  mbedtls_x509write_crt_free(&crt);
  if (ret != 0) {
    *error = mbedtls_text("writing the self-signed certificate", ret);
    return false;
  }
  pem_size_ = std::strlen(reinterpret_cast<const char*>(pem_)) + 1;
  ret = mbedtls_x509_crt_parse(&cert_, pem_, pem_size_);
  if (ret != 0) {
    *error = mbedtls_text("parsing the generated certificate", ret);
    return false;
  }
  return true;
}

bool DemoServer::listen_on_loopback(std::string* error) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  std::memcpy(&addr.sin_addr, kLoopback, sizeof kLoopback);
  socklen_t size = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 8) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
    *error = std::string("listening on 127.0.0.1: ") + std::strerror(errno);
    return false;
  }
  port_ = ntohs(addr.sin_port);
  return true;
}

std::size_t DemoServer::poll_fds(pollfd* fds, std::size_t room) {
  std::size_t n = 0;
  if (listen_fd_ >= 0 && n < room) fds[n++] = pollfd{listen_fd_, POLLIN, 0};
  for (const Connection& c : connections_slots_) {
    if (c.fd >= 0 && n < room) fds[n++] = pollfd{c.fd, c.wants, 0};
  }
  return n;
}

bool DemoServer::serve(Millis /*now*/) {
  accept_all();
  // Every connection is driven until it would block; one that has nothing to do returns at
  // once, so there is no need to match poll results to slots.
  for (Connection& c : connections_slots_) {
    if (c.fd >= 0) drive(c);
  }
  return false;
}

void DemoServer::accept_all() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: no more pending; other errors: try again next time.
    Connection* slot = nullptr;
    for (Connection& c : connections_slots_) {
      if (c.fd < 0) {
        slot = &c;
        break;
      }
    }
    if (slot == nullptr || mbedtls_ssl_setup(&slot->ssl, &conf_) != 0) {
      ::close(fd);
      continue;
    }
    const int one = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    slot->fd = fd;
    slot->state = State::kHandshake;
    slot->wants = POLLIN;
    slot->in_size = 0;
    slot->out_size = 0;
    slot->out_sent = 0;
    mbedtls_ssl_set_bio(&slot->ssl, &slot->fd, &DemoServer::bio_send, &DemoServer::bio_recv,
                        nullptr);
    ++connections_;
  }
}

void DemoServer::drive(Connection& c) {
  for (;;) {
    int ret = 0;
    switch (c.state) {
      case State::kHandshake:
        ret = mbedtls_ssl_handshake(&c.ssl);
        if (ret == 0) {
          c.state = State::kRead;
          continue;
        }
        break;
      case State::kRead:
        if (c.in_size == sizeof c.in) {  // A request head larger than the demo accepts.
          close_connection(c);
          return;
        }
        ret = mbedtls_ssl_read(&c.ssl, c.in + c.in_size, sizeof c.in - c.in_size);
        if (ret > 0) {
          c.in_size += static_cast<std::size_t>(ret);
          if (take_request(c)) c.state = State::kWrite;
          continue;
        }
        break;
      case State::kWrite:
        ret = mbedtls_ssl_write(&c.ssl, reinterpret_cast<const unsigned char*>(c.out) + c.out_sent,
                                c.out_size - c.out_sent);
        if (ret > 0) {
          c.out_sent += static_cast<std::size_t>(ret);
          if (c.out_sent == c.out_size) {
            if (close_after_response_) {
              close_connection(c);
              return;
            }
            // Keep-alive: on to the next request, which may already be buffered.
            c.state = take_request(c) ? State::kWrite : State::kRead;
          }
          continue;
        }
        break;
    }
    if (ret == MBEDTLS_ERR_SSL_WANT_READ) {
      c.wants = POLLIN;
      return;
    }
    if (ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
      c.wants = POLLOUT;
      return;
    }
    // The client closed (0, close_notify) or the connection failed: either way, done.
    close_connection(c);
    return;
  }
}

bool DemoServer::take_request(Connection& c) {
  const std::string_view in(reinterpret_cast<const char*>(c.in), c.in_size);
  const std::size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return false;
  std::size_t body = 0;
  for (std::size_t line = in.find("\r\n") + 2; line < head_end;) {
    const std::size_t end = in.find("\r\n", line);
    (void)content_length_field(in.substr(line, end - line), &body);
    line = end + 2;
  }
  const std::size_t total = head_end + 4 + body;
  if (total > sizeof c.in) {  // A body the demo does not take: refuse it by closing.
    c.in_size = sizeof c.in;
    return false;
  }
  if (c.in_size < total) return false;
  std::memmove(c.in, c.in + total, c.in_size - total);
  c.in_size -= total;

  const std::uint32_t n = requests_++;
  const char* connection = close_after_response_ ? "Connection: close\r\n" : "";
  int written = 0;
  if (n == 0) {
    constexpr char kText[] = "the demo server is warming up; try again\n";
    written = std::snprintf(c.out, sizeof c.out,
                            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
                            "%sContent-Length: %zu\r\n\r\n%s",
                            connection, sizeof kText - 1, kText);
  } else if (n == 1) {
    char text[64];
    const int text_size =
        std::snprintf(text, sizeof text, "slow down: retry after %u s\n", retry_after_s_);
    written = std::snprintf(c.out, sizeof c.out,
                            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: %u\r\n"
                            "Content-Type: text/plain\r\n%sContent-Length: %d\r\n\r\n%s",
                            retry_after_s_, connection, text_size, text);
  } else {
    written = std::snprintf(c.out, sizeof c.out,
                            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                            "%sContent-Length: %zu\r\n\r\n%s",
                            connection, std::strlen(kBody), kBody);
  }
  c.out_size = written > 0 ? static_cast<std::size_t>(written) : 0;
  c.out_sent = 0;
  return true;
}

void DemoServer::close_connection(Connection& c) {
  (void)mbedtls_ssl_close_notify(&c.ssl);
  ::close(c.fd);
  c.fd = -1;
  // Frees the connection's record buffers back to the arena; ready for the next accept.
  mbedtls_ssl_free(&c.ssl);
  mbedtls_ssl_init(&c.ssl);
}

int DemoServer::write_ticket(void* self, const mbedtls_ssl_session* session, unsigned char* start,
                             const unsigned char* end, std::size_t* written,
                             std::uint32_t* lifetime) {
  return mbedtls_ssl_ticket_write(&static_cast<DemoServer*>(self)->tickets_, session, start, end,
                                  written, lifetime);
}

int DemoServer::parse_ticket(void* self, mbedtls_ssl_session* session, unsigned char* buf,
                             std::size_t len) {
  auto* server = static_cast<DemoServer*>(self);
  const int ret = mbedtls_ssl_ticket_parse(&server->tickets_, session, buf, len);
  if (ret == 0) ++server->resumptions_;
  return ret;
}

int DemoServer::bio_send(void* fd, const unsigned char* buf, std::size_t len) {
  const ssize_t n = ::send(*static_cast<int*>(fd), buf, len, MSG_NOSIGNAL);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return MBEDTLS_ERR_SSL_WANT_WRITE;
  return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
}

int DemoServer::bio_recv(void* fd, unsigned char* buf, std::size_t len) {
  const ssize_t n = ::recv(*static_cast<int*>(fd), buf, len, 0);
  if (n >= 0) return static_cast<int>(n);  // 0: the client closed.
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return MBEDTLS_ERR_SSL_WANT_READ;
  return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
}

}  // namespace stepback::tools

#include "stepback/https/proxy/tunnel.hpp"

#include <cstdio>

namespace stepback::https {
namespace {

// What the whole answer head `code` `reason` means, `extra` bytes having come after it.
Status judge_connect_answer(unsigned code, std::string_view reason, std::size_t extra,
                            bool credentials, const char* proxy, char* message,
                            std::size_t message_size) {
  const int reason_size = static_cast<int>(reason.size() > 80 ? 80 : reason.size());
  if (code >= 200 && code < 300) {
    if (extra == 0) return Status::kOk;
    std::snprintf(message, message_size,
                  "the proxy '%.120s' sent bytes after its answer to CONNECT", proxy);
    return Status::kProtocol;
  }
  Status s = Status::kProtocol;
  const char* what = "";
  if (code == 407) {
    s = Status::kProxyAuth;
    what = credentials ? ": proxy authentication failed, the proxy refused the credentials"
                       : ": proxy authentication required, and no credentials were given";
  } else if (code == 502 || code == 503 || code == 504) {
    s = Status::kConnectFailed;
    what = ": it could not reach the server";
  }
  std::snprintf(message, message_size, "the proxy '%.120s' answered CONNECT with %u %.*s%s", proxy,
                code, reason_size, reason.data(), what);
  return s;
}

}  // namespace

ConnectRequest write_connect_request(std::string_view host, std::uint16_t port,
                                     std::string_view authorization, char* out,
                                     std::size_t out_size) {
  if (host.empty() || host.size() > 255 || port == 0) {
    return ConnectRequest{0, "no host or port to reach through the proxy"};
  }
  const bool ipv6 = host.find(':') != std::string_view::npos;
  char authority[272];
  std::snprintf(authority, sizeof authority, "%s%.*s%s:%u", ipv6 ? "[" : "",
                static_cast<int>(host.size()), host.data(), ipv6 ? "]" : "",
                static_cast<unsigned>(port));
  const bool credentials = !authorization.empty();
  const int n = std::snprintf(out, out_size, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s%.*s%s\r\n",
                              authority, authority, credentials ? "Proxy-Authorization: " : "",
                              static_cast<int>(authorization.size()),
                              credentials ? authorization.data() : "", credentials ? "\r\n" : "");
  if (n <= 0 || static_cast<std::size_t>(n) >= out_size) {
    return ConnectRequest{0, "the CONNECT request does not fit its buffer"};
  }
  return ConnectRequest{static_cast<std::size_t>(n), nullptr};
}

void start_connect_answer(ResponseParser& parser) { parser.reset(true); }

Status read_connect_answer(ResponseParser& parser, ConstBytes data, bool credentials,
                           const char* proxy, char* message, std::size_t message_size) {
  std::size_t consumed = 0;
  const ParseProgress p = parser.feed(data, &consumed);
  if (p == ParseProgress::kNeedMore) return Status::kWouldBlock;
  if (p == ParseProgress::kFailed) {
    std::snprintf(message, message_size,
                  "the proxy '%.120s' did not answer CONNECT in HTTP: %.200s", proxy,
                  parser.error_message());
    return Status::kProtocol;
  }
  return judge_connect_answer(parser.status(), parser.reason(), data.size - consumed, credentials,
                              proxy, message, message_size);
}

}  // namespace stepback::https

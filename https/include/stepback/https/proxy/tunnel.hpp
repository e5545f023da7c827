// The CONNECT tunnel's pure parts, over caller buffers: the request a connector sends a proxy
// to reach an https:// origin, and what the proxy's answer means. TcpConnector drives the
// socket (sending, reading, the connect deadline) and owns the buffers (its ProxyRoom), so
// these stay testable without one.
#ifndef STEPBACK_HTTPS_PROXY_TUNNEL_HPP_
#define STEPBACK_HTTPS_PROXY_TUNNEL_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/https/http/response_parser.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// What write_connect_request wrote: the request's length, or why there is none.
struct ConnectRequest {
  std::size_t size = 0;         // Bytes of the request in the buffer; 0 when there is none.
  const char* error = nullptr;  // Without a request, why not, as a sentence.
};

// Writes `CONNECT host:port HTTP/1.1` with its Host field and, when `authorization` is not
// empty, a `Proxy-Authorization` field carrying it, NUL-terminated, into out[0, out_size).
// An IPv6 host (one with a colon) is written in brackets. No request for an empty host, one
// longer than 255 bytes, port 0, or a request (and its NUL) longer than out_size.
ConnectRequest write_connect_request(std::string_view host, std::uint16_t port,
                                     std::string_view authorization, char* out,
                                     std::size_t out_size);

// Readies `parser` for a proxy's answer to CONNECT: a head alone, whatever its fields say.
void start_connect_answer(ResponseParser& parser);

// Feeds the next bytes of the proxy's answer to `parser` (readied by start_connect_answer):
// kWouldBlock while the head is not whole; kOk when it is a 2xx with nothing after it, the
// tunnel then standing. Else the failure, with a sentence naming `proxy` and the answer in
// message[0, message_size), never the credentials: kProxyAuth for 407 (`credentials`: whether
// the request carried some, which the sentence tells apart), kConnectFailed for 502, 503 and
// 504 (the proxy could not reach the origin), kProtocol for any other status, for bytes after
// a 2xx head (the proxy sends nothing before the TLS handshake begins) and for an answer that
// is not HTTP.
Status read_connect_answer(ResponseParser& parser, ConstBytes data, bool credentials,
                           const char* proxy, char* message, std::size_t message_size);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_PROXY_TUNNEL_HPP_

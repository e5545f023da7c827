// Shared vocabulary of the HTTPS layer: its status enum and caller-owned byte spans.
#ifndef STEPBACK_HTTPS_TYPES_HPP_
#define STEPBACK_HTTPS_TYPES_HPP_

#include <cstddef>
#include <cstdint>

namespace stepback::https {

// Whether this is the small-RAM build (CMake option STEPBACK_SMALL_RAM, the `small-ram`
// preset, a public definition of the library): mbedTLS trades handshake CPU for RAM, a
// connect tries fewer addresses (TcpTransport::kMaxAddresses), and programs may size their
// buffers by it.
#if defined(STEPBACK_SMALL_RAM) && STEPBACK_SMALL_RAM
inline constexpr bool kSmallRamBuild = true;
#else
inline constexpr bool kSmallRamBuild = false;
#endif

// The HTTPS layer's status. The first value is a failure so a default-initialized
// Status never reads as success.
enum class Status : std::uint8_t {
  kError,  // An unclassified failure.
  kOk,
  kWouldBlock,       // Nothing can happen now; wait for the transport's fd (see wants()).
  kClosed,           // The peer closed the connection in an orderly way.
  kInvalidArgument,  // A caller-supplied value is malformed (URL, header, method).
  kBufferTooSmall,   // The caller's buffer cannot hold what has to be written.
  kDnsFailed,        // The name lookup failed for a reason that may pass (see ResolveError).
  kConnectFailed,    // Refused or unreachable on every address.
  kConnectTimeout,
  kTlsHandshake,     // The handshake failed for a reason other than verification.
  kTlsVerify,        // The certificate chain, validity or host name did not verify.
  kReset,            // The connection was reset or closed mid-response.
  kTimeout,          // No progress within the read timeout.
  kProtocol,         // The response is not valid HTTP/1.1.
  kHeadersTooLarge,  // The response head does not fit the caller's header buffer.
  kBodyTooLarge,     // The body exceeds the caller's limit.
  kRestartRefused,   // The body had to start over and the sink cannot (nothing was spliced).
  kTimeLimit,        // The request's overall limit (ClientOptions::max_time) passed.
  kBodySource,       // The request body source ended before its stated size.
  kTlsRefused,       // The handshake failed in a way a retry cannot heal (a fatal alert,
                     // no common version or cipher, a reply that is not TLS).
  kIntegrity,        // The body's CRC32C or MD5 differs from what the server stated.
  kRedirect,         // A redirect that is not followed: a loop, one too many, https to http, or a
                     // Location that is not an http(s) URL.
  kProxyAuth,        // The proxy answered CONNECT with 407: no credentials, or refused ones.
};

// The lower-case name of `s` ("would_block", "tls_verify", ...).
const char* to_string(Status s);

// A read-only view of caller-owned bytes.
struct ConstBytes {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
};

// A writable view of caller-owned bytes.
struct MutableBytes {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
};

// What a waiting transport needs from poll(): readable, writable or either.
enum class IoInterest : std::uint8_t { kNone = 0, kRead = 1, kWrite = 2, kReadWrite = 3 };

// How a request's first bytes fared as TLS 1.3 early data (0-RTT): none went (no resumed
// session whose ticket allows it, nothing offered, or early data turned off), the server
// accepted them, or it refused them (then they go again after the handshake, as usual).
enum class EarlyData : std::uint8_t { kNone, kAccepted, kRejected };

// What the handshake did with the bytes offered as early data: `state`, and of those bytes
// how many the server took in early (`sent`, 0 unless accepted; the rest go after).
struct EarlyDataResult {
  EarlyData state = EarlyData::kNone;
  std::size_t sent = 0;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TYPES_HPP_

// The transport interface the request layer drives: non-blocking send and receive of
// caller-owned spans, never a blocking call.
#ifndef STEPBACK_HTTPS_TRANSPORT_HPP_
#define STEPBACK_HTTPS_TRANSPORT_HPP_

#include <cstddef>

#include "stepback/https/types.hpp"

namespace stepback::https {

// A connected byte stream (TCP, TLS over TCP, or a scripted fake in tests).
class Transport {
 public:
  // Sends a prefix of `data`; *sent is how much. kWouldBlock when nothing could be sent
  // now; then wait on fd() for wants().
  [[nodiscard]] virtual Status send(ConstBytes data, std::size_t* sent) = 0;
  // Receives into a prefix of `out`; *received is how much. kWouldBlock when nothing is
  // there yet; kClosed on an orderly end of stream.
  [[nodiscard]] virtual Status recv(MutableBytes out, std::size_t* received) = 0;
  // The descriptor to poll, or -1 when there is none.
  virtual int fd() const = 0;
  // What the last kWouldBlock waits for (TLS can need a write to make a read progress).
  virtual IoInterest wants() const = 0;
  // Closes the connection; safe to call twice.
  virtual void close() = 0;
  // Why the last send or recv failed, in words, when the transport has more to say than its
  // Status (TLS: the record that did not fit its input buffer); "" otherwise.
  virtual const char* failure_message() const { return ""; }

 protected:
  Transport() = default;
  Transport(const Transport&) = default;
  Transport& operator=(const Transport&) = default;
  ~Transport() = default;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_TRANSPORT_HPP_

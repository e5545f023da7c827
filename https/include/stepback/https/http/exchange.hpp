// One request and its response on a Transport: the head and body sent (paced by a send
// limit), the response read into a ResponseParser (paced by a receive limit), and the limits
// that end an attempt on a live connection: silence (Timeouts::read), a head that does not
// come within the read timeout of the request, and a body or request below the throughput
// floor (Timeouts::speed_limit over speed_time). It says what happened; the Client decides.
#ifndef STEPBACK_HTTPS_HTTP_EXCHANGE_HPP_
#define STEPBACK_HTTPS_HTTP_EXCHANGE_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/core/millis.hpp"
#include "stepback/core/rate_limit.hpp"
#include "stepback/core/timeouts.hpp"
#include "stepback/https/http/request.hpp"
#include "stepback/https/http/response_parser.hpp"
#include "stepback/https/transport.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

class Exchange {
 public:
  // What a send() or receive() turn ended with.
  struct Result {
    enum class Kind : std::uint8_t {
      kWait,         // Wait for `fd` (-1: none) to be ready for `interest`, until `at`.
      kSent,         // The request is out (or the send stopped after its head): receive.
      kComplete,     // The response is complete; `reusable`: the connection may carry another.
      kFailed,       // The attempt failed: `status`, `message`.
      kParseFailed,  // The response is malformed or over a limit (or the sink refused it).
      kBodySource,   // The request body's source ended before its stated size.
    };
    Kind kind = Kind::kFailed;
    int fd = -1;
    IoInterest interest = IoInterest::kNone;
    Millis at{};
    Status status = Status::kOk;
    const char* message = "";
    bool reusable = false;
  };
  // Told of request body bytes sent (so far, this attempt).
  struct SendProgress {
    void (*sent)(void* context, Millis now, std::uint64_t bytes) = nullptr;
    void* context = nullptr;
  };

  // An exchange paced by `timeouts`, with `io` as its body-send and receive scratch; both
  // must outlive it.
  Exchange(const Timeouts& timeouts, MutableBytes io) : timeouts_(timeouts), io_(io) {}

  // A new attempt at `now`: `head` (written, viewed until the attempt ends) and `body` go.
  void begin(Millis now, ConstBytes head, const BodySource& body);
  // The connection is up at `now` (the handshake's time is not the exchange's).
  void connected(Millis now);
  // The first `bytes` of the head went as TLS 1.3 early data and the server accepted them:
  // they count as sent. After connected().
  void sent_early(std::size_t bytes) {
    if (bytes <= head_.size) sent_ = bytes;
  }
  // Sends what is left of the request, up to the transport's will, by `time_limit` at most.
  Result send(Millis now, Transport& stream, RateLimiter* limit, Millis time_limit,
              SendProgress progress);
  // Reads the response into `parser` (a few receives at most, then the loop's turn).
  Result receive(Millis now, Transport& stream, ResponseParser& parser, RateLimiter* limit,
                 Millis time_limit);

  std::uint64_t sent() const { return sent_; }  // Request bytes (head + body) sent.
  std::size_t head_size() const { return head_.size; }

 private:
  Result stopped(Millis now, Status status, const char* message);
  Result tokens(Millis now, const RateLimiter& limit, std::uint64_t want) const;
  void begin_window(Millis now, std::uint64_t count);
  Millis window_end() const;
  bool below_floor(Millis now, std::uint64_t count, const char* what, const RateLimiter* pace);
  const char* too_slow(Millis now, const ResponseParser& parser, const RateLimiter* pace);

  const Timeouts& timeouts_;
  MutableBytes io_;
  ConstBytes head_;
  BodySource body_;
  std::uint64_t sent_ = 0;
  std::size_t chunk_size_ = 0;  // Body bytes read from the source into io_.
  std::size_t chunk_sent_ = 0;  // Of those, sent.
  // Bytes the send limit granted to a send that would block: TLS must be offered the same
  // bytes again, so the grant holds until they have gone.
  std::size_t send_granted_ = 0;
  Millis io_deadline_{};    // When the attempt has been silent too long.
  Millis head_deadline_{};  // When the response head must be complete.
  Millis window_start_{};   // When the throughput floor's window began.
  std::uint64_t window_from_ = 0;
  // Sending stopped (failed, or stalled for the read timeout) after the request head had
  // left: the server may have answered early (413 before reading the body) and closed.
  // The answer already received is read; without one, the attempt fails with the send's
  // failure.
  Status send_failure_ = Status::kOk;
  const char* send_failure_message_ = "";
  char head_limit_message_[112] = {};
  char slow_message_[128] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_HTTP_EXCHANGE_HPP_

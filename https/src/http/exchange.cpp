#include "stepback/https/http/exchange.hpp"

#include <cstdio>

namespace stepback::https {
namespace {

// Receive calls one turn makes before handing control back to the loop: a peer that sends
// without pause cannot starve the application.
constexpr int kReceivesPerTurn = 4;

Exchange::Result failed(Status status, const char* message) {
  Exchange::Result r;
  r.kind = Exchange::Result::Kind::kFailed;
  r.status = status;
  r.message = message;
  return r;
}

Exchange::Result of(Exchange::Result::Kind kind) {
  Exchange::Result r;
  r.kind = kind;
  return r;
}

Exchange::Result wait(int fd, IoInterest interest, Millis at) {
  Exchange::Result r;
  r.kind = Exchange::Result::Kind::kWait;
  r.fd = fd;
  r.interest = interest;
  r.at = at;
  return r;
}

Exchange::Result complete(bool reusable) {
  Exchange::Result r = of(Exchange::Result::Kind::kComplete);
  r.reusable = reusable;
  return r;
}

// Bytes of the response body still to come when its length is known, else UINT64_MAX.
std::uint64_t body_left(const ResponseParser& parser) {
  // The last bytes of a body need not wait for a whole quantum.
  const std::optional<std::uint64_t> length = parser.content_length();
  if (!parser.head_complete() || parser.chunked() || !length) return UINT64_MAX;
  return *length > parser.body_size() ? *length - parser.body_size() : 1;
}

}  // namespace

void Exchange::begin(Millis now, ConstBytes head, const BodySource& body) {
  head_ = head;
  body_ = body;
  sent_ = 0;
  chunk_size_ = chunk_sent_ = send_granted_ = 0;
  send_failure_ = Status::kOk;
  io_deadline_ = now + timeouts_.read;
  begin_window(now, 0);
}

void Exchange::connected(Millis now) {
  io_deadline_ = now + timeouts_.read;
  begin_window(now, 0);
}

Exchange::Result Exchange::send(Millis now, Transport& stream, RateLimiter* limit,
                                Millis time_limit, SendProgress progress) {
  const std::uint64_t total = head_.size + body_.size;
  while (sent_ < total) {
    ConstBytes chunk;
    if (sent_ < head_.size) {
      chunk = ConstBytes{head_.data + sent_, head_.size - static_cast<std::size_t>(sent_)};
    } else {
      if (chunk_sent_ == chunk_size_) {
        // Pulls the next run of body bytes into the scratch buffer.
        const std::uint64_t offset = sent_ - head_.size;
        const std::uint64_t left = body_.size - offset;
        MutableBytes out = io_;
        if (out.size > left) out.size = static_cast<std::size_t>(left);
        const std::size_t n = body_.read(body_.context, offset, out);
        if (n == 0 || n > out.size) {
          Result r =
              failed(Status::kBodySource, "the request body source ended before its stated size");
          r.kind = Result::Kind::kBodySource;
          return r;
        }
        chunk_size_ = n;
        chunk_sent_ = 0;
      }
      chunk = ConstBytes{io_.data + chunk_sent_, chunk_size_ - chunk_sent_};
    }
    if (limit != nullptr) {
      if (send_granted_ == 0) {
        send_granted_ = static_cast<std::size_t>(limit->available(now, chunk.size));
        if (send_granted_ == 0) return tokens(now, *limit, total - sent_);
      }
      if (chunk.size > send_granted_) chunk.size = send_granted_;
    }
    std::size_t n = 0;
    const Status s = stream.send(chunk, &n);
    if (s == Status::kOk) {
      if (limit != nullptr) {
        limit->take(n);
        send_granted_ = 0;
      }
      if (sent_ >= head_.size) chunk_sent_ += n;
      sent_ += n;
      if (n > 0) io_deadline_ = now + timeouts_.read;
      if (sent_ > head_.size && progress.sent != nullptr) {
        progress.sent(progress.context, now, sent_ - head_.size);
      }
      continue;
    }
    if (s == Status::kWouldBlock) {
      const Millis attempt_limit = min(io_deadline_, time_limit);
      if (now >= attempt_limit) {
        return stopped(now, Status::kTimeout,
                       "the request stalled: nothing could be sent for the read timeout");
      }
      // A server that reads a byte now and then is not stalled, but no more use.
      if (below_floor(now, sent_, "the request went out", limit)) {
        return failed(Status::kTimeout, slow_message_);
      }
      return wait(stream.fd(), stream.wants(), min(attempt_limit, window_end()));
    }
    return stopped(now, s, "the connection failed while sending the request");
  }
  io_deadline_ = now + timeouts_.read;
  head_deadline_ = io_deadline_;
  return of(Result::Kind::kSent);
}

// A server may answer before it has read the whole request (a 413 from the head alone) and
// close; the send then fails, the unread body making the close a reset. Whatever the server
// sent before is already in the receive queue: the exchange turns to reading it (a reset
// connection reports its end at once; no more than the read timeout is waited), and reports
// the send's failure when no whole response comes. Only once the head has left, since a
// server answers only a request it has seen; never on to a kept connection after.
Exchange::Result Exchange::stopped(Millis now, Status status, const char* message) {
  if (sent_ < head_.size) return failed(status, message);
  send_failure_ = status;
  send_failure_message_ = message;
  head_deadline_ = now + timeouts_.read;
  return of(Result::Kind::kSent);
}

Exchange::Result Exchange::receive(Millis now, Transport& stream, ResponseParser& parser,
                                   RateLimiter* limit, Millis time_limit) {
  for (int i = 0; i < kReceivesPerTurn; ++i) {
    MutableBytes into = io_;
    if (limit != nullptr) {
      // No more than the bucket holds (the rest waits in the sender's window), and never a
      // receive of nothing, which a socket answers as the end of the stream.
      const std::uint64_t allowed = limit->available(now, into.size);
      if (allowed == 0) return tokens(now, *limit, body_left(parser));
      into.size = static_cast<std::size_t>(allowed);
    }
    std::size_t n = 0;
    const Status s = stream.recv(into, &n);
    if (s == Status::kOk) {
      if (limit != nullptr) limit->take(n);
      io_deadline_ = now + timeouts_.read;  // The read timeout bounds silence, not the body.
      const bool had_head = parser.head_complete();
      std::size_t consumed = 0;
      const ParseProgress p = parser.feed(ConstBytes{io_.data, n}, &consumed);
      if (p == ParseProgress::kFailed) {
        Result r = failed(parser.error(), parser.error_message());
        r.kind = Result::Kind::kParseFailed;
        if (r.status == Status::kHeadersTooLarge && !parser.head_complete()) {
          // Named with its size, so that the app knows which buffer to grow.
          (void)std::snprintf(head_limit_message_, sizeof head_limit_message_,
                              "the response head is larger than the response-head buffer "
                              "(ClientBuffers::response_head, %zu bytes)",
                              parser.head_capacity());
          r.message = head_limit_message_;
        }
        return r;
      }
      if (p == ParseProgress::kDone) return complete(consumed == n && send_failure_ == Status::kOk);
      if (!had_head && parser.head_complete()) begin_window(now, 0);  // The body's first.
      continue;
    }
    if (send_failure_ != Status::kOk && s != Status::kWouldBlock) {
      // An early answer was cut, or there was none: the send's failure is the attempt's.
      if (s == Status::kClosed && parser.finish() == ParseProgress::kDone) return complete(false);
      return failed(send_failure_, send_failure_message_);
    }
    if (s == Status::kWouldBlock) {
      const Millis attempt_limit = min(io_deadline_, time_limit);
      if (now >= attempt_limit) {
        if (send_failure_ != Status::kOk) return failed(send_failure_, send_failure_message_);
        return failed(Status::kTimeout, parser.started()
                                            ? "the response stalled: no byte for the read timeout"
                                            : "timed out waiting for the response");
      }
      // Bytes that trickle in keep the read timeout away, but not these two limits. Judged
      // once what has arrived is read, so a loop that stepped late is not taken for a slow
      // server.
      if (const char* slow = too_slow(now, parser, limit)) return failed(Status::kTimeout, slow);
      const Millis slow_limit = parser.head_complete() ? window_end() : head_deadline_;
      return wait(stream.fd(), stream.wants(), min(attempt_limit, slow_limit));
    }
    if (s == Status::kClosed) {
      if (parser.finish() == ParseProgress::kDone) return complete(false);
      return failed(Status::kReset, "the connection closed before the response was complete");
    }
    return failed(s, "the connection failed while receiving the response");
  }
  // The bucket is spent: sleep until it holds a quantum again, rather than a turn that
  // would only find it empty.
  if (limit != nullptr && limit->available(now, 1) == 0) {
    return tokens(now, *limit, body_left(parser));
  }
  // Bytes keep coming: hand the loop back its turn, to be stepped again at once.
  return wait(-1, IoInterest::kNone, now);
}

Exchange::Result Exchange::tokens(Millis now, const RateLimiter& limit, std::uint64_t want) const {
  // A quantum, not a byte: what one turn moves (four io buffers), or half the burst, or the
  // bytes still to come, the least. Each wake of the loop costs a context switch, so a few a
  // second; half the burst, so that a wake that comes late loses no tokens to a full bucket.
  std::uint64_t quantum = std::uint64_t{kReceivesPerTurn} * io_.size;
  if (quantum > want) quantum = want;
  if (quantum > limit.burst() / 2) quantum = limit.burst() / 2;
  if (quantum == 0) quantum = 1;
  return wait(-1, IoInterest::kNone, limit.ready_at(now, quantum));
}

void Exchange::begin_window(Millis now, std::uint64_t count) {
  window_start_ = now;
  window_from_ = count;
}

Millis Exchange::window_end() const {
  return timeouts_.speed_limit == 0 || timeouts_.speed_time.count() == 0
             ? Millis::max()
             : window_start_ + timeouts_.speed_time;
}

bool Exchange::below_floor(Millis now, std::uint64_t count, const char* what,
                           const RateLimiter* pace) {
  // Tumbling windows of at least speed_time (> 0) each: no history to keep, no clock to read.
  const std::uint64_t ms = (now - window_start_).count();
  if (now < window_end() || ms == 0) return false;
  const std::uint64_t bytes = count - window_from_;
  const std::uint64_t rate = bytes > UINT64_MAX / 1000 ? UINT64_MAX : bytes * 1000 / ms;
  std::uint32_t limit = timeouts_.speed_limit;
  // A rate limit at or below the floor would fail its own transfer as too slow.
  if (pace != nullptr && pace->limited() && pace->rate() / 2 < limit) {
    limit = static_cast<std::uint32_t>(pace->rate() / 2);
  }
  if (rate >= limit) {
    begin_window(now, count);
    return false;
  }
  (void)std::snprintf(slow_message_, sizeof slow_message_,
                      "%s at %llu B/s over %llu ms, below the speed limit of %lu B/s", what,
                      static_cast<unsigned long long>(rate), static_cast<unsigned long long>(ms),
                      static_cast<unsigned long>(limit));
  return true;
}

const char* Exchange::too_slow(Millis now, const ResponseParser& parser, const RateLimiter* pace) {
  if (parser.head_complete()) {
    return below_floor(now, parser.body_size(), "the response body arrived", pace) ? slow_message_
                                                                                   : nullptr;
  }
  if (now < head_deadline_) return nullptr;
  (void)std::snprintf(slow_message_, sizeof slow_message_,
                      "the response head did not arrive within the read timeout (%llu ms)",
                      static_cast<unsigned long long>(timeouts_.read.count()));
  return slow_message_;
}

}  // namespace stepback::https

// The Client's TLS 1.3 early data (0-RTT) stage: which attempts may offer their request as
// early data, what became of it, and the 425 Too Early rule (docs/https.md, "Early data").
#ifndef STEPBACK_HTTPS_CLIENT_EARLY_DATA_HPP_
#define STEPBACK_HTTPS_CLIENT_EARLY_DATA_HPP_

#include <cstdint>

#include "stepback/https/http/request.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

class EarlyDataStage {
 public:
  // A counted attempt begins: a 425 in the last one no longer holds.
  void new_attempt() { refused_ = false; }
  // An exchange begins: nothing has gone early in it.
  void reset() { result_ = EarlyDataResult{}; }
  // Whether `request` may be offered as early data on a new connection: one that may be
  // replayed (GET, HEAD, or declared idempotent; never one that is not idempotent under its
  // rule) without a body, unless a 425 sent it again after the handshake in this attempt.
  bool may_ride(const Request& request) const;
  // The connection is up: what became of the bytes offered.
  void connected(const EarlyDataResult& result) { result_ = result; }
  const EarlyDataResult& result() const { return result_; }
  // A response of `status` is a 425 Too Early to a request the server took as early data.
  bool too_early(std::uint16_t status) const {
    return result_.state == EarlyData::kAccepted && !refused_ && status == 425;
  }
  // The 425 was answered: the request goes after the handshake, and not early again.
  void refuse() { refused_ = true; }

 private:
  EarlyDataResult result_;
  bool refused_ = false;
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_CLIENT_EARLY_DATA_HPP_

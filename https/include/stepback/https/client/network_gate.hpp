// The Client's network gate: whether a request may go on the current network (the networks
// its policy allows, and whether an attempt found no path while the platform says there is
// no network), and the hold while it may not: its start, its limit (Timeouts::offline, from
// the first hold until a usable network is announced) and the time it kept the request.
#ifndef STEPBACK_HTTPS_CLIENT_NETWORK_GATE_HPP_
#define STEPBACK_HTTPS_CLIENT_NETWORK_GATE_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "stepback/core/millis.hpp"
#include "stepback/core/policy.hpp"
#include "stepback/core/random.hpp"
#include "stepback/https/network.hpp"

namespace stepback::https {

class NetworkGate {
 public:
  // What hold() found.
  struct Hold {
    bool began = false;    // The hold starts now: the wait is news (a kWait event).
    bool expired = false;  // The offline limit passed: the request ends.
    Millis end{};          // When the limit ends the hold.
    // Why it holds (began), or why the request ends (expired): "no network the request may
    // use came within N s (Timeouts::offline): <why>", written into hold()'s `words`.
    const char* message = "";
  };

  // A new request: nothing held, nothing learned; the platform's last word is kept.
  void reset();
  // The platform's word on the network. Reachability is learned again by trying; a usable
  // network disarms the offline limit.
  void changed(const NetworkInfo& network, const NetworkPolicy& policy, std::uint64_t size);
  // Why the network may not be used for a transfer of `size` bytes, in words ("" when it may).
  const char* refusal(const NetworkPolicy& policy, std::uint64_t size) const;
  // An attempt found no path: whether that makes the request wait (the platform says there
  // is no network), in which case it waits until the next changed().
  bool no_path();
  // Marks an exchange under way on the network that changed; take_switch() ends the mark.
  void mark_switch() { switch_pending_ = true; }
  bool take_switch();
  // Time held since the last call, to exclude from the deadline (0 when not held).
  Millis account(Millis now);
  // Holds (or goes on holding) at `now`, against `limit`, because of `why` (refusal()'s words);
  // the expired hold's words go into `words` (the caller's, so the gate holds no text buffer).
  Hold hold(Millis now, Millis limit, const char* why, char* words, std::size_t words_size);
  void release() { held_ = false; }
  // The hold ends at `now` on a network the request may use, as the request is about to be
  // sent: its send waits U[0, bound] from `now`, bound = max(jitter_range, multiplier x the
  // hold's length), at most max_backoff, as RetryMachine::network_available() shortens a
  // backoff. A fleet held together (a cell or a region offline) then comes back spread over
  // about as long as it was held, not in the same second, while a request whose network blinked
  // goes within the jitter range. Returns send_at(); after the hold, or without one, now.
  Millis spread(Millis now, const Policy& policy, RandomSource& random);
  // When the request held last may be sent (spread()); 0 after reset().
  Millis send_at() const { return send_at_; }
  bool held() const { return held_; }
  Millis time_offline() const { return time_offline_; }
  const NetworkInfo& network() const { return network_; }
  // The RunHint of a request that runs until `at` (an exchange, a lookup or a connect under
  // way: `running`) or waits until then, held or in a backoff; `size` as refusal() weighs it,
  // `bytes_left` of the response (or of the request body, before a response).
  RunHint hint(Millis at, bool running, const NetworkPolicy& policy, std::uint64_t size,
               std::optional<std::uint64_t> bytes_left) const;

 private:
  NetworkInfo network_;  // The last changed()'s.
  Millis held_mark_{};   // Until when the hold's time has been excluded from the deadline.
  Millis held_since_{};  // When the hold began.
  Millis send_at_{};     // spread()'s answer.
  Millis hold_end_{};    // When the hold ends the request.
  Millis time_offline_{};
  bool switch_pending_ = false;  // The network changed while an exchange was under way.
  bool held_ = false;            // Waiting for a network the request may use.
  bool unreachable_ = false;     // An attempt found no path while the platform said offline.
  bool hold_armed_ = false;      // hold_end_ runs: no usable network was announced since.
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_CLIENT_NETWORK_GATE_HPP_

#include "stepback/https/client/network_gate.hpp"

#include <cstdio>

namespace stepback::https {

void set_network_needs(RunHint* hint, const NetworkPolicy& policy, std::uint64_t size) {
  hint->unmetered = !policy.metered || size > policy.metered_up_to;
  hint->not_roaming = !policy.roaming;
}

void NetworkGate::reset() {
  held_ = switch_pending_ = unreachable_ = hold_armed_ = false;
  time_offline_ = Millis{};
  send_at_ = Millis{};
}

void NetworkGate::changed(const NetworkInfo& network, const NetworkPolicy& policy,
                          std::uint64_t size) {
  network_ = network;
  // Whatever changed, a destination may be reachable again: the next attempt finds out.
  unreachable_ = false;
  if (network.connected && refusal(policy, size)[0] == '\0') hold_armed_ = false;
}

const char* NetworkGate::refusal(const NetworkPolicy& policy, std::uint64_t size) const {
  // No network is a verdict only on a destination an attempt could not reach: loopback, the
  // device's own addresses and a LAN without a default route are tried all the same.
  if (!network_.connected && unreachable_) return "there is no network";
  if (network_.roaming && !policy.roaming) return "the network is roaming, which it may not use";
  if (network_.metered) {
    if (!policy.metered) return "the network is metered, which it may not use";
    if (size > policy.metered_up_to) {
      return "the network is metered and the transfer is larger than it may move over one";
    }
  }
  return "";
}

bool NetworkGate::no_path() {
  // Without the platform's word (or with a network it calls connected) an unreachable
  // destination is an ordinary retry.
  if (network_.connected) return false;
  unreachable_ = true;
  return true;
}

bool NetworkGate::take_switch() {
  const bool pending = switch_pending_;
  switch_pending_ = false;
  return pending;
}

Millis NetworkGate::account(Millis now) {
  if (!held_) return Millis{};
  const Millis spent = now - held_mark_;
  time_offline_ = time_offline_ + spent;
  held_mark_ = now;
  return spent;
}

NetworkGate::Hold NetworkGate::hold(Millis now, Millis limit, const char* why, char* words,
                                    std::size_t words_size) {
  Hold h;
  h.message = why;
  if (!held_) {
    held_ = true;
    held_mark_ = now;
    held_since_ = now;
    // The limit runs from the first hold until a usable network is announced: a route table
    // that changes without giving a way out does not restart it.
    if (!hold_armed_) {
      hold_armed_ = true;
      hold_end_ = now + limit;  // Saturating.
    }
    h.began = true;
  }
  h.end = hold_end_;
  h.expired = now >= hold_end_;
  if (h.expired) {
    (void)std::snprintf(words, words_size,
                        "no network the request may use came within %llu s (Timeouts::offline): "
                        "%s",
                        static_cast<unsigned long long>(limit.count() / 1000), why);
    h.message = words;
  }
  return h;
}

Millis NetworkGate::spread(Millis now, const Policy& policy, RandomSource& random) {
  if (!held_) return send_at_ > now ? send_at_ : now;
  held_ = false;
  const std::uint64_t held = now > held_since_ ? (now - held_since_).count() : 0;
  const std::uint64_t ran =
      held > UINT64_MAX / policy.multiplier ? UINT64_MAX : held * policy.multiplier;
  std::uint64_t bound = ran > policy.jitter_range.count() ? ran : policy.jitter_range.count();
  if (bound > policy.max_backoff.count()) bound = policy.max_backoff.count();
  if (bound > UINT32_MAX) bound = UINT32_MAX;
  send_at_ = now + Millis(uniform(random, static_cast<std::uint32_t>(bound)));
  return send_at_;
}

RunHint NetworkGate::hint(Millis at, bool running, const NetworkPolicy& policy, std::uint64_t size,
                          std::optional<std::uint64_t> bytes_left) const {
  RunHint hint;
  hint.run_at = at;
  if (running) {
    hint.state = RunHint::State::kRunning;
  } else {
    hint.state = held_ ? RunHint::State::kWaitingForNetwork : RunHint::State::kWaiting;
  }
  set_network_needs(&hint, policy, size);
  hint.bytes_left = bytes_left;
  return hint;
}

}  // namespace stepback::https

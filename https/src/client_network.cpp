// The Client's side of the platform's network news (ClientOptions::network, NetworkInfo):
// what a change does to the request under way and to a kept connection, the wait for a network
// the request may use, and the RunHint the app schedules by. The decisions are the network
// gate's (client/network_gate); here the Client acts on them and emits their events.
#include "stepback/https/client.hpp"

#include "stepback/https/failure.hpp"

namespace stepback::https {

void Client::network_available(Millis now) {
  if (phase_ == Phase::kDone) return;
  if (phase_ == Phase::kConnecting) {
    conn_.network_changed();
    open_pending_ = true;  // on_connect() opens again on the next step().
  } else if (phase_ != Phase::kSending && phase_ != Phase::kReceiving) {
    conn_.network_changed();
  }
  machine_.network_available(now);
}

void Client::network_changed(Millis now, const NetworkInfo& network) {
  gate_.changed(network, options_.network, transfer_size());
  const bool under_way =
      phase_ == Phase::kConnecting || phase_ == Phase::kSending || phase_ == Phase::kReceiving;
  if (under_way) {
    gate_.mark_switch();  // step() ends it: phases change there alone.
    return;
  }
  // A connection kept from the old network would only fail on its first use.
  conn_.network_changed();
  if (phase_ != Phase::kDone && network.connected && network_usable()) {
    machine_.network_available(now);
  }
}

bool Client::network_usable() const { return network_refusal()[0] == '\0'; }

RunHint Client::run_hint(const ClientNext& next) const {
  if (next.kind == ClientNext::Kind::kDone) return RunHint{};
  std::optional<std::uint64_t> left;
  if (const std::optional<std::uint64_t> total = body_.total()) {
    left = *total > body_.delivered() ? *total - body_.delivered() : 0;
  } else if (request_.spec().body.size > 0) {
    left = request_.spec().body.size;
  }
  return gate_.hint(next.at, next.kind == ClientNext::Kind::kWaitIo, options_.network,
                    transfer_size(), left);
}

std::uint64_t Client::transfer_size() const {
  const std::uint64_t body = request_.spec().body.size;
  return body > 0 ? body : body_.total().value_or(0);
}

Client::Step Client::on_network_switch(Millis now) {
  // Request bytes left on the old network: the server may have the request.
  const bool may_have_reached = exchange_.sent() > 0;
  conn_.network_changed();
  if (may_have_reached && !request_.idempotent()) {
    return fail_attempt(now, Status::kReset,
                        "the network changed while the request was on its way; it may have been "
                        "processed, and it is not idempotent");
  }
  ClientEvent e = event(ClientEvent::Kind::kError, now);
  e.failure = Failure::kReset;
  e.message = network_usable() ? "the network changed: the attempt goes again on the new one"
                               : "the network changed to one the request may not use";
  emit(e);
  // The machine still waits for this attempt's report: it answers kSend again, and the
  // switch is neither a retry nor a failure (a GET goes on by Range).
  uncounted_ = true;
  return go(Phase::kWaiting);
}

Client::Step Client::hold(Millis now) {
  const NetworkGate::Hold h = gate_.hold(now, options_.timeouts.offline, network_refusal(),
                                         limit_message_, sizeof limit_message_);
  if (h.expired) return stop(now, Outcome::kOffline, Status::kConnectFailed, h.message);
  if (h.began) {
    ClientEvent e = event(ClientEvent::Kind::kWait, now);
    e.wait = h.end - now;
    e.wait_reason = WaitReason::kOffline;
    e.message = h.message;
    emit(e);
  }
  return yield(ClientNext::wait_until(h.end), Phase::kWaiting);
}

Next Client::machine_step(Millis now) {
  // Time spent without a usable network is not the request's: the deadline moves with it.
  if (gate_.held()) machine_.exclude(gate_.account(now));
  return machine_.step(now);
}

// The spread is part of the wait for a network, as the hold is: it spends no deadline.
Millis Client::spread_send(Millis now) {
  const bool was_held = gate_.held();
  const Millis at = gate_.spread(now, context_.policy, context_.random);
  if (was_held && at > now) {
    machine_.exclude(at - now);
    ClientEvent e = event(ClientEvent::Kind::kWait, now);
    e.wait = at - now;
    e.wait_reason = WaitReason::kNetworkBack;
    e.message =
        "a network the request may use came: it goes after a random part of the time "
        "it was held, so that devices held together do not all return at once";
    emit(e);
  }
  return at;
}

}  // namespace stepback::https

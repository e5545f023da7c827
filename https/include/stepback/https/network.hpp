// What a transfer knows of the device's network and asks of it: the platform's word on the
// current network, the networks a request may use, and the hint an OS scheduler needs to run
// a transfer later. Used by the Client, transfer::Upload and transfer::Download.
#ifndef STEPBACK_HTTPS_NETWORK_HPP_
#define STEPBACK_HTTPS_NETWORK_HPP_

#include <cstdint>
#include <optional>

#include "stepback/core/millis.hpp"

namespace stepback::https {

// The device's current network, as the platform describes it (Android's NetworkCapabilities
// NOT_METERED and NOT_ROAMING of the default network, Apple's NWPath isExpensive and
// isConstrained): see Client::network_changed.
struct NetworkInfo {
  bool connected = true;  // There is a network at all (Android: a default network).
  bool metered = false;   // It is paid by the byte (cellular, a hotspot, a metered Wi-Fi).
  bool roaming = false;
};

// The networks a request may use. On one it may not use it waits as it waits without a
// network (Timeouts::offline); a switch onto one mid-exchange ends the exchange at once.
struct NetworkPolicy {
  bool metered = true;  // Whether a metered network may be used at all.
  // Above this many bytes (the response's length once known, or the request body's), a
  // metered network is refused: a large download waits for an unmetered one.
  std::uint64_t metered_up_to = UINT64_MAX;
  bool roaming = true;  // Whether a roaming network may be used.
};

// What an OS scheduler needs to run a transfer later instead of keeping the app alive through
// a long wait (Android's WorkManager or JobScheduler, Apple's BGTaskScheduler): read after a
// step(), from its answer. An app that hands the transfer over saves it (a checkpoint, an
// upload's TransferState), ends it, and starts it again from the record when woken: a wait
// the record holds ends at its wall-clock time, so a scheduler that waited it out leaves none.
struct RunHint {
  enum class State : std::uint8_t {
    kRunning,            // Working, or about to: keep stepping.
    kWaiting,            // Nothing to do until run_at (a backoff, a Retry-After, a rate limit).
    kWaitingForNetwork,  // Until a network it may use comes (see unmetered, not_roaming); at
                         // run_at the offline limit ends it (Timeouts::offline).
    kPaused,             // Until the app goes on with it (resume(), or an upload's extend()).
    kDone,               // Finished.
    // Finished for now without losing anything: its retries (deadline, offline limit,
    // budget) ran out on a failure a later run may well get past, and it kept what it needs
    // to go on (a download its checkpoint, an upload its session). Run the transfer again at
    // run_at (a new process may take up its checkpoint or session); see DeferPolicy.
    kDeferred,
  };
  State state = State::kDone;
  // When the transfer next needs to run (monotonic): the end of the wait, or Millis::max().
  Millis run_at = Millis::max();
  // What a network must be for the transfer to use it, from its NetworkPolicy and size:
  // unmetered (WorkManager's NetworkType.UNMETERED), not roaming (NOT_ROAMING).
  bool unmetered = false;
  bool not_roaming = false;
  // Bytes the transfer still has to move, when its size is known.
  std::optional<std::uint64_t> bytes_left;
};

// Sets hint->unmetered and hint->not_roaming as `policy` says for a transfer of `size` bytes
// (0: not known yet).
void set_network_needs(RunHint* hint, const NetworkPolicy& policy, std::uint64_t size);

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_NETWORK_HPP_

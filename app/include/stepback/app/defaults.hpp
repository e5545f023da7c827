// The device profile's values in the options of a Client, a Download and an Upload, in one
// call each, so that a request built from them behaves as the profile says: its timeouts,
// the redirects it follows (a ClientOptions left at its defaults follows none, and a 302 page
// would pass for the body), the checkpoint policy, the wall clock, and buffers sized by the
// profile. Everything here is allocation-free; the storage is the app's.
//
//   static stepback::app::Buffers buffers;   // Static or a member: tens of KiB.
//   stepback::app::RetrySetup retry;         // The profile's policy, budget, OS-seeded jitter.
//   transfer::DownloadOptions options = stepback::app::download_options(buffers);
//   transfer::Download download(connector, retry.context(), options);
#ifndef STEPBACK_APP_DEFAULTS_HPP_
#define STEPBACK_APP_DEFAULTS_HPP_

#include <cstdint>

#include "stepback/core/budget.hpp"
#include "stepback/core/random.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/client.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"
#include "stepback/profiles/profile.hpp"
#include "stepback/transfer/download.hpp"
#include "stepback/transfer/upload.hpp"

namespace stepback::app {

// The buffers one request (or one Download, or one Upload) runs in, sized by the profile this
// build selected (profiles::active.buffers). Tens of KiB: make it static or a member, not a
// local of a small stack. One request at a time per Buffers.
struct Buffers {
  std::uint8_t request[profiles::active.buffers.request];
  std::uint8_t response_head[profiles::active.buffers.response_head];
  std::uint8_t io[profiles::active.buffers.io];
  std::uint8_t error_body[profiles::active.buffers.error_body];
  std::uint8_t redirect_url[profiles::active.buffers.redirect_url];
  std::uint8_t session_uri[profiles::active.buffers.session_uri];

  // The Client's four buffers over these arrays.
  https::ClientBuffers client();
};

// What a request retries with: the profile's policy, a RetryBudget of the profile's size and
// a Xoshiro128 seeded from the OS (platform::make_os_random), as one RetryContext. Keep it as
// long as the requests that use context(); one may serve many requests (they share the
// budget, as they should).
class RetrySetup {
 public:
  // `profile` must outlive the object (the profiles are constants; profiles::active by
  // default).
  explicit RetrySetup(const profiles::DeviceProfile& profile = profiles::active);
  explicit RetrySetup(profiles::DeviceProfile&& profile) = delete;  // Would dangle.
  RetrySetup(const RetrySetup&) = delete;
  RetrySetup& operator=(const RetrySetup&) = delete;

  // For the Client, Download, Upload or Operation.
  const RetryContext& context() const { return context_; }
  RetryBudget& budget() { return budget_; }
  // Whether the OS gave the seed; when not, the jitter is seeded from the clocks (usable, but
  // a fleet of such devices may draw alike).
  bool seeded_from_os() const { return seed_ == platform::Status::kOk; }
  // Words for a log line: "" when seeded from the OS, else why not.
  const char* seed_message() const;

 private:
  platform::Status seed_ = platform::Status::kEntropyUnavailable;
  Xoshiro128 random_;
  RetryBudget budget_;
  RetryContext context_;
};

// A Client's options as `profile` says, over `buffers` (which must outlive the Client):
// timeouts, max_redirects, redirect_url, the buffers and platform::wall_now. The body sink,
// events, credentials and limits are left for the app.
https::ClientOptions client_options(Buffers& buffers,
                                    const profiles::DeviceProfile& profile = profiles::active);

// A Download's options: client_options(), the profile's checkpoint policy and its deferral
// (a give-up with a checkpoint answers RunHint kDeferred). The body sink
// and the checkpoint sink are the app's (app/download_files.hpp gives both for a file).
transfer::DownloadOptions download_options(
    Buffers& buffers, const profiles::DeviceProfile& profile = profiles::active);

// An Upload's options: the profile's timeouts, the buffers, the session URI buffer and
// platform::wall_now, and the profile's deferral (a give-up with a session open answers
// RunHint kDeferred). (An upload follows no redirects: its 308s are the protocol's.)
transfer::UploadOptions upload_options(Buffers& buffers,
                                       const profiles::DeviceProfile& profile = profiles::active);

}  // namespace stepback::app

#endif  // STEPBACK_APP_DEFAULTS_HPP_

#include "stepback/app/defaults.hpp"

#include "stepback/platform/clock.hpp"

namespace stepback::app {

https::ClientBuffers Buffers::client() {
  return https::ClientBuffers{{request, sizeof request},
                              {response_head, sizeof response_head},
                              {io, sizeof io},
                              {error_body, sizeof error_body}};
}

// seed_ is declared first, so make_os_random() writes it before random_ is built from it.
RetrySetup::RetrySetup(const profiles::DeviceProfile& profile)
    : random_(platform::make_os_random(&seed_)),
      budget_(profile.budget),
      context_{profile.retry, random_, &budget_} {}

const char* RetrySetup::seed_message() const {
  return seeded_from_os() ? ""
                          : "the OS gave no random bytes; the retry jitter is seeded from the "
                            "clocks";
}

https::ClientOptions client_options(Buffers& buffers, const profiles::DeviceProfile& profile) {
  https::ClientOptions options;
  options.timeouts = profile.timeouts;
  options.buffers = buffers.client();
  options.wall_now = &platform::wall_now;
  options.max_redirects = profile.max_redirects;
  options.redirect_url = https::MutableBytes{buffers.redirect_url, sizeof buffers.redirect_url};
  return options;
}

transfer::DownloadOptions download_options(Buffers& buffers,
                                           const profiles::DeviceProfile& profile) {
  transfer::DownloadOptions options;
  options.client = client_options(buffers, profile);
  options.checkpoint = profile.checkpoint;
  options.defer = profile.defer;
  return options;
}

transfer::UploadOptions upload_options(Buffers& buffers, const profiles::DeviceProfile& profile) {
  transfer::UploadOptions options;
  options.timeouts = profile.timeouts;
  options.buffers = buffers.client();
  options.session_uri = https::MutableBytes{buffers.session_uri, sizeof buffers.session_uri};
  options.wall_now = &platform::wall_now;
  options.defer = profile.defer;
  return options;
}

}  // namespace stepback::app

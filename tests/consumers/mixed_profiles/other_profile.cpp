// Compiled with the other profile's definition; including active.hpp is enough to need
// that profile's link-check symbol.
#include "stepback/profiles/active.hpp"

int other_profile_max_retries() {
  return static_cast<int>(stepback::profiles::active.retry.max_retries);
}

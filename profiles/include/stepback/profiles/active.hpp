// stepback::profiles::active: the profile chosen at build time with
// -DSTEPBACK_PROFILE=desktop|mobile (CMake defines STEPBACK_PROFILE_DESKTOP or _MOBILE).
// Every translation unit that includes this header references a symbol that only a
// stepback library built with the same profile defines, so mixing profiles fails to link.
#ifndef STEPBACK_PROFILES_ACTIVE_HPP_
#define STEPBACK_PROFILES_ACTIVE_HPP_

#include "stepback/profiles/desktop.hpp"
#include "stepback/profiles/mobile.hpp"

#if defined(STEPBACK_PROFILE_DESKTOP) && defined(STEPBACK_PROFILE_MOBILE)
#error \
    "stepback: both STEPBACK_PROFILE_DESKTOP and STEPBACK_PROFILE_MOBILE are defined; select one profile (-DSTEPBACK_PROFILE=desktop|mobile)"
#elif !defined(STEPBACK_PROFILE_DESKTOP) && !defined(STEPBACK_PROFILE_MOBILE)
#error \
    "stepback: no profile selected; link stepback::profiles or define STEPBACK_PROFILE_DESKTOP or STEPBACK_PROFILE_MOBILE (-DSTEPBACK_PROFILE=desktop|mobile)"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define STEPBACK_KEEP_ [[maybe_unused]] __attribute__((used))
#else
#define STEPBACK_KEEP_ [[maybe_unused]]
#endif

#if defined(STEPBACK_PROFILE_MOBILE)
extern "C" const int stepback_link_check_profile_mobile;
namespace stepback::profiles {
inline namespace profile_mobile {
// The profile this build selected.
inline constexpr const DeviceProfile& active = mobile;
}  // namespace profile_mobile
namespace detail {
STEPBACK_KEEP_ static const int* const kProfileLinkCheck = &stepback_link_check_profile_mobile;
}  // namespace detail
}  // namespace stepback::profiles
#else
extern "C" const int stepback_link_check_profile_desktop;
namespace stepback::profiles {
inline namespace profile_desktop {
// The profile this build selected.
inline constexpr const DeviceProfile& active = desktop;
}  // namespace profile_desktop
namespace detail {
STEPBACK_KEEP_ static const int* const kProfileLinkCheck = &stepback_link_check_profile_desktop;
}  // namespace detail
}  // namespace stepback::profiles
#endif

#undef STEPBACK_KEEP_

#endif  // STEPBACK_PROFILES_ACTIVE_HPP_

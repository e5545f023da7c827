// Defines the link-check symbol of the profile this library is built with (see active.hpp).
#include "stepback/profiles/active.hpp"

#if defined(STEPBACK_PROFILE_MOBILE)
extern "C" const int stepback_link_check_profile_mobile = 1;
#else
extern "C" const int stepback_link_check_profile_desktop = 1;
#endif

// The device profile's values in the options of a Client, a Download and an Upload.
#ifndef STEPBACK_APP_DEFAULTS_HPP_
#define STEPBACK_APP_DEFAULTS_HPP_

namespace stepback::app {}  // namespace stepback::app

#endif  // STEPBACK_APP_DEFAULTS_HPP_

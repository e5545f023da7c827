#include "stepback/app/defaults.hpp"

namespace stepback::app {}  // namespace stepback::app

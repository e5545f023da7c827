// The SVG picture of `stepback sim --svg`.
#include <cstdio>
#include <vector>

#include "sim.hpp"

namespace stepback::tools {

void write_fleet_svg(std::FILE* out, const char* title, const FleetScenario& scenario,
                     const std::vector<FleetRun>& runs) {
  (void)scenario;
  (void)runs;
  std::fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\"><title>%s</title></svg>\n", title);
}

}  // namespace stepback::tools

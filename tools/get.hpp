// `stepback get`: one HTTPS request, retried per the device profile. Its flags shared with
// `stepback upload` are in request_flags.hpp.
#ifndef STEPBACK_TOOLS_GET_HPP_
#define STEPBACK_TOOLS_GET_HPP_

namespace stepback::tools {

// Runs `stepback get` with argv[0] == "get"; returns the exit code.
int run_get(int argc, char** argv);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_GET_HPP_

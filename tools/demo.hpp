// `stepback demo`: a local HTTPS server inside the process answers 503, then 429 with
// Retry-After, then 200, and a retrying client is run against it from the same poll() loop,
// with the progress (or --trace) of `stepback get`.
#ifndef STEPBACK_TOOLS_DEMO_HPP_
#define STEPBACK_TOOLS_DEMO_HPP_

namespace stepback::tools {

// Runs `stepback demo` with argv[0] == "demo"; returns an exit code of `stepback get`
// (0 once the third attempt succeeds).
int run_demo(int argc, char** argv);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_DEMO_HPP_

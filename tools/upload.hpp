// `stepback upload FILE URL`: Google's resumable upload protocol (transfer::Upload) from the
// command line, on the runtime of `stepback get` (its TLS arena, buffers and exit codes): the
// file is read in place, chunk by chunk, never whole; the object's metadata goes to stdout.
#ifndef STEPBACK_TOOLS_UPLOAD_HPP_
#define STEPBACK_TOOLS_UPLOAD_HPP_

namespace stepback::tools {

// Runs `stepback upload` with argv[0] == "upload"; returns an exit code of `stepback get`.
int run_upload(int argc, char** argv);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_UPLOAD_HPP_

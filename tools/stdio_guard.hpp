// Makes sure descriptors 0, 1 and 2 are open before the program opens anything else.
#ifndef STEPBACK_TOOLS_STDIO_GUARD_HPP_
#define STEPBACK_TOOLS_STDIO_GUARD_HPP_

namespace stepback::tools {

// Opens /dev/null on each of fds 0-2 that is closed, as curl does: started with `>&-`, the
// first socket would otherwise become fd 1 and the body would be written to the server.
// Returns false if a closed one could not be filled (the caller should stop).
bool ensure_stdio_open();

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_STDIO_GUARD_HPP_

// Makes sure descriptors 0, 1 and 2 are open before the program opens anything else, and that
// a write to a pipe whose reader is gone is an error the program reports, not a silent death.
#ifndef STEPBACK_TOOLS_STDIO_GUARD_HPP_
#define STEPBACK_TOOLS_STDIO_GUARD_HPP_

namespace stepback::tools {

// Opens /dev/null on each of fds 0-2 that is closed, as curl does: started with `>&-`, the
// first socket would otherwise become fd 1 and the body would be written to the server. A
// closed stdout gets /dev/null opened read-only, so writing the body there fails (EBADF)
// and is reported (exit 7) rather than lost without a word; stdin and stderr are usable.
// Returns false if a closed one could not be filled (the caller should stop).
bool ensure_stdio_open();

// Ignores SIGPIPE, so that a write to a pipe whose reader went away (`stepback get URL |
// head -c 100`) fails with EPIPE, which the body's writer reports (exit 7, as curl's 23),
// instead of the signal ending the process with nothing said and part of the body lost.
// Sockets never raise it (MSG_NOSIGNAL, SO_NOSIGPIPE).
void ignore_sigpipe();

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_STDIO_GUARD_HPP_

// Words the subcommands' output shares: why a retry loop stopped (`stepback schedule`, the
// closing line of a request) and why a wait lasts as long as it does (progress lines).
#ifndef STEPBACK_TOOLS_WORDS_HPP_
#define STEPBACK_TOOLS_WORDS_HPP_

#include "stepback/core/attempt.hpp"

namespace stepback::tools {

// A short human explanation of why a retry loop stops ("the server's deadline ...").
const char* describe_stop(Outcome o);

// " (Retry-After)" and the like: why a wait lasts as long as it does, for progress lines.
const char* wait_note(WaitReason reason);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_WORDS_HPP_

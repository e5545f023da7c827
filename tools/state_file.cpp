#include "state_file.hpp"

#include <cstdio>

namespace stepback::tools {

StateFile::Load StateFile::load(transfer::TransferState* state, std::string* error) {
  const Load loaded = file_.load(state);
  if (loaded == Load::kRefused) *error = file_.message();
  return loaded;
}

bool StateFile::warn_unless(bool ok) {
  if (!ok && !warned_) {
    std::fprintf(stderr, "%s%s; going on without it\n", prefix_, file_.message());
    warned_ = true;
  }
  return ok;
}

}  // namespace stepback::tools

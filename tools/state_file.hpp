// `stepback upload --state FILE` and `stepback get -o FILE`: a transfer's
// transfer::TransferState kept in a file (app::UploadStateFile, replaced atomically), so that
// the same command run again after a crash or kill goes on; the program's words around it.
#ifndef STEPBACK_TOOLS_STATE_FILE_HPP_
#define STEPBACK_TOOLS_STATE_FILE_HPP_

#include <cstdint>
#include <string>
#include <string_view>

#include "stepback/app/upload_state_file.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/transfer/state.hpp"
#include "stepback/transfer/upload.hpp"

namespace stepback::tools {

// --state FILE: replaced whenever the session, the committed offset or the wait under way
// changes: after the session opens, after each committed chunk, before each wait. A write
// that fails is said once on stderr and the transfer goes on without it.
class StateFile {
 public:
  using Load = app::StateFile::Load;

  // `url` is the initiation URL recorded with the state (empty: the one of the record that
  // load() reads). `prefix` ("stepback upload: ") starts the one warning it may print.
  StateFile(const char* path, std::string_view url, const char* prefix)
      : file_(path, url), prefix_(prefix) {}

  // Reads the file into *state: kAbsent when there is none, kRefused with *error when it
  // cannot be trusted.
  Load load(transfer::TransferState* state, std::string* error);
  // Saves the upload's state if it changed since the last save (`waits`: waits begun).
  void maybe_save(const transfer::Upload& upload, Millis now, std::uint32_t waits) {
    warn_unless(file_.maybe_save(upload, now, waits));
  }
  // Saves the upload's state as it stands (a paused upload's as it stood when paused).
  void save_now(const transfer::Upload& upload, Millis now) {
    warn_unless(file_.save_now(upload, now));
  }
  // Saves the state of an upload whose retry loop has ended (app::UploadStateFile).
  void save_final(const transfer::Upload& upload, Millis now) {
    warn_unless(file_.save_final(upload, now));
  }
  // Replaces the file with `state` as it is; false (after one warning) when that failed.
  bool store(const transfer::TransferState& state) { return warn_unless(file_.store(state)); }
  // Removes the file (the transfer is done, or its session is gone).
  void remove() { (void)file_.remove(); }
  // Where the count of writes is kept, for the done event; valid while the object lives.
  const std::uint32_t* writes() const { return &file_.writes(); }

 private:
  bool warn_unless(bool ok);

  app::UploadStateFile file_;
  const char* prefix_;
  bool warned_ = false;
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_STATE_FILE_HPP_

// `stepback upload --state FILE`: the upload's transfer::TransferState kept in a file, so
// that the same command run again after a crash or kill goes on with the same session.
#ifndef STEPBACK_TOOLS_STATE_FILE_HPP_
#define STEPBACK_TOOLS_STATE_FILE_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/transfer/state.hpp"
#include "stepback/transfer/upload.hpp"

namespace stepback::tools {

// --state FILE: a transfer's transfer::TransferState, replaced atomically (FILE.tmp, fsync,
// rename, fsync of the folder) whenever the session, the committed offset or the wait under
// way changes: after the session opens, after each committed chunk, before each wait.
class StateFile {
 public:
  // What load() found: no file, a state to go on from, or a file it refuses.
  enum class Load : std::uint8_t { kAbsent, kLoaded, kRefused };

  // `path` and `url` (the initiation URL recorded with the state) must outlive the object.
  // `prefix` ("stepback upload: ") starts the one warning it may print on stderr.
  StateFile(const char* path, std::string_view url, const char* prefix);

  // The initiation URL recorded with the state (a view that must outlive the object).
  void set_url(std::string_view url) { url_ = url; }

  // Reads the file into *state: kAbsent when there is none, kRefused with *error when it
  // cannot be trusted.
  Load load(transfer::TransferState* state, std::string* error);

  // Saves the upload's state if it changed since the last save (`waits`: waits begun).
  void maybe_save(const transfer::Upload& upload, Millis now, std::uint32_t waits);

  // Saves the upload's state as it stands (a paused upload's as it stood when paused).
  void save_now(const transfer::Upload& upload, Millis now);

  // Saves the state of an upload whose retry loop has ended: the session and what the
  // server holds, with no retries counted and no wait, for a later run to start afresh.
  void save_final(const transfer::Upload& upload, Millis now);

  // Replaces the file with `state` as it is; false (after one warning) when that failed.
  bool store(const transfer::TransferState& state);

  // Removes the file (the upload is done, or its session is gone).
  void remove();

  // Where the count of writes is kept, for the done event; valid while the object lives.
  const std::uint32_t* writes() const { return &writes_; }

 private:
  bool replace(std::size_t n);
  void sync_dir();

  const char* path_;
  std::string_view url_;
  const char* prefix_;
  std::string tmp_;
  std::string dir_;
  transfer::TransferState state_;
  std::uint8_t buffer_[transfer::kMaxStateBytes + 1] = {};
  char last_session_[transfer::kMaxStateSessionUri] = {};
  std::size_t last_session_size_ = 0;
  std::uint64_t last_committed_ = 0;
  std::uint32_t last_waits_ = 0;
  std::uint32_t writes_ = 0;
  bool warned_ = false;
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_STATE_FILE_HPP_

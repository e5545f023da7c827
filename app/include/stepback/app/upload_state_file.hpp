// An upload's transfer::TransferState kept in a file (POSIX), so that the same app run again
// after a crash, a kill or a reboot goes on with the same session: replaced atomically
// (StateFile) whenever the session, the committed offset or the wait under way changes.
//
//   static stepback::app::UploadStateFile state("photo.jpg.upload", url);
//   transfer::TransferState restored;
//   if (state.load(&restored) == StateFile::Load::kLoaded) spec.session = restored.session_uri();
//   ... each turn of the loop: state.maybe_save(upload, now, waits_so_far);
//   ... done: state.remove();
#ifndef STEPBACK_APP_UPLOAD_STATE_FILE_HPP_
#define STEPBACK_APP_UPLOAD_STATE_FILE_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/app/files.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/transfer/state.hpp"
#include "stepback/transfer/upload.hpp"

namespace stepback::app {

class UploadStateFile {
 public:
  // The record at `path` of an upload whose session was opened at `url` (the initiation
  // URL, kept in every record; copied). An empty `url` takes the one of the record load()
  // reads. See valid().
  UploadStateFile(const char* path, std::string_view url);
  UploadStateFile(const UploadStateFile&) = delete;
  UploadStateFile& operator=(const UploadStateFile&) = delete;

  // Whether the path and the URL fit; when not, message() says which and nothing is saved.
  bool valid() const { return valid_; }
  const char* path() const { return file_.path(); }
  // The initiation URL recorded with the state.
  std::string_view url() const { return std::string_view(url_, url_size_); }

  // Reads the record into *state (see StateFile::load); what it holds counts as saved.
  StateFile::Load load(transfer::TransferState* state);
  // Saves the upload's state if the session, the committed offset or `waits` (the waits
  // begun so far, as the app counts them from the upload's events) changed since the last
  // save. True when nothing needed saving or it was saved; false with words in message().
  bool maybe_save(const transfer::Upload& upload, Millis now, std::uint32_t waits);
  // Saves the upload's state as it stands (a paused upload's as it stood when paused).
  bool save_now(const transfer::Upload& upload, Millis now);
  // Saves the state of an upload whose retry loop has ended: the session and what the server
  // holds, with no retries counted and no wait, for a later run to start afresh.
  bool save_final(const transfer::Upload& upload, Millis now);
  // Replaces the file with `state` as it is.
  bool store(const transfer::TransferState& state) { return file_.store(state); }
  // Removes the file (the upload is done, or its session is gone).
  bool remove() { return file_.remove(); }

  // Records stored so far (a reference that lives as long as the object).
  const std::uint32_t& writes() const { return file_.writes(); }
  // Words on why the last call failed.
  const char* message() const { return message_[0] != '\0' ? message_ : file_.message(); }

 private:
  // Fills state_ from `upload` at `now`; false with words when it does not fit the record.
  bool capture(const transfer::Upload& upload, Millis now);
  void remember(std::string_view session, std::uint64_t committed);

  StateFile file_;
  transfer::TransferState state_;
  char url_[transfer::kMaxStateUrl] = {};
  std::size_t url_size_ = 0;
  char last_session_[transfer::kMaxStateSessionUri] = {};
  std::size_t last_session_size_ = 0;
  std::uint64_t last_committed_ = 0;
  std::uint32_t last_waits_ = 0;
  bool valid_ = false;
  char message_[96] = {};
};

}  // namespace stepback::app

#endif  // STEPBACK_APP_UPLOAD_STATE_FILE_HPP_

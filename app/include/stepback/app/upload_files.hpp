// One resumable upload of a local file as an app keeps it on a POSIX system: the file read in
// place (pread, so any chunk can be sent again), and its state record (UploadStateFile) at
// FILE.upload.state or a path given, taken up by a later process that uploads the same file
// to the same URL, which then goes on with the same session where the last one stopped.
// Every path is kept in a fixed buffer; nothing allocates. The object holds a record and
// paths (tens of KiB): make it static or a member.
//
//   static stepback::app::UploadFiles files;
//   if (files.open("photo.jpg", url) == UploadFiles::Open::kRefused) fail(files.message());
//   files.apply(&spec);                             // The body, and the session to go on with.
//   options.events = files.events(my_sink);         // Counts the waits, then my_sink.
//   ... each turn of the loop: next = upload.step(now); files.after_step(upload, now);
//   files.finish(upload, now);                      // Removes the record, or keeps it.
#ifndef STEPBACK_APP_UPLOAD_FILES_HPP_
#define STEPBACK_APP_UPLOAD_FILES_HPP_

#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/app/files.hpp"
#include "stepback/app/upload_state_file.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/https/types.hpp"
#include "stepback/transfer/state.hpp"
#include "stepback/transfer/upload.hpp"

namespace stepback::app {

class UploadFiles {
 public:
  // What open() found.
  enum class Open : std::uint8_t {
    kFresh,    // No record: the upload opens a new session.
    kResumed,  // A record of this upload: apply() sets its session and retry state.
    kRefused,  // The file cannot be read, or the record cannot be taken up (damaged, not an
               // upload's, of a file of another size, of another URL): message() says why;
               // nothing changed on the disk.
  };

  UploadFiles() = default;
  ~UploadFiles() { close(); }
  UploadFiles(const UploadFiles&) = delete;
  UploadFiles& operator=(const UploadFiles&) = delete;

  // Opens the upload of the regular file `path` to the initiation URL `url` (its size from
  // fstat): the record at `state_path`, or PATH.upload.state when null, is loaded and must be
  // an upload's of a body of this size to this URL. An empty `url` takes the record's (see
  // url()); with no record, that is refused. `url` need only last for the call.
  Open open(const char* path, std::string_view url, const char* state_path = nullptr);

  // Fills the upload's body (the file) and, after kResumed, its session and where its retry
  // loop stood: the retries, what is left of the wait at the wall clock now, and the CRC-32C
  // of the committed bytes when the record has it. The rest of *spec (url, chunk size,
  // headers) is the app's.
  void apply(transfer::UploadSpec* spec);
  // The body alone, as apply() sets it: pread from the file, its size at open().
  https::BodySource body() { return https::BodySource{&read, this, size_}; }

  // For UploadOptions::events: counts the waits that begin (a record is saved when one does),
  // then hands every event to `forward` (none when its function is null).
  transfer::UploadEventSink events(transfer::UploadEventSink forward = {});

  // After each step(): saves the record when the session, the committed offset or the waits
  // changed; once the app has paused the upload (Upload::pause, e.g. on SIGTERM), saves it as
  // it stood when paused. False with words in message() when the record could not be
  // written (the upload can go on; only a later run loses that save).
  bool after_step(const transfer::Upload& upload, Millis now);
  // The end, after step() answered kDone: the record is removed when the upload succeeded or
  // its session expired; else the session and what the server holds are kept (no retry
  // state) for the next run. A paused upload's record is saved as it stood. The file is
  // closed. False with words in message() when the record could not be written or the file
  // could not be read while uploading.
  bool finish(const transfer::Upload& upload, Millis now);

  // The record after kResumed (its committed offset, session, retries), else null.
  const transfer::TransferState* resumed() const { return resumed_ ? &record_ : nullptr; }
  // The initiation URL of the record (given to open(), or the record's).
  std::string_view url() const { return state_ ? state_->url() : std::string_view(); }
  std::uint64_t size() const { return size_; }
  const char* path() const { return path_; }
  const char* state_path() const { return state_ ? state_->path() : ""; }
  // Waits counted by events(), and records written since open().
  std::uint32_t waits() const { return waits_; }
  std::uint32_t writes() const { return state_ ? state_->writes() : 0; }
  // Whether a read of the file failed (or it shrank), and its errno (0: it shrank).
  bool read_failed() const { return read_failed_; }
  int read_error() const { return read_error_; }
  // Words on the last refusal or failure ("" when none).
  const char* message() const { return message_; }

 private:
  static std::size_t read(void* context, std::uint64_t offset, https::MutableBytes out);
  static void on_event(void* context, const transfer::UploadEvent& event);
  Open take_up(std::string_view url);
  Open refuse(const char* message);
  bool saved(bool ok);
  void close();

  int fd_ = -1;
  std::uint64_t size_ = 0;
  bool read_failed_ = false;
  int read_error_ = 0;
  bool resumed_ = false;
  bool paused_saved_ = false;  // The record of the pause under way is written.
  std::uint32_t waits_ = 0;
  transfer::UploadEventSink forward_;
  char path_[kMaxPath] = {};
  char message_[kMaxMessage] = {};
  std::optional<UploadStateFile> state_;  // Built in place by open() (its path and URL).
  transfer::TransferState record_;
};

}  // namespace stepback::app

#endif  // STEPBACK_APP_UPLOAD_FILES_HPP_

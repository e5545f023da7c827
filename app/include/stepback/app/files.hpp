// The files a resumable transfer keeps on a POSIX system: a state record replaced atomically
// (StateFile), the part file a download's body goes to (PartFile), and the two put together
// for one download (DownloadFiles): FILE.part and FILE.part.state, a start from them, the
// checkpoints (the data made durable before the record that counts it) and the rename of
// FILE.part over FILE on success. Every path is kept in a fixed buffer; nothing allocates.
// Large objects (paths, a record's bytes): make them static or members.
//
//   static stepback::app::DownloadFiles files;
//   if (files.open("fw.bin", url) == DownloadFiles::Open::kRefused) fail(files.message());
//   options.client.body = files.sink();
//   options.checkpoints = files.checkpoints();
//   spec.resume = files.resume();
//   ... run the Download ...
//   files.finish(download.result().outcome == Outcome::kSuccess);
#ifndef STEPBACK_APP_FILES_HPP_
#define STEPBACK_APP_FILES_HPP_

#include <limits.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/app/tls_session_file.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/types.hpp"
#include "stepback/transfer/download.hpp"
#include "stepback/transfer/state.hpp"

namespace stepback::app {

// The longest path a file of this room takes, its NUL included.
inline constexpr std::size_t kMaxPath = PATH_MAX;
// Room for a message naming two paths and a reason.
inline constexpr std::size_t kMaxMessage = 2 * kMaxPath + 256;

// A transfer::TransferState kept in a file, replaced atomically: written to PATH.tmp,
// fsync'd, renamed over PATH, and the folder fsync'd, so that PATH is always the old record or
// the new one, never a mix or a cut.
class StateFile {
 public:
  // What load() found: no file, a record to go on from, or a file it refuses (message()).
  enum class Load : std::uint8_t { kAbsent, kLoaded, kRefused };

  StateFile() = default;
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

  // Where the record is kept; false (message() says so) when the path does not fit.
  [[nodiscard]] bool set_path(const char* path);
  const char* path() const { return path_; }

  // Reads the record into *state (left as it was unless kLoaded): kAbsent when there is no
  // file, kRefused when it cannot be read or trusted (cut, damaged, foreign, newer), with
  // words in message().
  Load load(transfer::TransferState* state);
  // Replaces the file with `state`; false with words in message().
  [[nodiscard]] bool store(const transfer::TransferState& state);
  // Removes the file (and makes that durable); true when it is gone.
  bool remove();

  // Words on the last refusal or failure ("" when none).
  const char* message() const { return message_; }
  // Records stored so far (a reference that lives as long as the object, for a reporter).
  const std::uint32_t& writes() const { return writes_; }

 private:
  bool replace(std::size_t n);
  void sync_dir() const;

  char path_[kMaxPath] = {};
  char tmp_[kMaxPath] = {};
  char dir_[kMaxPath] = {};
  std::uint8_t buffer_[transfer::kMaxStateBytes + 1] = {};  // +1: a longer file is refused.
  char message_[kMaxMessage] = {};
  std::uint32_t writes_ = 0;
};

// The file a download's body goes to, written at each byte's offset (pwrite), so that a
// start from a checkpoint appends where the record says; a restart empties it.
class PartFile {
 public:
  PartFile() = default;
  ~PartFile() { (void)close(); }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  // Opens (creating) `path` for reading and writing, emptied when `truncate`; false with
  // words in message().
  [[nodiscard]] bool open(const char* path, bool truncate);
  bool is_open() const { return fd_ >= 0; }
  // Its size now; 0 when it cannot be told.
  std::uint64_t size() const;
  // Cuts it to `size` bytes; false with words in message().
  [[nodiscard]] bool cut(std::uint64_t size);
  // Makes what was written durable (fdatasync; F_FULLFSYNC on Apple); false with words.
  [[nodiscard]] bool sync();
  // Closes it; false when a write or the close failed (message() says which).
  bool close();

  // The ResponseSink that writes into it (write at the offset, restart empties it); the
  // object must outlive the request.
  https::ResponseSink sink();
  // Its first `size` bytes as a body source (pread), for transfer::check_kept_bytes.
  https::BodySource source(std::uint64_t size);

  // Whether a write through sink() failed, and its errno.
  bool failed() const { return failed_; }
  int error() const { return error_; }
  const char* message() const { return message_; }

 private:
  static bool write(void* context, std::uint64_t offset, https::ConstBytes data);
  static bool restart(void* context);
  static std::size_t read(void* context, std::uint64_t offset, https::MutableBytes out);
  bool fail(const char* what);

  int fd_ = -1;
  bool failed_ = false;
  int error_ = 0;
  char path_[kMaxPath] = {};
  char message_[kMaxMessage] = {};
};

// One download's files as `stepback get -o FILE` keeps them: the body in FILE.part, its
// checkpoint record in FILE.part.state (or a path given), FILE.part renamed over FILE when
// the download succeeds. A later process that opens the same FILE goes on from the record.
class DownloadFiles {
 public:
  // What open() found.
  enum class Open : std::uint8_t {
    kFresh,      // No record: FILE.part is empty, the download starts at byte 0.
    kResumed,    // A record and the bytes it counts: resume() is where to go on.
    kStartOver,  // A record whose part is short or no longer holds the bytes it counts:
                 // FILE.part is emptied, the download starts at byte 0 (message() says why).
    kRefused,    // A record that cannot be taken up (foreign, damaged, another URL's), or
                 // a file that cannot be opened or cut: message() says why; nothing changed.
  };

  DownloadFiles() = default;
  DownloadFiles(const DownloadFiles&) = delete;
  DownloadFiles& operator=(const DownloadFiles&) = delete;

  // Opens the files of a download of `url` into `path`: loads the record (at `state_path`,
  // or FILE.part.state when null), checks it is a download of `url` (any URL when
  // `url_may_change`: a pre-signed URL signed again), cuts FILE.part back to its checkpoint
  // (bytes written after it are not trusted) and reads the kept bytes back against the
  // record's digests (transfer::check_kept_bytes). `url` need only last for the call.
  Open open(const char* path, std::string_view url, const char* state_path = nullptr,
            bool url_may_change = false);

  // For DownloadSpec::resume: the record after kResumed, else null.
  const transfer::TransferState* resume() const { return resumed_ ? &record_ : nullptr; }
  // For DownloadOptions::client.body and DownloadOptions::checkpoints: the part file, and a
  // checkpoint sink that makes it durable, then stores the record.
  https::ResponseSink sink() { return part_.sink(); }
  transfer::CheckpointSink checkpoints() { return transfer::CheckpointSink{&save, this}; }

  // The end, for most apps: on success, commit(); else keep() when a checkpoint was stored
  // (the next run goes on from it), discard() when none was. False with words in message()
  // when a file could not be written, renamed or closed.
  bool finish(bool success);
  // Makes FILE.part durable, renames it over FILE and removes the record.
  bool commit();
  // Closes FILE.part, keeping it and its record for a later run.
  bool keep();
  // Closes and removes FILE.part and its record.
  void discard();

  // Opt-in, off by default: keeps `connector`'s TLS session in FILE.tls-session (mode 0600,
  // replaced at each checkpoint), so that a later run of this download resumes the session on
  // its first request; open() loads it (a file it refuses is removed), commit() and discard()
  // remove it, keep() keeps it. The file holds a resumption secret (docs/https.md, "Sessions
  // kept on disk"). Call before open(); nullptr turns it off. `wall_now` (ms since the Unix
  // epoch) dates the record; null for platform::wall_now.
  void keep_tls_session(https::TcpTlsConnector* connector, Millis (*wall_now)() = nullptr);
  // What open() did with the kept session (kAbsent when it is not kept), and the file.
  TlsSessionFile::Load tls_session_load() const { return tls_load_; }
  TlsSessionFile& tls_session() { return tls_session_; }

  const char* path() const { return path_; }
  const char* part_path() const { return part_path_; }
  const char* state_path() const { return state_.path(); }
  // Bytes the last stored record counts, and records stored, since open().
  std::uint64_t stored_delivered() const { return stored_delivered_; }
  std::uint32_t stored() const { return stored_; }
  // Words on the last refusal, start-over or failure ("" when none).
  const char* message() const { return message_; }
  PartFile& part() { return part_; }
  StateFile& state() { return state_; }

 private:
  static bool save(void* context, const transfer::TransferState& state);
  Open take_up(std::string_view url, bool url_may_change);
  Open refuse(const char* message);
  void load_tls_session(std::string_view url);
  void store_tls_session();

  char path_[kMaxPath] = {};
  char part_path_[kMaxPath] = {};
  char message_[kMaxMessage] = {};
  PartFile part_;
  StateFile state_;
  transfer::TransferState record_;
  std::uint8_t scratch_[16 * 1024] = {};  // Reads the kept bytes back.
  std::uint64_t stored_delivered_ = 0;
  std::uint32_t stored_ = 0;
  bool resumed_ = false;
  TlsSessionFile tls_session_;
  https::TcpTlsConnector* tls_connector_ = nullptr;
  Millis (*wall_now_)() = nullptr;
  TlsSessionFile::Load tls_load_ = TlsSessionFile::Load::kAbsent;
};

}  // namespace stepback::app

#endif  // STEPBACK_APP_FILES_HPP_

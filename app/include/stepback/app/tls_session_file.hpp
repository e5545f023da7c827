// A TLS session kept in a file (opt-in), so that a download resumed by a later process (after a
// kill, a reboot, an OS-scheduled run) resumes its TLS session too instead of running a full
// handshake: TcpTlsConnector's session as a record (https/tls/tls_session_record.hpp), written
// with mode 0600 and replaced atomically. DownloadFiles::keep_tls_session turns it on for a
// download. The file holds a resumption secret: see docs/https.md ("Sessions kept on disk") for
// what that allows and how to protect it. Allocation-free: the record's buffer is a member.
#ifndef STEPBACK_APP_TLS_SESSION_FILE_HPP_
#define STEPBACK_APP_TLS_SESSION_FILE_HPP_

#include <limits.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/core/millis.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls_session_record.hpp"

namespace stepback::app {

class TlsSessionFile {
 public:
  // What load() did.
  enum class Load : std::uint8_t {
    kAbsent,   // No file (or an http:// URL): the first connection shakes hands in full.
    kLoaded,   // The connector offers the saved session on its next open() to that server.
    kRefused,  // The file was not taken (message() says why) and is removed.
  };

  TlsSessionFile() = default;
  TlsSessionFile(const TlsSessionFile&) = delete;
  TlsSessionFile& operator=(const TlsSessionFile&) = delete;

  // Where the session is kept; false when the path does not fit.
  [[nodiscard]] bool set_path(const char* path);
  const char* path() const { return path_; }

  // Reads the file and hands it to `connector` for the server of `url`, checked against the
  // connector's TLS configuration at `wall_now` (ms since the Unix epoch). A file it refuses
  // (cut, damaged, too big, another server, another verification, expired) is removed.
  Load load(https::TcpTlsConnector& connector, std::string_view url, Millis wall_now);
  // Replaces the file with the connector's current session, saved at `wall_now`; false (with
  // words in message()) when there is none or the file cannot be written. A session this
  // object already wrote or loaded is not written again (true): a download stores at every
  // checkpoint, and the session changes only with a new handshake or ticket.
  // The connector's open connection is asked first for a session that came with its data
  // (refresh_session()).
  bool store(https::TcpTlsConnector& connector, Millis wall_now);
  // Removes the file; true when it is gone.
  bool remove();

  // Words on the last refusal or failure ("" when none).
  const char* message() const { return message_; }

 private:
  bool replace(std::size_t n);

  char path_[PATH_MAX] = {};
  char tmp_[PATH_MAX] = {};
  std::uint8_t buffer_[https::kTlsSessionRecordMaxBytes + 1] = {};  // +1: a longer file is refused.
  char message_[PATH_MAX + 160] = {};
  // The connector's session_generation() the file holds, when `holds_` (set by load and store).
  std::uint32_t generation_ = 0;
  bool holds_ = false;
};

}  // namespace stepback::app

#endif  // STEPBACK_APP_TLS_SESSION_FILE_HPP_

// What `stepback get` reads besides argv: the -d body, the token of --oauth2-bearer or
// --token-file (read again before every attempt), and the URL of --url-file (read again when
// a pre-signed URL expires).
#ifndef STEPBACK_TOOLS_GET_SOURCES_HPP_
#define STEPBACK_TOOLS_GET_SOURCES_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "get_args.hpp"
#include "stepback/https/types.hpp"

namespace stepback::tools {

// The request body of -d, --data-binary and --data-raw (`count` pieces, joined with '&' as
// curl's): each piece's text, or for "@FILE" the file read whole ("@-": stdin), without its
// CR and LF bytes for -d (DataPiece::Kind::kAscii), into *storage (the one heap use, at
// set-up). No piece: an empty body. False with *error when a file cannot be read.
bool load_data(const DataPiece* pieces, std::size_t count, std::vector<std::uint8_t>* storage,
               https::ConstBytes* out, std::string* error);

// Where Authorization values come from: --oauth2-bearer or --token-file.
struct TokenSource {
  const char* bearer = nullptr;
  const char* file = nullptr;
};

// https::Credentials::authorization for a TokenSource: "Bearer " and the token, the file read
// again on every call (at most 8 KiB, surrounding whitespace trimmed); 0 (no field) when the
// file cannot be read, so the server's 401 says what is wrong.
std::size_t token_authorization(void* context, bool refresh, https::MutableBytes out);

// --url-file: the file is read again when a pre-signed URL expires; the URL is its first line,
// surrounding whitespace trimmed, at most 8 KiB. `current` is the URL in use.
struct UrlFile {
  const char* path = nullptr;
  char current[8 * 1024] = {};
  std::size_t size = 0;
};

// Reads `file`'s URL into file->current; false when it cannot be read or is empty.
bool read_url_file(UrlFile* file);

// https::UrlRefresh for --url-file: the file's URL when it changed since it was last read; 0
// (none: the expiry answer ends the request) when it is the same, unreadable or too long.
std::size_t fresh_url_from_file(void* context, https::MutableBytes out);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_GET_SOURCES_HPP_

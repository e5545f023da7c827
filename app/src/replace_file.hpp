// Replacing a small file atomically on POSIX, for the files next to a transfer (the checkpoint
// record, the upload state, the TLS session).
#ifndef STEPBACK_APP_SRC_REPLACE_FILE_HPP_
#define STEPBACK_APP_SRC_REPLACE_FILE_HPP_

#include <cstddef>
#include <cstdint>

namespace stepback::app::detail {

// Writes data[0, n) to `tmp` (created with mode 0600, and set to it if it was left with other
// bits; never through a symbolic link), flushes it to the disk when `sync`, and renames it
// over `path`: `path` then holds the old bytes or the new ones, never a mix. False on the
// first failure, with errno saying why, and `tmp` removed.
bool replace_file(const char* tmp, const char* path, const std::uint8_t* data, std::size_t n,
                  bool sync);

}  // namespace stepback::app::detail

#endif  // STEPBACK_APP_SRC_REPLACE_FILE_HPP_

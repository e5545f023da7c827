// The hosts file, read the way glibc's files backend reads it: every line whose names include
// the host gives its address, of either family, in file order. CaresResolver answers from it
// before asking c-ares, whose own reading (1.34.5) merges a line into an earlier one with the
// same address and drops the line's names. No stdio and no heap: the file is read
// with open() and read() into a fixed line buffer.
#ifndef STEPBACK_HTTPS_SRC_DNS_HOSTS_FILE_HPP_
#define STEPBACK_HTTPS_SRC_DNS_HOSTS_FILE_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/tcp/address.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https::detail {

// The hosts file c-ares reads by default on POSIX systems.
inline constexpr const char kHostsPath[] = "/etc/hosts";

// Collects the addresses hosts-file text gives one name, from pieces of the text of any size.
class HostsSearch {
 public:
  // The line buffer's size: a line this long or longer, its newline not counted, is skipped.
  static constexpr std::size_t kMaxLine = 1024;

  // Searches for `host` (NUL-terminated, compared ASCII case-insensitively with each name of
  // a line), writing at most `capacity` addresses with `port` to `out`, which must outlive
  // the search.
  HostsSearch(const char* host, std::uint16_t port, SocketAddress* out, std::size_t capacity);
  HostsSearch(const HostsSearch&) = delete;
  HostsSearch& operator=(const HostsSearch&) = delete;

  // Where the text's next bytes go (never empty).
  MutableBytes room();
  // Parses the lines that the `size` bytes just written to room() complete.
  void commit(std::size_t size);
  // Copies `size` bytes of text in through room() and commit().
  void feed(const char* text, std::size_t size);
  // Parses the last line when the text does not end with a newline.
  void finish();

  // Adds `address` unless it is held already; with `out` full, a family holding less than its
  // share (family_quota(): IPv4 the larger half) takes the last slot of the other family.
  void offer(const SocketAddress& address);
  // Forgets the addresses found so far.
  void clear() { count_ = 0; }
  // How many addresses were found, at most `capacity`.
  std::size_t count() const { return count_; }

 private:
  void parse_line(const char* line, std::size_t size);

  const char* host_;
  std::size_t host_size_;
  std::uint16_t port_;
  SocketAddress* out_;
  std::size_t capacity_;
  std::size_t count_ = 0;
  std::size_t used_ = 0;   // Bytes of an unfinished line at the start of buffer_.
  bool skipping_ = false;  // Inside a line longer than the buffer, dropped up to its newline.
  char buffer_[kMaxLine] = {};
};

// Feeds the regular file at `path` to `search` and finishes it, read in pieces into its
// buffer; false, with what the lines read so far gave, when it cannot be opened or read.
[[nodiscard]] bool read_hosts_file(const char* path, HostsSearch* search);

// How many addresses the hosts-file text `text` gives `host`, written to `out`.
std::size_t search_hosts_text(const char* text, std::size_t size, const char* host,
                              std::uint16_t port, SocketAddress* out, std::size_t capacity);

}  // namespace stepback::https::detail

#endif  // STEPBACK_HTTPS_SRC_DNS_HOSTS_FILE_HPP_

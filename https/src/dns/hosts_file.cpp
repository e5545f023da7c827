#include "dns/hosts_file.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stepback::https::detail {
namespace {

// The field separators of a line (glibc's isspace(), without the newline that ends it).
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equal_ignoring_case(const char* a, const char* b, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// The next field of line[*at, size) in *field and *field_size, *at moved past it; false at
// the end of the line.
bool next_field(const char* line, std::size_t size, std::size_t* at, const char** field,
                std::size_t* field_size) {
  std::size_t i = *at;
  while (i < size && is_blank(line[i])) ++i;
  if (i == size) return false;
  const std::size_t begin = i;
  while (i < size && !is_blank(line[i])) ++i;
  *field = line + begin;
  *field_size = i - begin;
  *at = i;
  return true;
}

// Parses a line's address field (IPv4 dotted quad or IPv6, as inet_pton() takes them: no
// zone, no brackets) with `port` into *out; false for anything else.
bool parse_address(const char* field, std::size_t size, std::uint16_t port, SocketAddress* out) {
  char text[INET6_ADDRSTRLEN];
  if (size >= sizeof text) return false;
  std::memcpy(text, field, size);
  text[size] = '\0';
  *out = SocketAddress{};
  if (std::memchr(text, ':', size) == nullptr) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    if (::inet_pton(AF_INET, text, &sin.sin_addr) != 1) return false;
    std::memcpy(out->bytes, &sin, sizeof sin);
    out->size = sizeof sin;
  } else {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    if (::inet_pton(AF_INET6, text, &sin6.sin6_addr) != 1) return false;
    std::memcpy(out->bytes, &sin6, sizeof sin6);
    out->size = sizeof sin6;
  }
  return set_address_port(out, port);
}

bool same_address(const SocketAddress& a, const SocketAddress& b) {
  return a.size == b.size && std::memcmp(a.bytes, b.bytes, a.size) == 0;
}

}  // namespace

HostsSearch::HostsSearch(const char* host, std::uint16_t port, SocketAddress* out,
                         std::size_t capacity)
    : host_(host),
      host_size_(std::strlen(host)),
      port_(port),
      out_(out),
      capacity_(out != nullptr ? capacity : 0) {}

MutableBytes HostsSearch::room() {
  return {reinterpret_cast<std::uint8_t*>(buffer_) + used_, sizeof buffer_ - used_};
}

void HostsSearch::commit(std::size_t size) {
  const std::size_t end = used_ + size;
  std::size_t begin = 0;  // Where the line being looked at starts.
  std::size_t from = used_;
  while (from < end) {
    const void* found = std::memchr(buffer_ + from, '\n', end - from);
    if (found == nullptr) break;
    const auto newline = static_cast<std::size_t>(static_cast<const char*>(found) - buffer_);
    if (skipping_) {
      skipping_ = false;
    } else {
      parse_line(buffer_ + begin, newline - begin);
    }
    begin = newline + 1;
    from = begin;
  }
  if (skipping_) {
    used_ = 0;
    return;
  }
  used_ = end - begin;
  if (used_ == sizeof buffer_) {
    // A full buffer without a newline: the line is too long to be read whole, and a part of
    // it read as a line could name the host with the wrong address or none.
    skipping_ = true;
    used_ = 0;
  } else if (begin > 0) {
    std::memmove(buffer_, buffer_ + begin, used_);
  }
}

void HostsSearch::feed(const char* text, std::size_t size) {
  while (size > 0) {
    const MutableBytes space = room();
    const std::size_t n = size < space.size ? size : space.size;
    std::memcpy(space.data, text, n);
    commit(n);
    text += n;
    size -= n;
  }
}

void HostsSearch::finish() {
  if (!skipping_ && used_ > 0) parse_line(buffer_, used_);
  skipping_ = false;
  used_ = 0;
}

void HostsSearch::offer(const SocketAddress& address) {
  for (std::size_t i = 0; i < count_; ++i) {
    if (same_address(out_[i], address)) return;
  }
  if (count_ < capacity_) {
    out_[count_++] = address;
    return;
  }
  const int family = address_family(address);
  std::size_t held = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    if (address_family(out_[i]) == family) ++held;
  }
  const std::size_t half = capacity_ / 2;
  const std::size_t share = family == AF_INET6 ? half : capacity_ - half;
  if (held >= share) return;
  // The other family holds more than its share: its last address goes (it was found last),
  // and the others keep their order, as family_quota() cuts a list in order.
  std::size_t last = count_;
  while (last > 0 && address_family(out_[last - 1]) == family) --last;
  if (last == 0) return;
  for (std::size_t i = last - 1; i + 1 < count_; ++i) out_[i] = out_[i + 1];
  out_[count_ - 1] = address;
}

void HostsSearch::parse_line(const char* line, std::size_t size) {
  // A comment runs from '#' to the end of the line, wherever it starts (as glibc reads it).
  const void* comment = std::memchr(line, '#', size);
  if (comment != nullptr) size = static_cast<std::size_t>(static_cast<const char*>(comment) - line);
  std::size_t at = 0;
  const char* address = nullptr;
  std::size_t address_size = 0;
  if (!next_field(line, size, &at, &address, &address_size)) return;
  const char* name = nullptr;
  std::size_t name_size = 0;
  bool named = false;
  while (!named && next_field(line, size, &at, &name, &name_size)) {
    named = name_size == host_size_ && equal_ignoring_case(name, host_, name_size);
  }
  SocketAddress parsed;
  if (named && parse_address(address, address_size, port_, &parsed)) offer(parsed);
}

bool read_hosts_file(const char* path, HostsSearch* search) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // A FIFO could block the loop and a device never end; a hosts file is a regular file.
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  while (ok) {
    const MutableBytes space = search->room();
    const ssize_t n = ::read(fd, space.data, space.size);
    if (n > 0) {
      search->commit(static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      ok = false;
    }
  }
  ::close(fd);
  if (ok) search->finish();
  return ok;
}

std::size_t search_hosts_text(const char* text, std::size_t size, const char* host,
                              std::uint16_t port, SocketAddress* out, std::size_t capacity) {
  HostsSearch search(host, port, out, capacity);
  search.feed(text, size);
  search.finish();
  return search.count();
}

}  // namespace stepback::https::detail

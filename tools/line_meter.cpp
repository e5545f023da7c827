#include "line_meter.hpp"

#include <cstdarg>
#include <cstring>

namespace stepback::tools {

void LineBuffer::append(std::string_view s) {
  const std::size_t room = sizeof text_ - 1 - size_;
  const std::size_t n = s.size() < room ? s.size() : room;
  std::memcpy(text_ + size_, s.data(), n);
  size_ += n;
  text_[size_] = '\0';
}

void LineBuffer::appendf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  // clang-analyzer 14 takes `args` for uninitialized after va_start (a false positive, also
  // in sim.cpp's format()).
  // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized)
  const int n = std::vsnprintf(text_ + size_, sizeof text_ - size_, format, args);
  va_end(args);
  if (n > 0) size_ += static_cast<std::size_t>(n);
  if (size_ > sizeof text_ - 1) size_ = sizeof text_ - 1;  // Cut: vsnprintf stopped there.
}

// Appends `s` (at most kMaxFieldBytes of it) to `out` as a JSON string: quotes, backslashes
// and control bytes escaped, and bytes >= 0x7f as \u00XX (read as Latin-1), so the line is
// valid JSON whatever the server sent.
void append_json_string(LineBuffer* out, std::string_view s) {
  out->append("\"");
  for (const char c : s.substr(0, kMaxFieldBytes)) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      const char escaped[2] = {'\\', c};
      out->append(std::string_view(escaped, 2));
    } else if (b < 0x20 || b >= 0x7f) {
      out->appendf("\\u%04x", static_cast<unsigned>(b));
    } else {
      out->append(std::string_view(&c, 1));
    }
  }
  out->append("\"");
}

// Appends `s` (at most kMaxFieldBytes of it) with control bytes replaced, for a terminal.
void append_printable(LineBuffer* out, std::string_view s) {
  for (const char c : s.substr(0, kMaxFieldBytes)) {
    const auto b = static_cast<unsigned char>(c);
    // C0 and C1 controls (0x9b is a one-byte CSI on many terminals) and anything else
    // outside ASCII: what a server sends never reaches the terminal raw.
    const char shown = (b < 0x20 || b >= 0x7f) ? '?' : c;
    out->append(std::string_view(&shown, 1));
  }
}

void append_meter(LineBuffer* out, bool sending, std::uint64_t bytes, std::uint64_t from,
                  std::optional<std::uint64_t> total, std::uint64_t rate) {
  if (sending) out->append("sent ");
  out->appendf("%.1f MB", static_cast<double>(bytes) / 1e6);
  if (from > 0 && from <= bytes) out->appendf(" (from %.1f MB)", static_cast<double>(from) / 1e6);
  if (total && *total > 0) {
    const std::uint64_t have = bytes < *total ? bytes : *total;
    out->appendf(" of %.1f MB (%u%%)", static_cast<double>(*total) / 1e6,
                 static_cast<unsigned>(have * 100 / *total));
  }
  out->appendf(", %.1f MB/s", static_cast<double>(rate) / 1e6);
  if (total && *total > bytes && rate > 0) {
    out->appendf(", %llu s left",
                 static_cast<unsigned long long>((*total - bytes + rate - 1) / rate));
  }
}

namespace {

// Copies `s` into `out` (cut to fit), NUL-terminated.
template <std::size_t N>
void copy_words(std::string_view s, char (&out)[N]) {
  const std::size_t n = s.size() < N - 1 ? s.size() : N - 1;
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

}  // namespace

void LineMeter::begin(bool in_place) {
  line_.clear();
  open_ = true;
  if (in_place && live_) drawn_ = true;
}

void LineMeter::end(std::string_view closing) {
  if (!open_) return;
  if (drawn_) {
    // Replaces what was drawn after the line with the line alone (and its closing words).
    if (!waiting_) closing = {};
    std::fprintf(err_, "\r%s%.*s\x1b[K\n", line_.c_str(), static_cast<int>(closing.size()),
                 closing.data());
  } else {
    std::fprintf(err_, "%s\n", line_.c_str());
  }
  open_ = false;
  drawn_ = false;
  waiting_ = false;
}

void LineMeter::drop() {
  if (!open_) return;
  open_ = false;
  drawn_ = false;
  waiting_ = false;
}

void LineMeter::draw(std::string_view words) {
  drawn_ = true;
  waiting_ = false;
  std::fprintf(err_, "\r%s%.*s\x1b[K", line_.c_str(), static_cast<int>(words.size()), words.data());
  std::fflush(err_);
}

void LineMeter::count_down(Millis at, Millis end, std::string_view before, std::string_view after) {
  copy_words(before, before_);
  copy_words(after, after_);
  drawn_ = true;
  waiting_ = true;
  wait_end_ = end;
  last_draw_ = at;
  draw_countdown(at);
}

void LineMeter::tick(Millis now) {
  if (!wants_ticks() || now - last_draw_ < kTick) return;
  last_draw_ = now;
  draw_countdown(now);
}

void LineMeter::draw_countdown(Millis now) {
  std::fprintf(err_, "\r%s%s%.1f%s\x1b[K", line_.c_str(), before_, seconds(wait_end_ - now),
               after_);
  std::fflush(err_);
}

}  // namespace stepback::tools

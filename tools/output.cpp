#include "output.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace stepback::tools {
namespace {

// The output stream's stdio buffer (buffer_output()).
char g_output_buffer[16 * 1024];

bool write_body(void* context, std::uint64_t /*offset*/, https::ConstBytes data) {
  // Bytes arrive in order, each once (the Client's contract), so appending is enough.
  auto* out = static_cast<BodyOutput*>(context);
  if (data.size == 0) return true;
  if (std::fwrite(data.data, 1, data.size, out->file) != data.size) {
    out->failed = true;
    out->error = errno;
    return false;
  }
  return true;
}

// Starts the output over: a file is emptied; stdout (or any pipe) cannot be.
bool restart_body(void* context) {
  auto* out = static_cast<BodyOutput*>(context);
  if (!out->restartable) return false;
  if (std::fflush(out->file) != 0 || ::ftruncate(::fileno(out->file), 0) != 0 ||
      std::fseek(out->file, 0, SEEK_SET) != 0) {
    out->failed = true;
    out->error = errno;
    return false;
  }
  return true;
}

}  // namespace

https::ResponseSink body_sink(BodyOutput* out) {
  return https::ResponseSink{&write_body, &restart_body, out};
}

void buffer_output(BodyOutput* out) {
  (void)std::setvbuf(out->file, g_output_buffer, _IOFBF, sizeof g_output_buffer);
}

void finish_output(BodyOutput* out, bool close, const char* prefix, const char* name) {
  if (std::fflush(out->file) != 0 && !out->failed) {
    out->failed = true;
    out->error = errno;
  }
  if (close && std::fclose(out->file) != 0 && !out->failed) {
    out->failed = true;
    out->error = errno;
  }
  if (out->failed) {
    std::fprintf(stderr, "%scannot write the body to %s: %s\n", prefix, name,
                 std::strerror(out->error));
  }
}

bool writes_via_part(const char* output) {
  struct stat st {};
  return ::stat(output, &st) != 0 ? errno == ENOENT : S_ISREG(st.st_mode);
}

OutputPath::OutputPath(const char* path) : path_(path) {
  if (path == nullptr || !writes_via_part(path)) return;
  via_part_ = true;
  part_ = std::string(path) + ".part";
}

const char* OutputPath::name() const {
  return via_part_ ? part_.c_str() : (path_ != nullptr ? path_ : "stdout");
}

bool OutputPath::create(BodyOutput* out, const char* prefix) const {
  const char* path = via_part_ ? part_.c_str() : path_;
  out->file = std::fopen(path, "wb");
  if (out->file == nullptr) {
    std::fprintf(stderr, "%scannot open '%s' for writing: %s\n", prefix, path,
                 std::strerror(errno));
    return false;
  }
  return true;
}

void OutputPath::finish(BodyOutput* out, const char* prefix) const {
  finish_output(out, path_ != nullptr, prefix, name());
}

bool OutputPath::commit(const char* prefix) const {
  if (std::rename(part_.c_str(), path_) == 0) return true;
  std::fprintf(stderr, "%scannot rename '%s' to '%s': %s\n", prefix, part_.c_str(), path_,
               std::strerror(errno));
  return false;
}

}  // namespace stepback::tools

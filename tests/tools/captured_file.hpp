// A std::FILE* that a test writes through and then reads back: the stdio output of the
// `stepback` subcommands, checked without running the program.
#ifndef STEPBACK_TESTS_TOOLS_CAPTURED_FILE_HPP_
#define STEPBACK_TESTS_TOOLS_CAPTURED_FILE_HPP_

#include <cstdio>
#include <string>

namespace stepback::tools {

// A temporary file (std::tmpfile), removed when the object goes.
class CapturedFile {
 public:
  CapturedFile() : file_(std::tmpfile()) {}
  ~CapturedFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  CapturedFile(const CapturedFile&) = delete;
  CapturedFile& operator=(const CapturedFile&) = delete;

  // The stream to write to; null when no temporary file could be made.
  std::FILE* get() const { return file_; }

  // Everything written so far; later writes go on after it.
  std::string text() const {
    std::string out;
    if (file_ == nullptr) return "(no temporary file)";
    std::fflush(file_);
    std::rewind(file_);
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) out.append(buffer, n);
    std::fseek(file_, 0, SEEK_END);
    return out;
  }

 private:
  std::FILE* file_;
};

}  // namespace stepback::tools

#endif  // STEPBACK_TESTS_TOOLS_CAPTURED_FILE_HPP_

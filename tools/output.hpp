// Where a response body goes: stdout, -o FILE written in place, or FILE.part renamed over FILE
// on success only; the ResponseSink that writes it, and the stream's stdio buffer.
#ifndef STEPBACK_TOOLS_OUTPUT_HPP_
#define STEPBACK_TOOLS_OUTPUT_HPP_

#include <cstdio>
#include <string>

#include "stepback/https/client.hpp"

namespace stepback::tools {

// Where a response body goes: a stdio stream; records the first failed write.
struct BodyOutput {
  std::FILE* file = nullptr;
  bool failed = false;
  int error = 0;             // errno of the failed write.
  bool restartable = false;  // A regular file that can be emptied and written again.
};

// A ResponseSink that writes to `out`, which must outlive the client.
https::ResponseSink body_sink(BodyOutput* out);

// Gives `out`'s stream the process's static stdio buffer, before its first write, so that
// stdio does not allocate one while the request runs. One output at a time may have it.
void buffer_output(BodyOutput* out);

// Flushes `out` (and closes it when `close`), recording the first failure in it; when writing
// failed at any point, says so on stderr: "<prefix>cannot write the body to <name>: <why>".
void finish_output(BodyOutput* out, bool close, const char* prefix, const char* name);

// Whether `-o output` goes through output.part, renamed over it on success: a regular file or
// a new one. Anything else (/dev/null, a FIFO, a terminal) is written in place and, like
// stdout, cannot start over.
bool writes_via_part(const char* output);

// -o FILE as `stepback get` names it: FILE.part when the body may go there (writes_via_part),
// else FILE in place, or stdout without -o.
class OutputPath {
 public:
  // `path`: -o FILE, or null for stdout.
  explicit OutputPath(const char* path);

  // -o FILE, or null.
  const char* path() const { return path_; }
  bool via_part() const { return via_part_; }
  // FILE.part; empty when the body does not go there.
  const char* part() const { return part_.c_str(); }
  // What the messages call the output: FILE.part, FILE or "stdout".
  const char* name() const;

  // Opens FILE.part (or FILE) for writing from the start into out->file; false after saying
  // why on stderr ("<prefix>cannot open ...").
  bool create(BodyOutput* out, const char* prefix) const;
  // finish_output() of `out` under name(), closing a file.
  void finish(BodyOutput* out, const char* prefix) const;
  // Renames FILE.part over FILE; false after saying why on stderr.
  bool commit(const char* prefix) const;

 private:
  const char* path_;
  bool via_part_ = false;
  std::string part_;
};

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_OUTPUT_HPP_

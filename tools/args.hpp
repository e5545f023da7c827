// A small command-line reader shared by the subcommands of the `stepback` program:
// "--name value" and "--name=value" flags, strict decimal numbers, and lists of names.
#ifndef STEPBACK_TOOLS_ARGS_HPP_
#define STEPBACK_TOOLS_ARGS_HPP_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace stepback::tools {

// Walks argv one flag at a time; the strings must outlive the reader.
class ArgReader {
 public:
  // Reads argv[1..argc); argv[0] is the subcommand's name, as in main().
  ArgReader(int argc, char** argv) : argc_(argc), argv_(argv) {}

  // Whether every argument has been consumed.
  bool done() const { return index_ >= argc_; }

  // Consumes the next argument and returns its name: "--seed" for both "--seed 5" and
  // "--seed=5"; other arguments come back whole. Needs !done().
  std::string_view next();

  // The value of the flag next() returned: its "=value" part, else the following
  // argument (consumed); nullopt when there is none or it is itself a "--" flag.
  std::optional<std::string_view> value();

  // Whether the flag next() returned was written "--name=value".
  bool has_inline_value() const { return inline_value_.has_value(); }

 private:
  int argc_;
  char** argv_;
  int index_ = 1;
  std::optional<std::string_view> inline_value_;
};

// Parses a decimal integer in [0, 2^64 - 1]: digits only, no sign, no spaces, no base
// prefix. Returns nullopt for anything else, including overflow.
std::optional<std::uint64_t> parse_u64(std::string_view text);

// "a, b, c": the allowed values of a flag, for error messages.
std::string join_names(std::initializer_list<const char*> names);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_ARGS_HPP_

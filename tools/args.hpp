// The command-line reader shared by the subcommands of the `stepback` program: each
// subcommand declares its flags in a table (name, whether it takes a value, what a valid value
// is, and what to do with it) and parse_flags() walks argv against it, so that "--name value"
// and "--name=value", --help, unknown options, missing values and switches given a value are
// handled, and worded, once. Also strict decimal numbers, lists of names, and the flags that
// name a device profile or a jitter strategy.
#ifndef STEPBACK_TOOLS_ARGS_HPP_
#define STEPBACK_TOOLS_ARGS_HPP_

#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepback/core/policy.hpp"
#include "stepback/profiles/profile.hpp"

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

// One entry of a subcommand's flag table.
struct Flag {
  // What `apply` is handed: the flag's value (empty for a switch) and where to put a message
  // of its own. Returning false with *error left empty gives "invalid NAME 'VALUE' (EXPECTED)".
  using Apply = std::function<bool(std::string_view value, std::string* error)>;

  std::string_view name;  // "--cacert", "-H".
  bool takes_value = true;
  // What a valid value is, for messages: "allowed: desktop, mobile", "expected 0..1000".
  std::string expected;
  Apply apply;
};

// A flag that takes a value; `expected` may be empty.
Flag value_flag(std::string_view name, std::string expected, Flag::Apply apply);
// A switch: takes no value; sets *on.
Flag switch_flag(std::string_view name, bool* on);
// A flag whose value is kept as it is written: a view into argv (NUL-terminated, so
// value.data() is also a C string).
Flag text_flag(std::string_view name, std::string_view* out);
Flag text_flag(std::string_view name, const char** out);

enum class Parsed { kOk, kHelp, kError };

// Where the arguments that are not flags go (an empty name, a name not starting with '-', or
// "-" alone); false with *error to refuse one. Null: every such argument is refused.
using Positional = std::function<bool(std::string_view arg, std::string* error)>;

// What to say of an option no flag has ("--retry-max-time", "-k"): a whole one-line message,
// or "" for the usual "unknown option" one. Lets a subcommand name its own spelling of
// another program's option.
using UnknownOption = std::function<std::string(std::string_view name)>;

// Reads argv[1..argc) (argv[0] is the subcommand's name, as in main()) against `flags`, in
// order, applying each flag as it comes. "--help" or "-h" stops at once with kHelp. Returns
// kError with a one-line *error naming the argument for an unknown option (what `unknown`
// says of it, else a list of the allowed ones), a flag without its value (a following
// "--flag" is not taken as a value), a switch written "--name=value", a refused positional
// argument or an invalid value.
Parsed parse_flags(int argc, char** argv, const std::vector<Flag>& flags,
                   const Positional& positional, std::string* error,
                   const UnknownOption& unknown = {});

// argv with bundled short options split as getopt (and curl) reads them: "-fsSL" is "-f -s -S
// -L" when each letter is a one-letter flag of `flags`, and a value flag's letter takes the
// rest of the word as its value ("-XPOST", "-o-") or, at the end of it, the next argument. A
// word that is a flag itself, a "--" option, a value (the argument after a value flag) or a
// positional argument is left whole; a letter no flag has ends the split there, as a name of
// its own ("-sk" gives "-s -k"), for parse_flags() to refuse. The new names live in *names;
// values point into argv, so parse_flags() over the result hands out the same tails of argv.
std::vector<char*> split_short_options(int argc, char** argv, const std::vector<Flag>& flags,
                                       std::deque<std::string>* names);

// What a subcommand's parse returns: nullopt after kError, else `options` with its `help`
// member telling whether --help was asked for.
template <typename Options>
std::optional<Options> parsed_options(Parsed parsed, Options options) {
  if (parsed == Parsed::kError) return std::nullopt;
  options.help = parsed == Parsed::kHelp;
  return options;
}

// "--a, --b, --help": the names of `flags`, for messages.
std::string flag_names(const std::vector<Flag>& flags);

// Parses a decimal integer in [0, 2^64 - 1]: digits only, no sign, no spaces, no base
// prefix. Returns nullopt for anything else, including overflow.
std::optional<std::uint64_t> parse_u64(std::string_view text);

// "a, b, c": the allowed values of a flag, for error messages.
std::string join_names(std::initializer_list<const char*> names);

// The profile called `name` ("desktop" or "mobile"), or nullptr.
const profiles::DeviceProfile* find_profile(std::string_view name);

// The jitter strategy called `name` (as to_string(Jitter) spells it), or nullopt.
std::optional<Jitter> find_strategy(std::string_view name);

// The flag table entries the subcommands share: --profile NAME (desktop or mobile) into
// *out, and a jitter strategy flag called `name` (--strategy, --jitter) into *out.
Flag profile_flag(const profiles::DeviceProfile** out);
Flag strategy_flag(std::string_view name, std::optional<Jitter>* out);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_ARGS_HPP_

// The flag table reader shared by the `stepback` subcommands (tools/args.hpp): the rules every
// subcommand gets from it, checked once here rather than through each subcommand.
#include "args.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace stepback::tools {
namespace {

// argv for parse_flags(): "cmd" then `args`, backed by strings the fixture owns.
class Argv {
 public:
  explicit Argv(std::vector<std::string> args) : strings_(std::move(args)) {
    strings_.insert(strings_.begin(), "cmd");
    for (std::string& s : strings_) pointers_.push_back(s.data());
  }
  int argc() const { return static_cast<int>(pointers_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

struct Options {
  std::string_view name;
  const char* path = nullptr;
  std::uint64_t count = 0;
  bool verbose = false;
  std::vector<std::string> positional;
  bool help = false;
};

std::vector<Flag> table(Options* o) {
  return {
      text_flag("--name", &o->name),
      text_flag("-o", &o->path),
      value_flag("--count", "expected 1..9",
                 [o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> n = parse_u64(value);
                   if (!n || *n < 1 || *n > 9) return false;
                   o->count = *n;
                   return true;
                 }),
      value_flag("--even", {},
                 [](std::string_view value, std::string* error) {
                   if (value.size() % 2 == 0) return true;
                   *error = "--even wants an even length";
                   return false;
                 }),
      switch_flag("--verbose", &o->verbose),
  };
}

struct Result {
  Parsed parsed;
  std::string error;
  Options options;
  std::unique_ptr<Argv> argv;  // The strings the options' views point into.
};

Result parse(std::vector<std::string> args, bool take_positional = true) {
  Result r{};
  r.argv = std::make_unique<Argv>(std::move(args));
  Argv& argv = *r.argv;
  const std::vector<Flag> flags = table(&r.options);
  Positional positional;
  if (take_positional) {
    positional = [&r](std::string_view arg, std::string* error) {
      if (arg == "refused") {
        *error = "not this one";
        return false;
      }
      r.options.positional.emplace_back(arg);
      return true;
    };
  }
  r.parsed = parse_flags(argv.argc(), argv.argv(), flags, positional, &r.error);
  return r;
}

TEST(tools, ArgsFlagsTakeSeparateAndInlineValues) {
  const Result r = parse({"--name", "a", "--count=3", "-o", "out.bin", "x", "-", "--verbose"});
  ASSERT_EQ(r.parsed, Parsed::kOk) << r.error;
  EXPECT_EQ(r.options.name, "a");
  EXPECT_EQ(r.options.count, 3U);
  EXPECT_STREQ(r.options.path, "out.bin");
  EXPECT_TRUE(r.options.verbose);
  EXPECT_EQ(r.options.positional, (std::vector<std::string>{"x", "-"}));
}

TEST(tools, ArgsInlineValueIsACString) {
  // text_flag hands out the tail of the argv string: NUL-terminated, usable as a path.
  const Result r = parse({"--name=a=b", "-o", ""});
  ASSERT_EQ(r.parsed, Parsed::kOk) << r.error;
  EXPECT_EQ(r.options.name, "a=b");
  EXPECT_EQ(r.options.name.data()[r.options.name.size()], '\0');
  EXPECT_STREQ(r.options.path, "");
}

TEST(tools, ArgsHelpStopsAtOnce) {
  EXPECT_EQ(parse({"--help", "--bogus"}).parsed, Parsed::kHelp);
  EXPECT_EQ(parse({"--count", "2", "-h"}).parsed, Parsed::kHelp);
  // What follows --help is never looked at: the same invalid value alone is an error.
  EXPECT_EQ(parse({"--help", "--count", "0"}).parsed, Parsed::kHelp);
  EXPECT_EQ(parse({"--count", "0"}).parsed, Parsed::kError);
}

TEST(tools, ArgsErrorsNameTheArgumentAndWhatIsAllowed) {
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const Case cases[] = {
      {{"--bogus"},
       "unknown option '--bogus' (allowed: --name, -o, --count, --even, --verbose, --help)"},
      {{"-x"}, "unknown option '-x' (allowed: --name, -o, --count, --even, --verbose, --help)"},
      {{"--count"}, "--count needs a value (expected 1..9)"},
      {{"--name"}, "--name needs a value"},
      // A following flag is a forgotten value, not the value.
      {{"--name", "--verbose"}, "--name needs a value"},
      {{"--count", "0"}, "invalid --count '0' (expected 1..9)"},
      {{"--count="}, "invalid --count '' (expected 1..9)"},
      {{"--even", "abc"}, "--even wants an even length"},
      {{"--verbose=yes"}, "--verbose takes no value"},
      {{"refused"}, "not this one"},
  };
  for (const Case& c : cases) {
    const Result r = parse(c.args);
    EXPECT_EQ(r.parsed, Parsed::kError) << c.args[0];
    EXPECT_EQ(r.error, c.error);
  }
}

TEST(tools, ArgsWithoutPositionalRefusesArgumentsNamingTheFlags) {
  const Result r = parse({"--verbose", "extra"}, false);
  EXPECT_EQ(r.parsed, Parsed::kError);
  EXPECT_EQ(r.error,
            "unexpected argument 'extra' (allowed: --name, -o, --count, --even, --verbose, "
            "--help)");
}

TEST(tools, ArgsParsedOptionsCarriesHelp) {
  Options o;
  o.count = 7;
  EXPECT_FALSE(parsed_options(Parsed::kError, o).has_value());
  const std::optional<Options> ok = parsed_options(Parsed::kOk, o);
  ASSERT_TRUE(ok.has_value());
  EXPECT_FALSE(ok->help);
  EXPECT_EQ(ok->count, 7U);
  const std::optional<Options> help = parsed_options(Parsed::kHelp, o);
  ASSERT_TRUE(help.has_value());
  EXPECT_TRUE(help->help);
}

// parse() over split_short_options(): the table's -o, plus -v and -X of its own.
struct Split {
  Parsed parsed;
  std::string error;
  std::vector<std::string> args;  // What the split made of argv, argv[0] left out.
  Options options;
  bool v = false;
  std::string_view method;
  std::unique_ptr<Argv> argv;
};

Split split(std::vector<std::string> args, const UnknownOption& unknown = {}) {
  Split r{};
  r.argv = std::make_unique<Argv>(std::move(args));
  std::vector<Flag> flags = table(&r.options);
  flags.push_back(switch_flag("-v", &r.v));
  flags.push_back(text_flag("-X", &r.method));
  std::deque<std::string> names;
  std::vector<char*> out = split_short_options(r.argv->argc(), r.argv->argv(), flags, &names);
  for (std::size_t i = 1; i < out.size(); ++i) r.args.emplace_back(out[i]);
  const Positional positional = [&r](std::string_view arg, std::string*) {
    r.options.positional.emplace_back(arg);
    return true;
  };
  r.parsed =
      parse_flags(static_cast<int>(out.size()), out.data(), flags, positional, &r.error, unknown);
  return r;
}

TEST(tools, ArgsSplitShortOptionsAsGetoptDoes) {
  using Args = std::vector<std::string>;
  EXPECT_EQ(split({"-vo", "out"}).args, (Args{"-v", "-o", "out"}));
  EXPECT_EQ(split({"-vXPOST", "x"}).args, (Args{"-v", "-X", "POST", "x"}));
  EXPECT_EQ(split({"-o-"}).args, (Args{"-o", "-"}));
  // Whole words stay whole: flags, "--" options, values, positional arguments, "-".
  EXPECT_EQ(split({"-o", "-vX", "--name=-vX", "--name", "-vo", "-", "x-y"}).args,
            (Args{"-o", "-vX", "--name=-vX", "--name", "-vo", "-", "x-y"}));
  // A letter no flag has is named alone, the rest of the word left.
  EXPECT_EQ(split({"-vkX", "GET"}).args, (Args{"-v", "-k", "GET"}));
  // A value flag's letter last takes the next argument, unless it is a "--" option.
  EXPECT_EQ(split({"-vo", "--verbose"}).args, (Args{"-v", "-o", "--verbose"}));

  const Split r = split({"-vXPUT", "-o-", "url"});
  ASSERT_EQ(r.parsed, Parsed::kOk) << r.error;
  EXPECT_TRUE(r.v);
  EXPECT_EQ(r.method, "PUT");
  EXPECT_STREQ(r.options.path, "-");
  EXPECT_EQ(r.options.positional, (std::vector<std::string>{"url"}));
  // The attached value is the tail of the argv word: NUL-terminated, as text_flag wants.
  EXPECT_EQ(r.method.data()[r.method.size()], '\0');
}

TEST(tools, ArgsUnknownOptionSaysWhatTheHookSays) {
  const UnknownOption unknown = [](std::string_view name) {
    return name == "-k" ? std::string("no -k here") : std::string();
  };
  Split r = split({"-vk"}, unknown);
  EXPECT_EQ(r.parsed, Parsed::kError);
  EXPECT_EQ(r.error, "no -k here");
  r = split({"-q"}, unknown);
  EXPECT_EQ(r.parsed, Parsed::kError);
  EXPECT_EQ(r.error.rfind("unknown option '-q' (allowed: ", 0), 0U) << r.error;
}

TEST(tools, ArgsParseU64IsStrict) {
  EXPECT_EQ(parse_u64("0"), 0U);
  EXPECT_EQ(parse_u64("18446744073709551615"), ~std::uint64_t{0});
  EXPECT_FALSE(parse_u64("18446744073709551616").has_value());
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "0x10", "1e3"}) {
    EXPECT_FALSE(parse_u64(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace stepback::tools

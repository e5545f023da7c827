#include "args.hpp"

#include <utility>

#include "stepback/profiles/desktop.hpp"
#include "stepback/profiles/mobile.hpp"

namespace stepback::tools {
namespace {

// Allowed values, kept next to the tables find_profile() and find_strategy() search.
std::string profile_names() { return join_names({"desktop", "mobile"}); }
std::string strategy_names() {
  return join_names({"seed", "full", "equal", "decorrelated", "none"});
}

}  // namespace

std::string_view ArgReader::next() {
  const std::string_view arg = argv_[index_++];
  inline_value_.reset();
  if (arg.size() > 2 && arg.substr(0, 2) == "--") {
    const std::size_t eq = arg.find('=');
    if (eq != std::string_view::npos) {
      inline_value_ = arg.substr(eq + 1);
      return arg.substr(0, eq);
    }
  }
  return arg;
}

std::optional<std::string_view> ArgReader::value() {
  if (inline_value_.has_value()) return inline_value_;
  if (done()) return std::nullopt;
  const std::string_view arg = argv_[index_];
  // "--seed --json" means the value was forgotten, not that the seed is "--json".
  if (arg.substr(0, 2) == "--") return std::nullopt;
  ++index_;
  return arg;
}

Flag value_flag(std::string_view name, std::string expected, Flag::Apply apply) {
  return Flag{name, true, std::move(expected), std::move(apply)};
}

Flag switch_flag(std::string_view name, bool* on) {
  return Flag{name, false, {}, [on](std::string_view, std::string*) {
                *on = true;
                return true;
              }};
}

Flag text_flag(std::string_view name, std::string_view* out) {
  return value_flag(name, {}, [out](std::string_view value, std::string*) {
    *out = value;
    return true;
  });
}

Flag text_flag(std::string_view name, const char** out) {
  return value_flag(name, {}, [out](std::string_view value, std::string*) {
    *out = value.data();  // A tail of an argv string: NUL-terminated.
    return true;
  });
}

std::string flag_names(const std::vector<Flag>& flags) {
  std::string out;
  for (const Flag& flag : flags) {
    out += flag.name;
    out += ", ";
  }
  return out + "--help";
}

Parsed parse_flags(int argc, char** argv, const std::vector<Flag>& flags,
                   const Positional& positional, std::string* error, const UnknownOption& unknown) {
  ArgReader args(argc, argv);
  const auto fail = [error](std::string message) {
    *error = std::move(message);
    return Parsed::kError;
  };
  const auto hint = [](const Flag& flag) {
    return flag.expected.empty() ? std::string() : " (" + flag.expected + ")";
  };
  while (!args.done()) {
    const std::string_view name = args.next();
    if (name == "--help" || name == "-h") return Parsed::kHelp;
    if (name.empty() || name[0] != '-' || name == "-") {
      if (!positional) {
        return fail("unexpected argument '" + std::string(name) +
                    "' (allowed: " + flag_names(flags) + ")");
      }
      if (!positional(name, error)) return Parsed::kError;
      continue;
    }
    const Flag* flag = nullptr;
    for (const Flag& f : flags) {
      if (f.name == name) flag = &f;
    }
    if (flag == nullptr) {
      std::string said = unknown ? unknown(name) : std::string();
      if (!said.empty()) return fail(std::move(said));
      return fail("unknown option '" + std::string(name) + "' (allowed: " + flag_names(flags) +
                  ")");
    }
    std::string_view value;
    if (!flag->takes_value) {
      if (args.has_inline_value()) return fail(std::string(name) + " takes no value");
    } else {
      const std::optional<std::string_view> v = args.value();
      if (!v) return fail(std::string(name) + " needs a value" + hint(*flag));
      value = *v;
    }
    error->clear();
    if (!flag->apply(value, error)) {
      if (error->empty()) {
        *error = "invalid " + std::string(name) + " '" + std::string(value) + "'" + hint(*flag);
      }
      return Parsed::kError;
    }
  }
  return Parsed::kOk;
}

std::vector<char*> split_short_options(int argc, char** argv, const std::vector<Flag>& flags,
                                       std::deque<std::string>* names) {
  const auto find = [&flags](std::string_view name) -> const Flag* {
    for (const Flag& f : flags) {
      if (f.name == name) return &f;
    }
    return nullptr;
  };
  // Whether argv[i] would be taken as a value: there, not a "--" option (ArgReader::value()).
  const auto value_at = [argc, argv](int i) {
    return i < argc && std::string_view(argv[i]).substr(0, 2) != "--";
  };
  std::vector<char*> out;
  if (argc > 0) out.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool is_long = arg.substr(0, 2) == "--";
    const Flag* whole = find(is_long ? arg.substr(0, arg.find('=')) : arg);
    if (whole != nullptr || is_long || arg.size() <= 2 || arg[0] != '-') {
      out.push_back(argv[i]);
      const bool inline_value = is_long && arg.find('=') != std::string_view::npos;
      if (whole != nullptr && whole->takes_value && !inline_value && value_at(i + 1)) {
        out.push_back(argv[++i]);
      }
      continue;
    }
    for (std::size_t k = 1; k < arg.size(); ++k) {
      names->push_back(std::string{'-', arg[k]});
      out.push_back(names->back().data());
      const Flag* flag = find(names->back());
      if (flag == nullptr) break;  // Refused by name: the rest of the word is not read.
      if (!flag->takes_value) continue;
      if (k + 1 < arg.size()) {
        out.push_back(argv[i] + k + 1);  // "-XPOST": the rest of the word.
      } else if (value_at(i + 1)) {
        out.push_back(argv[++i]);
      }
      break;
    }
  }
  return out;
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  constexpr std::uint64_t kMax = ~std::uint64_t{0};
  std::uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (kMax - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

std::string join_names(std::initializer_list<const char*> names) {
  std::string out;
  for (const char* name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

const profiles::DeviceProfile* find_profile(std::string_view name) {
  if (name == profiles::desktop.name) return &profiles::desktop;
  if (name == profiles::mobile.name) return &profiles::mobile;
  return nullptr;
}

std::optional<Jitter> find_strategy(std::string_view name) {
  for (const Jitter j :
       {Jitter::kSeed, Jitter::kFull, Jitter::kEqual, Jitter::kDecorrelated, Jitter::kNone}) {
    if (name == to_string(j)) return j;
  }
  return std::nullopt;
}

Flag profile_flag(const profiles::DeviceProfile** out) {
  return value_flag("--profile", "allowed: " + profile_names(),
                    [out](std::string_view value, std::string*) {
                      const profiles::DeviceProfile* profile = find_profile(value);
                      if (profile != nullptr) *out = profile;
                      return profile != nullptr;
                    });
}

Flag strategy_flag(std::string_view name, std::optional<Jitter>* out) {
  return value_flag(name, "allowed: " + strategy_names(),
                    [out](std::string_view value, std::string*) {
                      *out = find_strategy(value);
                      return out->has_value();
                    });
}

}  // namespace stepback::tools

#include "args.hpp"

namespace stepback::tools {

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

}  // namespace stepback::tools

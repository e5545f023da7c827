#include "get_args.hpp"

#include <deque>
#include <iterator>
#include <utility>
#include <vector>

#include "args.hpp"
#include "curl_habits.hpp"
#include "stepback/https/detail/text.hpp"
#include "stepback/profiles/active.hpp"

#ifndef STEPBACK_VERSION
#error "STEPBACK_VERSION must be defined by the build (tools/CMakeLists.txt)"
#endif

namespace stepback::tools {
namespace {

constexpr const char* kUserAgent = "stepback/" STEPBACK_VERSION;

// Why a request field cannot come from -H, or nullptr when it can.
const char* owned_field(std::string_view name) {
  if (https::detail::iequals(name, "content-length") ||
      https::detail::iequals(name, "transfer-encoding")) {
    return "stepback frames the body itself (Content-Length from --data)";
  }
  if (https::detail::iequals(name, "connection")) return "stepback manages the connection itself";
  if (https::detail::iequals(name, "accept-encoding")) {
    return "stepback asks for the identity encoding, so that resumed bytes and digests match";
  }
  return nullptr;
}

// The -H fields that are not extra headers: as in curl, Host and User-Agent replace the
// defaults (an empty User-Agent drops it); the fields stepback writes itself are refused.
HeaderUse special_header(const https::Header& h, std::string_view written, GetOptions* o,
                         std::string* error) {
  if (https::detail::iequals(h.name, "host")) {
    if (h.value.empty()) {
      *error = "-H 'Host:' cannot remove Host (HTTP/1.1 requires it); give a value";
      return HeaderUse::kRefused;
    }
    o->host = h.value;
    return HeaderUse::kTaken;
  }
  if (https::detail::iequals(h.name, "user-agent")) {
    o->user_agent = h.value;
    return HeaderUse::kTaken;
  }
  if (const char* owner = owned_field(h.name)) {
    *error = "-H '" + std::string(written) + "': " + owner;
    return HeaderUse::kRefused;
  }
  return HeaderUse::kStore;
}

// The options that go together or not at all; false with *error.
bool check_get_options(const GetOptions& o, std::string* error) {
  if (o.url.empty() && o.url_file == nullptr) {
    *error = "a URL is required (stepback get https://host/path)";
    return false;
  }
  if (!o.url.empty() && o.url_file != nullptr) {
    *error = "give the URL or --url-file, not both";
    return false;
  }
  if (o.bearer != nullptr && o.token_file != nullptr) {
    *error = "--oauth2-bearer and --token-file exclude each other";
    return false;
  }
  if (o.system_resolver && o.dns_servers != nullptr) {
    *error =
        "--system-resolver and --dns-servers exclude each other (the system's resolver asks "
        "the servers it is configured with, such as those of /etc/resolv.conf)";
    return false;
  }
  return check_trust_flags(o.trust, error);
}

// The curl habits that go together or not at all (`output_given`: -o was given, even as
// -o -); false with *error.
bool check_curl_options(const GetOptions& o, bool output_given, std::string* error) {
  const auto refuse = [error](const char* why) {
    *error = why;
    return false;
  };
  if (o.remote_name && output_given) return refuse("-O and -o exclude each other");
  if (o.fail && o.fail_with_body) return refuse("-f and --fail-with-body exclude each other");
  if (o.head && o.has_data())
    return refuse("-I is a HEAD request, which has no body: leave -d out");
  if (o.head && !o.method.empty() && o.method != "HEAD") {
    return refuse("-I is a HEAD request: leave -X out");
  }
  if (o.trace && (o.verbose || o.silent)) {
    return refuse("--trace writes JSON events on stderr: leave -v and -s out");
  }
  if (o.operation && (o.fail || o.fail_with_body || o.include || o.head || o.silent)) {
    return refuse(
        "--operation has its own output and exit codes: leave -f, --fail-with-body, -i, -I and "
        "-s out");
  }
  // A download to a file goes to FILE.part with a checkpoint that counts its bytes, so the
  // file holds the body alone; a head in it would break the resume of the next run.
  const bool download =
      !o.head && !o.has_data() && !o.operation && (o.method.empty() || o.method == "GET");
  if (o.include && download && (o.output != nullptr || o.remote_name)) {
    return refuse(
        "-i with -o FILE or -O: a download's file holds the body alone (it is checkpointed and "
        "resumed); leave -o out to get the head on stdout, or use -v to see it on stderr");
  }
  return true;
}

// The request's own flags: the pin, limits, sources, method, headers, output.
void add_get_flags(std::vector<Flag>* flags, GetOptions* out, bool* output_given) {
  GetOptions& o = *out;
  const Flag get_flags[] = {
      value_flag("--pin", "expected sha256/BASE64 of a SubjectPublicKeyInfo",
                 [&o](std::string_view value, std::string* message) {
                   if (o.pin_count == kMaxPins) {
                     *message = "too many --pin (at most " + std::to_string(kMaxPins) + ")";
                     return false;
                   }
                   if (https::parse_public_key_pin(value.data(), &o.pins[o.pin_count]) !=
                       https::Status::kOk) {
                     return false;
                   }
                   ++o.pin_count;
                   return true;
                 }),
      value_flag("--max-time", "expected seconds above 0, such as 60",
                 [&o](std::string_view value, std::string*) {
                   o.max_time = parse_seconds(value);
                   return o.max_time && o.max_time->count() > 0;
                 }),
      value_flag("--range-size", "expected a size above 0, such as 4K or 1M",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> size = parse_rate(value);
                   if (!size || *size == 0) return false;
                   o.range_size = *size;
                   return true;
                 }),
      text_flag("--oauth2-bearer", &o.bearer),
      text_flag("--token-file", &o.token_file),
      text_flag("--url-file", &o.url_file),
      text_flag("--dns-servers", &o.dns_servers),
      switch_flag("--system-resolver", &o.system_resolver),
      value_flag("-X", {},
                 [&o](std::string_view value, std::string* message) {
                   if (value.empty()) {
                     *message = "-X needs a method (such as GET, POST or PUT), not an empty one";
                     return false;
                   }
                   o.method = value;
                   return true;
                 }),
      header_flag(o.headers, kMaxGetHeaders, &o.header_count,
                  [&o](const https::Header& h, std::string_view written, std::string* message) {
                    return special_header(h, written, &o, message);
                  }),
      // -o - is stdout, as curl's.
      value_flag("-o", {},
                 [&o, output_given](std::string_view value, std::string*) {
                   o.output = value == "-" ? nullptr : value.data();
                   *output_given = true;
                   return true;
                 }),
      text_flag("--state", &o.state),
      value_flag("--max-redirs", "expected a number of redirects, 0 to 50",
                 [&o](std::string_view value, std::string*) {
                   unsigned n = 0;
                   if (value.empty() || value.size() > 2 ||
                       value.find_first_not_of("0123456789") != std::string_view::npos) {
                     return false;
                   }
                   for (const char c : value) n = n * 10 + static_cast<unsigned>(c - '0');
                   if (n > 50) return false;
                   o.max_redirects = static_cast<std::uint8_t>(n);
                   return true;
                 }),
      switch_flag("--operation", &o.operation),
      switch_flag("--trace", &o.trace),
  };
  flags->insert(flags->end(), std::begin(get_flags), std::end(get_flags));
}

// A flag that appends a piece of the request body of `kind`.
Flag data_flag(std::string_view name, DataPiece::Kind kind, GetOptions* o) {
  return value_flag(name, {}, [o, kind](std::string_view value, std::string* message) {
    if (o->data_count == kMaxDataPieces) {
      *message = "too many -d pieces (at most " + std::to_string(kMaxDataPieces) + ")";
      return false;
    }
    o->data[o->data_count++] = DataPiece{value, kind};
    return true;
  });
}

// curl's own spellings: its names for stepback's flags, and its habits that do not weaken
// anything (-L and -C - are what stepback does anyway). Its options that would are refused by
// name (curl_option_hint()).
void add_curl_flags(std::vector<Flag>* flags, GetOptions* out) {
  GetOptions& o = *out;
  // Another name for an existing flag.
  const auto alias = [flags](std::string_view name, std::string_view of) {
    for (const Flag& f : *flags) {
      if (f.name != of) continue;
      Flag copy = f;
      copy.name = name;
      flags->push_back(std::move(copy));
      return;
    }
  };
  for (const auto& [name, of] :
       {std::pair{"--output", "-o"}, std::pair{"--request", "-X"}, std::pair{"--header", "-H"},
        std::pair{"-x", "--proxy"}, std::pair{"-m", "--max-time"},
        std::pair{"--retry", "--max-retries"}}) {
    alias(name, of);
  }
  static bool no_op = false;  // -L, -S: what stepback does anyway.
  const Flag curl_flags[] = {
      data_flag("-d", DataPiece::Kind::kAscii, &o),
      data_flag("--data", DataPiece::Kind::kAscii, &o),
      data_flag("--data-ascii", DataPiece::Kind::kAscii, &o),
      data_flag("--data-binary", DataPiece::Kind::kBinary, &o),
      data_flag("--data-raw", DataPiece::Kind::kRaw, &o),
      text_flag("-A", &o.user_agent),
      text_flag("--user-agent", &o.user_agent),
      value_flag("--connect-timeout", "expected seconds above 0, such as 10",
                 [&o](std::string_view value, std::string*) {
                   o.retry.connect_timeout = parse_seconds(value);
                   return o.retry.connect_timeout && o.retry.connect_timeout->count() > 0;
                 }),
      value_flag("--url", {},
                 [&o](std::string_view value, std::string* message) {
                   if (!o.url.empty()) {
                     *message = "unexpected --url '" + std::string(value) + "' (one URL only)";
                     return false;
                   }
                   o.url = value;
                   return true;
                 }),
      switch_flag("-L", &no_op),
      switch_flag("--location", &no_op),
      switch_flag("-S", &no_op),
      switch_flag("--show-error", &no_op),
      value_flag("-C", {},
                 [](std::string_view value, std::string* message) {
                   if (value == "-") return true;
                   *message = "-C " + std::string(value) +
                              ": resume is automatic (with -o FILE across runs too), from where "
                              "the bytes stopped; write -C - or leave it out";
                   return false;
                 }),
      switch_flag("-O", &o.remote_name),
      switch_flag("--remote-name", &o.remote_name),
      switch_flag("-f", &o.fail),
      switch_flag("--fail", &o.fail),
      switch_flag("--fail-with-body", &o.fail_with_body),
      switch_flag("-i", &o.include),
      switch_flag("--include", &o.include),
      switch_flag("-I", &o.head),
      switch_flag("--head", &o.head),
      switch_flag("-s", &o.silent),
      switch_flag("--silent", &o.silent),
      switch_flag("-v", &o.verbose),
      switch_flag("--verbose", &o.verbose),
      switch_flag("-k", &o.insecure),
      switch_flag("--insecure", &o.insecure),
  };
  flags->insert(flags->end(), std::begin(curl_flags), std::end(curl_flags));
  alias("--continue-at", "-C");
}

}  // namespace

std::optional<GetOptions> parse_get_args(int argc, char** argv, std::string* error) {
  GetOptions o;
  o.user_agent = kUserAgent;
  bool output_given = false;
  std::vector<Flag> flags;
  add_trust_flags(&flags, &o.trust);
  add_proxy_flags(&flags, &o.proxy);
  add_get_flags(&flags, &o, &output_given);
  add_retry_flags(&flags, &o.retry);
  add_curl_flags(&flags, &o);
  const auto url = [&o](std::string_view arg, std::string* message) {
    if (!o.url.empty()) {
      *message = "unexpected argument '" + std::string(arg) + "' (one URL only)";
      return false;
    }
    o.url = arg;
    return true;
  };
  // "-fsSL", "-XPOST", "-o-": curl's bundled short options.
  std::deque<std::string> names;
  std::vector<char*> args = split_short_options(argc, argv, flags, &names);
  const Parsed parsed =
      parse_flags(static_cast<int>(args.size()), args.data(), flags, url, error, &curl_option_hint);
  if (parsed == Parsed::kOk &&
      (!check_get_options(o, error) || !check_curl_options(o, output_given, error))) {
    return std::nullopt;
  }
  return parsed_options(parsed, o);
}

}  // namespace stepback::tools

#include "curl_habits.hpp"

#include <algorithm>

namespace stepback::tools {
namespace {

// curl options `stepback get` does not take, by their curl names (space-separated): what to
// write instead (its own spelling first, where it has one), or why there is nothing.
struct Hint {
  const char* names;
  const char* text;
};

constexpr Hint kHints[] = {
    {"--retry-max-time", "stepback spells it --deadline SECONDS"},
    {"--pinnedpubkey", "stepback spells it --pin sha256/BASE64 (one slash, repeatable)"},
    {"-Y", "stepback spells it --speed-limit BYTES"},
    {"-y", "stepback spells it --speed-time SECONDS"},
    {"-T --upload-file",
     "stepback spells a PUT of FILE -X PUT --data-binary @FILE (`stepback upload FILE URL` is "
     "a resumable upload session)"},
    {"-b --cookie", "stepback spells it -H 'Cookie: NAME=VALUE' (no cookie files)"},
    {"-e --referer", "stepback spells it -H 'Referer: URL'"},
    {"-U --proxy-user",
     "stepback takes the credentials in the proxy URL: -x http://USER:PASSWORD@HOST:PORT"},
    {"-u --user",
     "send a token with --oauth2-bearer TOKEN or --token-file FILE, or the field itself with "
     "-H 'Authorization: Basic BASE64'"},
    {"-D --dump-header",
     "-i writes the response head before the body; -v shows both heads on stderr"},
    {"-w --write-out", "--trace writes one JSON object per event on stderr"},
    {"--trace-ascii --trace-time",
     "-v shows the heads on stderr; --trace (a switch here) writes JSON events"},
    {"--no-progress-meter", "-s turns progress off (errors are still said)"},
    {"-# --progress-bar", "the meter shows by itself on a terminal (-s turns it off)"},
    {"--json", "write -d DATA -H 'Content-Type: application/json' -H 'Accept: application/json'"},
    {"--output-dir --create-dirs", "give the whole path: -o DIR/FILE"},
    {"--resolve --connect-to", "--dns-servers IP[:PORT] asks other DNS servers"},
    {"--retry-delay",
     "waits grow exponentially with jitter: --max-backoff SECONDS caps one, --jitter picks the "
     "strategy"},
    {"--retry-all-errors --retry-connrefused",
     "stepback retries transient failures by its own rules (a refused connect included); "
     "--idempotency yes lets it re-send a request that is not idempotent"},
    {"--compressed",
     "stepback asks for the identity encoding, so that resumed bytes and digests match: leave "
     "it out"},
    {"-r --range",
     "stepback fetches whole objects and resumes them itself; --range-size BYTES fetches one in "
     "pieces"},
    {"-F --form",
     "multipart forms are not built: send a body with --data-binary @FILE and "
     "-H 'Content-Type: ...'"},
    {"-G --get", "put the query in the URL itself"},
    {"--data-urlencode", "encode the value yourself and pass it with -d"},
    {"-c --cookie-jar", "cookies are not kept (-i or -v shows the Set-Cookie fields)"},
    {"--http2 --http2-prior-knowledge --http3 --http3-only --http1.0 --http1.1",
     "stepback speaks HTTP/1.1, always: leave it out"},
    {"-4 --ipv4 -6 --ipv6",
     "names resolve to AAAA and A together, and the addresses are tried in turn"},
    {"-J --remote-header-name",
     "a file name the server chooses is not taken: name the file with -o FILE or -O"},
    {"-E --cert --key --cert-type --key-type", "client certificates are not supported"},
    {"--tlsv1 --tlsv1.2 --tlsv1.3 --tls-max --ssl-reqd",
     "TLS 1.2 and 1.3 are offered, always (for https://)"},
    {"--cert-status --ssl-no-revoke", "revocation is not checked"},
    {"-n --netrc --netrc-file",
     "there is no netrc: --oauth2-bearer TOKEN, --token-file FILE or -H 'Authorization: ...'"},
    {"-Z --parallel", "one URL a run: start one stepback per URL"},
};

// Whether `name` is one of the space-separated `names`.
bool listed(const char* names, std::string_view name) {
  std::string_view rest = names;
  while (!rest.empty()) {
    const std::size_t space = rest.find(' ');
    if (rest.substr(0, space) == name) return true;
    if (space == std::string_view::npos) break;
    rest.remove_prefix(space + 1);
  }
  return false;
}

}  // namespace

std::string curl_option_hint(std::string_view name) {
  for (const Hint& h : kHints) {
    if (!listed(h.names, name)) continue;
    return "unknown option '" + std::string(name) + "': " + h.text;
  }
  return {};
}

std::optional<std::string> remote_file_name(std::string_view target, std::string* error) {
  const std::string_view path = target.substr(0, target.find('?'));
  const std::string_view name = path.substr(path.rfind('/') + 1);  // npos + 1 == 0.
  const auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
  if (name.empty()) {
    *error = "-O: the URL's path ends in '/': it names no file (name one with -o FILE)";
    return std::nullopt;
  }
  if (name == "." || name == ".." || name.find('\\') != std::string_view::npos ||
      std::any_of(name.begin(), name.end(), control)) {
    *error = "-O: the URL's path ends in '" + std::string(name) +
             "', which is not a plain file name (name the file with -o FILE)";
    return std::nullopt;
  }
  return std::string(name);
}

void strip_line_ends(std::vector<std::uint8_t>* bytes) {
  bytes->erase(std::remove_if(bytes->begin(), bytes->end(),
                              [](std::uint8_t b) { return b == '\r' || b == '\n'; }),
               bytes->end());
}

}  // namespace stepback::tools

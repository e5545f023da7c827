#include "curl_habits.hpp"

#include <algorithm>

namespace stepback::tools {
namespace {

// curl options `stepback get` does not take, by their curl names (space-separated): what to
// write instead (its own spelling first, where it has one), or why there is nothing.
// `refused`: an option stepback turns down on purpose, not one it merely lacks.
struct Hint {
  const char* names;
  bool refused;
  const char* text;
};

constexpr Hint kHints[] = {
    {"-k --insecure", true,
     "stepback always verifies the server's certificate and host name, and a library for "
     "fleets has no switch to skip that; trust the server's CA with --cacert FILE or --capath "
     "DIR instead (a self-signed certificate can be its own --cacert FILE), and add "
     "--pin sha256/BASE64 to accept its key alone"},
    {"--retry-max-time", false, "stepback spells it --deadline SECONDS"},
    {"--pinnedpubkey", false, "stepback spells it --pin sha256/BASE64 (one slash, repeatable)"},
    {"-Y", false, "stepback spells it --speed-limit BYTES"},
    {"-y", false, "stepback spells it --speed-time SECONDS"},
    {"-T --upload-file", false,
     "stepback spells a PUT of FILE -X PUT --data-binary @FILE (`stepback upload FILE URL` is "
     "a resumable upload session)"},
    {"-b --cookie", false, "stepback spells it -H 'Cookie: NAME=VALUE' (no cookie files)"},
    {"-e --referer", false, "stepback spells it -H 'Referer: URL'"},
    {"-U --proxy-user", false,
     "stepback takes the credentials in the proxy URL: -x http://USER:PASSWORD@HOST:PORT"},
    {"-u --user", false,
     "send a token with --oauth2-bearer TOKEN or --token-file FILE, or the field itself with "
     "-H 'Authorization: Basic BASE64'"},
    {"-D --dump-header", false,
     "-i writes the response head before the body; -v shows both heads on stderr"},
    {"-w --write-out", false, "--trace writes one JSON object per event on stderr"},
    {"--trace-ascii --trace-time", false,
     "-v shows the heads on stderr; --trace (a switch here) writes JSON events"},
    {"--no-progress-meter", false, "-s turns progress off (errors are still said)"},
    {"-# --progress-bar", false, "the meter shows by itself on a terminal (-s turns it off)"},
    {"--json", false,
     "write -d DATA -H 'Content-Type: application/json' -H 'Accept: application/json'"},
    {"--output-dir --create-dirs", false, "give the whole path: -o DIR/FILE"},
    {"--resolve --connect-to", false, "--dns-servers IP[:PORT] asks other DNS servers"},
    {"--retry-delay", false,
     "waits grow exponentially with jitter: --max-backoff SECONDS caps one, --jitter picks the "
     "strategy"},
    {"--retry-all-errors --retry-connrefused", false,
     "stepback retries transient failures by its own rules (a refused connect included); "
     "--idempotency yes lets it re-send a request that is not idempotent"},
    {"--compressed", false,
     "stepback asks for the identity encoding, so that resumed bytes and digests match: leave "
     "it out"},
    {"-r --range", false,
     "stepback fetches whole objects and resumes them itself; --range-size BYTES fetches one in "
     "pieces"},
    {"-F --form", false,
     "multipart forms are not built: send a body with --data-binary @FILE and "
     "-H 'Content-Type: ...'"},
    {"-G --get", false, "put the query in the URL itself"},
    {"--data-urlencode", false, "encode the value yourself and pass it with -d"},
    {"-c --cookie-jar", false, "cookies are not kept (-i or -v shows the Set-Cookie fields)"},
    {"--http2 --http2-prior-knowledge --http3 --http3-only --http1.0 --http1.1", false,
     "stepback speaks HTTP/1.1, always: leave it out"},
    {"-4 --ipv4 -6 --ipv6", false,
     "names resolve to AAAA and A together, and the addresses are tried in turn"},
    {"-J --remote-header-name", false,
     "a file name the server chooses is not taken: name the file with -o FILE or -O"},
    {"-E --cert --key --cert-type --key-type", false, "client certificates are not supported"},
    {"--tlsv1 --tlsv1.2 --tlsv1.3 --tls-max --ssl-reqd", false,
     "TLS 1.2 and 1.3 are offered, always (for https://)"},
    {"--cert-status --ssl-no-revoke", false, "revocation is not checked"},
    {"-n --netrc --netrc-file", false,
     "there is no netrc: --oauth2-bearer TOKEN, --token-file FILE or -H 'Authorization: ...'"},
    {"-Z --parallel", false, "one URL a run: start one stepback per URL"},
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
    const std::string lead = h.refused ? "'" + std::string(name) + "' (curl's) is refused: "
                                       : "unknown option '" + std::string(name) + "': ";
    return lead + h.text;
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

// What `stepback get` makes of a curl user's habits where they are not its own flags: the
// curl spellings it does not take, each with what to write instead (or why there is nothing),
// what it says of -k, the file name -O takes from a URL, and the line ends -d drops from a file.
#ifndef STEPBACK_TOOLS_CURL_HABITS_HPP_
#define STEPBACK_TOOLS_CURL_HABITS_HPP_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepback::tools {

// What -k/--insecure gets: taken, so that a curl habit does not stop a script, but it turns
// nothing off.
inline constexpr const char* kInsecureWarning =
    "-k/--insecure is ignored: stepback always verifies the server's certificate and host "
    "name; trust a private or self-signed server with --cacert FILE or --capath DIR (a "
    "self-signed certificate can be its own --cacert FILE), and add --pin sha256/BASE64 to "
    "accept its key alone";

// The one-line message for a curl option `name` ("--retry-max-time", "-k") that stepback
// does not take: its stepback spelling when there is one, else why not and what to do; ""
// for a name curl does not have either.
std::string curl_option_hint(std::string_view name);

// The file name -O (curl's --remote-name) takes from a request target ("/a/b.tar?x=1"): the
// last segment of its path, without the query and without URL decoding, as curl's. nullopt
// with *error for a name that is not a plain file name here: empty (a target ending in "/"),
// "." or "..", or holding a backslash or a control byte.
std::optional<std::string> remote_file_name(std::string_view target, std::string* error);

// Drops every CR and LF from `bytes`, as curl's -d does with the contents of a @FILE.
void strip_line_ends(std::vector<std::uint8_t>* bytes);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_CURL_HABITS_HPP_

#include "get_sources.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "curl_habits.hpp"
#include "request_flags.hpp"

namespace stepback::tools {

namespace {

// Appends FILE's bytes ("-": stdin) to *out; false with *error.
bool read_file(const std::string& path, std::vector<std::uint8_t>* out, std::string* error) {
  // stdio, not iostreams: an ifstream pulls the whole locale machinery into a static build.
  std::FILE* in = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (in == nullptr) {
    *error = "cannot read --data file '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::uint8_t chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, in)) > 0)
    out->insert(out->end(), chunk, chunk + n);
  const bool failed = std::ferror(in) != 0;
  if (in != stdin) std::fclose(in);
  if (failed) {
    *error = "error reading --data file '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace

bool load_data(const DataPiece* pieces, std::size_t count, std::vector<std::uint8_t>* storage,
               https::ConstBytes* out, std::string* error) {
  *out = https::ConstBytes{};
  if (count == 1 && (pieces[0].kind == DataPiece::Kind::kRaw || pieces[0].text.empty() ||
                     pieces[0].text[0] != '@')) {
    // A text alone: the body views argv, copied nowhere.
    const std::string_view text = pieces[0].text;
    *out = https::ConstBytes{reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
    return true;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const DataPiece& piece = pieces[i];
    if (i > 0) storage->push_back('&');
    if (piece.kind == DataPiece::Kind::kRaw || piece.text.empty() || piece.text[0] != '@') {
      storage->insert(storage->end(), piece.text.begin(), piece.text.end());
      continue;
    }
    std::vector<std::uint8_t> file;
    if (!read_file(std::string(piece.text.substr(1)), &file, error)) return false;
    if (piece.kind == DataPiece::Kind::kAscii) strip_line_ends(&file);
    storage->insert(storage->end(), file.begin(), file.end());
  }
  *out = https::ConstBytes{storage->data(), storage->size()};
  return true;
}

std::size_t token_authorization(void* context, bool /*refresh*/, https::MutableBytes out) {
  const auto* source = static_cast<const TokenSource*>(context);
  static char file_token[8 * 1024];
  std::string_view token;
  if (source->bearer != nullptr) {
    token = source->bearer;
  } else {
    std::FILE* in = std::fopen(source->file, "rb");
    if (in == nullptr) return 0;
    const std::size_t n = std::fread(file_token, 1, sizeof file_token, in);
    std::fclose(in);
    token = trim(std::string_view(file_token, n));
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.remove_suffix(1);
    token = trim(token);
  }
  static constexpr std::string_view kScheme = "Bearer ";
  const std::size_t size = kScheme.size() + token.size();
  if (token.empty() || size > out.size) return token.empty() ? 0 : size;
  std::memcpy(out.data, kScheme.data(), kScheme.size());
  std::memcpy(out.data + kScheme.size(), token.data(), token.size());
  return size;
}

bool read_url_file(UrlFile* file) {
  static char text[8 * 1024 + 1];
  std::FILE* in = std::fopen(file->path, "rb");
  if (in == nullptr) return false;
  const std::size_t n = std::fread(text, 1, sizeof text, in);
  std::fclose(in);
  std::string_view url(text, n < sizeof file->current ? n : 0);
  const std::size_t eol = url.find_first_of("\r\n");
  if (eol != std::string_view::npos) url = url.substr(0, eol);
  url = trim(url);
  if (url.empty()) return false;
  std::memcpy(file->current, url.data(), url.size());
  file->size = url.size();
  return true;
}

std::size_t fresh_url_from_file(void* context, https::MutableBytes out) {
  auto* file = static_cast<UrlFile*>(context);
  const std::string before(file->current, file->size);
  if (!read_url_file(file)) return 0;
  if (std::string_view(file->current, file->size) == before || file->size > out.size) return 0;
  std::memcpy(out.data, file->current, file->size);
  return file->size;
}

}  // namespace stepback::tools

#include "get_sources.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "request_flags.hpp"

namespace stepback::tools {

bool load_body(std::string_view data, std::vector<std::uint8_t>* storage, https::ConstBytes* out,
               std::string* error) {
  if (data.empty() || data[0] != '@') {
    *out = https::ConstBytes{reinterpret_cast<const std::uint8_t*>(data.data()), data.size()};
    return true;
  }
  // stdio, not iostreams: an ifstream pulls the whole locale machinery into a static build.
  const std::string path(data.substr(1));
  std::FILE* in = std::fopen(path.c_str(), "rb");
  if (in == nullptr) {
    *error = "cannot read --data file '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::uint8_t chunk[4096];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, in)) > 0)
    storage->insert(storage->end(), chunk, chunk + n);
  const bool failed = std::ferror(in) != 0;
  std::fclose(in);
  if (failed) {
    *error = "error reading --data file '" + path + "'";
    return false;
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

#include "stepback/transfer/detail/metadata_scan.hpp"

#include <cstddef>
#include <cstring>
#include <string_view>

namespace stepback::transfer::detail {

void MetadataDigestScan::feed(https::ConstBytes data, https::IntegrityCheck* digests) {
  for (std::size_t i = 0; i < data.size; ++i) {
    const char c = static_cast<char>(data.data[i]);
    if (in_string) {
      if (escape) {
        escape = false;
        length = sizeof text + 1;  // An escaped key or value is none of ours.
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
        const std::string_view value(text, length <= sizeof text ? length : 0);
        if (is_key) {
          key = value == "crc32c" ? 1 : value == "md5Hash" ? 2 : 0;
          key_next = false;
        } else if (key != 0 && !value.empty()) {
          char item[48];
          const std::string_view name = key == 1 ? "crc32c=" : "md5=";
          std::memcpy(item, name.data(), name.size());
          std::memcpy(item + name.size(), value.data(), value.size());
          (void)digests->add_x_goog_hash(std::string_view(item, name.size() + value.size()));
          key = 0;
        }
      } else if (length < sizeof text) {
        text[length++] = c;
      } else {
        length = sizeof text + 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        escape = false;
        length = 0;
        is_key = depth == 1 && key_next;
        if (!is_key && !(depth == 1 && value_next)) length = sizeof text + 1;
        value_next = false;
        break;
      case '{':
      case '[':
        if (depth < 255) ++depth;
        key_next = depth == 1 && c == '{';
        value_next = false;
        break;
      case '}':
      case ']':
        if (depth > 0) --depth;
        break;
      case ':':
        value_next = depth == 1;
        break;
      case ',':
        if (depth == 1) {
          key_next = true;
          value_next = false;
          key = 0;
        }
        break;
      default:
        break;
    }
  }
}

}  // namespace stepback::transfer::detail

// What `stepback upload` is asked for: its options, read from argv, and its --help.
#ifndef STEPBACK_TOOLS_UPLOAD_ARGS_HPP_
#define STEPBACK_TOOLS_UPLOAD_ARGS_HPP_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "request_flags.hpp"
#include "stepback/https/client.hpp"
#include "stepback/transfer/upload.hpp"

namespace stepback::tools {

constexpr std::size_t kMaxUploadHeaders = transfer::kMaxUploadHeaders;
constexpr std::uint64_t kDefaultChunk = std::uint64_t{8} * 1024 * 1024;
// Longest chunk accepted: 1 GiB, far above anything a phone or a PC would buffer in flight.
constexpr std::uint64_t kMaxChunk = 1024ULL * 1024 * 1024;

// What `stepback upload` was asked for. The views point into argv, which outlives the upload.
struct UploadArgs {
  const char* file = nullptr;
  std::string_view url;
  std::string_view session;
  const char* state = nullptr;  // --state FILE.
  std::uint64_t chunk_size = kDefaultChunk;
  std::string_view content_type = "application/octet-stream";
  TrustFlags trust;  // --cacert, --capath
  ProxyFlags proxy;  // --proxy, --noproxy
  RetryFlags retry;  // --profile, --max-retries, --max-backoff, --deadline, --jitter, ...
  https::Header headers[kMaxUploadHeaders];
  std::size_t header_count = 0;
  bool trace = false;
  bool help = false;
};

// Parses a byte count: digits with an optional K, M or G suffix (KiB, MiB, GiB also read), at
// most kMaxChunk.
std::optional<std::uint64_t> parse_bytes(std::string_view text);

// Reads argv[1..argc) (argv[0] == "upload"); nullopt with *error when it is not an upload.
std::optional<UploadArgs> parse_upload_args(int argc, char** argv, std::string* error);

// Writes the --help of `stepback upload`.
void print_upload_usage(std::FILE* out);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_UPLOAD_ARGS_HPP_

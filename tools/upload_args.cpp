#include "upload_args.hpp"

#include <utility>
#include <vector>

#include "args.hpp"
#include "stepback/profiles/active.hpp"

namespace stepback::tools {

std::optional<std::uint64_t> parse_bytes(std::string_view text) {
  std::uint64_t unit = 1;
  for (const auto& [suffix, size] : {std::pair<std::string_view, std::uint64_t>{"KiB", 1ULL << 10},
                                     {"MiB", 1ULL << 20},
                                     {"GiB", 1ULL << 30},
                                     {"K", 1ULL << 10},
                                     {"M", 1ULL << 20},
                                     {"G", 1ULL << 30}}) {
    if (text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
      unit = size;
      text.remove_suffix(suffix.size());
      break;
    }
  }
  const std::optional<std::uint64_t> n = parse_u64(text);
  if (!n || *n > kMaxChunk / unit) return std::nullopt;
  return *n * unit;
}

std::optional<UploadArgs> parse_upload_args(int argc, char** argv, std::string* error) {
  UploadArgs o;
  std::vector<Flag> flags = {
      value_flag("--chunk-size",
                 "expected a positive multiple of 256 KiB, such as 262144, 256K or 8M, at most 1G",
                 [&o](std::string_view value, std::string*) {
                   const std::optional<std::uint64_t> n = parse_bytes(value);
                   if (!n || *n == 0 || *n % transfer::kChunkGranularity != 0) return false;
                   o.chunk_size = *n;
                   return true;
                 }),
      text_flag("--content-type", &o.content_type),
      text_flag("--session", &o.session),
      text_flag("--state", &o.state),
      header_flag(o.headers, kMaxUploadHeaders, &o.header_count),
  };
  add_trust_flags(&flags, &o.trust);
  add_proxy_flags(&flags, &o.proxy);
  add_retry_flags(&flags, &o.retry);
  flags.push_back(switch_flag("--trace", &o.trace));
  int positional = 0;
  const auto file_and_url = [&o, &positional](std::string_view arg, std::string* message) {
    if (positional == 0) {
      o.file = arg.data();
    } else if (positional == 1) {
      o.url = arg;
    } else {
      *message = "unexpected argument '" + std::string(arg) + "' (one FILE and one URL)";
      return false;
    }
    ++positional;
    return true;
  };
  const Parsed parsed = parse_flags(argc, argv, flags, file_and_url, error);
  if (parsed == Parsed::kOk) {
    if (o.file == nullptr) {
      *error = "a FILE and a URL are required (stepback upload FILE URL)";
      return std::nullopt;
    }
    if (o.url.empty() && o.session.empty() && o.state == nullptr) {
      *error = "a URL (the session initiation URL), --session URI or --state FILE is required";
      return std::nullopt;
    }
    if (!check_trust_flags(o.trust, error)) return std::nullopt;
  }
  return parsed_options(parsed, o);
}

void print_upload_usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: stepback upload FILE URL [--chunk-size BYTES] [--content-type TYPE]\n"
      "                       [--state FILE] [--session URI] [-H 'Name: value']...\n"
      "                       [--cacert FILE | --capath DIR] [--tls-max-fragment BYTES]\n"
      "                       [--profile desktop|mobile] [--max-retries N] [--max-backoff S]\n"
      "                       [--deadline S] [--idempotency auto|strict|yes|no]\n"
      "                       [--speed-limit BYTES] [--speed-time S] [--limit-rate RATE]\n"
      "                       [--no-metered] [--metered-up-to SIZE] [--no-roaming]\n"
      "                       [--network-type TYPE] [--offline-limit S]\n"
      "                       [--jitter seed|full|equal|decorrelated|none]\n"
      "                       [--proxy URL] [--noproxy LIST] [--trace]\n"
      "\n"
      "Uploads FILE with Google's resumable upload protocol (Cloud Storage JSON API and the\n"
      "other Google APIs that use it). URL is the session initiation URL, e.g.\n"
      "https://storage.googleapis.com/upload/storage/v1/b/BUCKET/o?uploadType=resumable&name=N\n"
      "A POST opens the session; the file goes in chunks (PUT with Content-Range), read from\n"
      "disk as they are sent. After a failure (lost connection, stall, 408, 429, 5xx) the\n"
      "upload waits per the device profile, asks the server how much it holds (an empty PUT\n"
      "with Content-Range: bytes */SIZE) and goes on from there; bytes the server holds are\n"
      "never sent again. Progress (the server holding more) starts the backoff, the retry\n"
      "count and the deadline over. The final response body (the object's metadata) goes to\n"
      "stdout; progress goes to stderr, one line per exchange.\n"
      "\n"
      "  --chunk-size BYTES   bytes per PUT: a multiple of 256 KiB (e.g. 262144, 256K, 8M;\n"
      "                       default 8M); a failure costs at most one chunk sent again\n"
      "  --content-type TYPE  the object's type, sent as X-Upload-Content-Type\n"
      "                       (default application/octet-stream)\n"
      "  --state FILE         keep the upload's state in FILE (written atomically after the\n"
      "                       session opens, after each committed chunk and before each\n"
      "                       wait; removed on success): the same command run again after a\n"
      "                       crash or kill goes on with the same session, from what the\n"
      "                       server holds, after what was left of the wait. With FILE\n"
      "                       present, URL may be left out\n"
      "  --session URI        continue this session (printed by an earlier run) instead of\n"
      "                       opening one: the server is asked what it holds first\n"
      "  -H 'Name: value'     a header sent with every request, e.g. Authorization\n"
      "                       (repeatable, at most %zu)\n"
      "%s"
      "  --profile NAME       desktop or mobile: retry policy, timeouts and budget\n"
      "                       (default: %s, chosen at build time)\n"
      "  --max-retries N      retries without progress (0..1000)\n"
      "  --max-backoff S      the cap on one backoff wait, in seconds\n"
      "  --deadline S         no new attempt or wait past S seconds without progress (0: none)\n"
      "%s"
      "%s"
      "%s"
      "  --idempotency RULE   whether the session POST is sent again after it may have\n"
      "                       reached the server: auto (no: POST), strict, yes, no. A repeated\n"
      "                       POST at worst leaves an unused session. Chunks always are.\n"
      "  --jitter NAME        the backoff strategy; seed is the documented formula itself,\n"
      "                       min(2^n s + U[0, 1000] ms, cap) (default: the profile's)\n"
      "%s"
      "  --trace              one JSON object per event on stderr instead of progress lines\n"
      "                       (session, chunk, query, response, error, committed, wait,\n"
      "                       expired, done; each with t_ms)\n"
      "  --help               print this help\n"
      "\n"
      "exit codes:\n"
      "  0  success: the server holds the whole file (200 or 201)\n"
      "  1  internal error: the TLS library could not be set up\n"
      "  2  usage error: bad option, URL, header, chunk size, or CA file or directory\n"
      "  3  gave up retrying: retries exhausted, deadline, retry budget, or the server asked\n"
      "     for a longer delay than the profile allows (the session stays open: continue it\n"
      "     with --session)\n"
      "  4  an HTTP error that is not retried (e.g. 403), the session expired (404 or 410 on\n"
      "     the session URI: the whole file must be sent again), or a retryable error on a\n"
      "     session POST that is not idempotent\n"
      "  5  TLS verification failed (certificate chain, validity or host name)\n"
      "  6  another failure that is not retried: a malformed response or one that breaks the\n"
      "     protocol (no session URI, a bad Range), or a lost session POST\n"
      "  7  local I/O error: FILE cannot be read, the metadata cannot be written, or the\n"
      "     --state file is unusable (cut, damaged, not a state file, written by a newer\n"
      "     stepback, or another upload's); it is left as it is\n"
      "  8  the metadata had to start over and stdout cannot; nothing was spliced\n"
      "  15 the proxy asked for credentials (407): none were given, or it refused them\n"
      "  16 no network the upload may use came within --offline-limit\n"
      "  17 --defer-after: the upload was paused (with --state its state saved) to run again\n"
      "     later, as the last line says\n"
      "  130 Ctrl-C or SIGTERM stopped the upload; the session stays open and, with --state,\n"
      "      its state is saved: run the same command again to go on\n",
      kMaxUploadHeaders, kTrustFlagsHelp, profiles::active.name, kSpeedFlagsHelp, kRateFlagHelp,
      kNetworkFlagsHelp, kProxyFlagsHelp);
}

}  // namespace stepback::tools

// Google's resumable upload protocol as pure functions (private to Upload; a header of its own
// so that tests/transfer/resumable_protocol_test.cpp can reach it): the fields of the session
// POST and of each PUT, the Content-Range text, the session URI from Location, and what an
// answer means for the session. Upload (upload.cpp) is the machine that runs them.
#ifndef STEPBACK_TRANSFER_SRC_RESUMABLE_PROTOCOL_HPP_
#define STEPBACK_TRANSFER_SRC_RESUMABLE_PROTOCOL_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "held_range.hpp"
#include "stepback/core/attempt.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/types.hpp"
#include "stepback/https/http/url.hpp"

namespace stepback::transfer::detail {

// Writes `v` in decimal at `out` (room for 20 digits) and returns the end.
char* write_u64(char* out, std::uint64_t v);
// Copies `s` to `out` and returns the end.
char* write_text(char* out, std::string_view s);

// The session POST's own fields, appended at `out` (room for 3): X-Upload-Content-Length
// (`upload_length`, when the size is final), X-Upload-Content-Type (unless empty) and the
// metadata's Content-Type (when there is metadata). Returns how many were written.
std::size_t session_start_fields(bool size_final, std::string_view upload_length,
                                 std::string_view content_type, bool has_metadata,
                                 https::Header* out);

// The PUT that comes next on a known session.
struct PutPlan {
  enum class Kind : std::uint8_t {
    kStarved,  // Less than a whole chunk of a body still being produced is ready: none yet.
    kQuery,    // An empty PUT, "bytes */N": what does the server hold (and, all sent, finish)?
    kChunk,    // Bytes [begin, end).
  };
  Kind kind = Kind::kStarved;
  bool last = false;  // It completes the body: it carries the body's digests.
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// Plans the next PUT of a body of `size` bytes (all of it when `size_final`, else what is ready)
// of which the server holds `committed`, in chunks of `chunk_size`; `need_query`: the server is
// to be asked what it holds first.
PutPlan plan_put(std::uint64_t size, bool size_final, std::uint64_t committed,
                 std::uint64_t chunk_size, bool need_query);

// Writes the Content-Range value of `plan` (a query or a chunk) at `out` (room for 64):
// "bytes */N", "bytes a-b/N", or with "*" for N when the size is not final. Returns its length.
std::size_t write_content_range(const PutPlan& plan, std::uint64_t size, bool size_final,
                                char* out);

// A PUT's own fields at `out` (room for 2): x-goog-hash (unless `goog_hash` is empty), then
// Content-Range. Returns how many were written.
std::size_t put_fields(std::string_view content_range, std::string_view goog_hash,
                       https::Header* out);

// Writes the session URI of `location` (the session POST's Location, or a known one) as text
// at `out` and parses it into *url (views into `out`): a path ("/...") goes on the origin of
// `initiation`. Returns its length; 0 when it does not fit or is not a usable URL.
std::size_t session_uri(std::string_view location, const https::Url& initiation,
                        https::MutableBytes out, https::Url* url);

// What the Client said of one exchange of the session.
struct Answer {
  Outcome outcome = Outcome::kSuccess;
  std::uint16_t status = 0;
  https::Status error = https::Status::kOk;
  const char* message = "";
  std::optional<std::string_view> location;  // The session POST's Location.
  std::optional<std::string_view> range;     // A 308's Range.
};

// Where the body stood when a PUT's answer came.
struct Position {
  std::uint64_t size = 0;  // The body's bytes (all, or what is ready).
  bool size_final = true;
  std::uint64_t committed = 0;  // What the server held before.
  bool chunk = false;           // A chunk (not a query) was sent: bytes up to chunk_end.
  std::uint64_t chunk_end = 0;
};

// What an answer means for the session.
struct Verdict {
  enum class Kind : std::uint8_t {
    kOpened,    // The session POST gave a Location: the session URI.
    kFinished,  // 2xx to a PUT: the server stored the object, all of the body.
    kProgress,  // 308: it holds `held`, more than before; the retry loop starts over.
    kGoOn,      // 308 to a query, more to send: go on from `held` within the same attempt.
    kStalled,   // 308 without progress after a chunk, or all held and no final answer.
    kGone,      // 404/410 on the session URI: the session expired.
    kRetry,     // A retryable failure: the retry loop decides.
    kFail,      // The upload ends: outcome, error, message.
  };
  Kind kind = Kind::kFail;
  std::uint64_t held = 0;               // kProgress, kGoOn, kStalled.
  std::string_view location;            // kOpened.
  Outcome outcome = Outcome::kSuccess;  // kFail.
  https::Status error = https::Status::kOk;
  const char* message = "";
};

// The answer to the session POST.
Verdict classify_session_start(const Answer& answer);
// The answer to a PUT (chunk or query) on the session URI.
Verdict classify_put(const Answer& answer, const Position& at);

}  // namespace stepback::transfer::detail

#endif  // STEPBACK_TRANSFER_SRC_RESUMABLE_PROTOCOL_HPP_

// The resumable upload protocol's pure functions (transfer/src/resumable_protocol.hpp) over
// tables of input and expected output: the fields of each request, the Content-Range text,
// the session URI from Location, the 308's Range, and what every answer means for the
// session, hostile answers included (a Range beyond what was sent, a malformed one, no
// Location).
#include "resumable_protocol.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepback::transfer::detail {
namespace {

using https::Status;
using Kind = Verdict::Kind;

constexpr std::uint64_t kChunk = std::uint64_t{256} * 1024;

std::string fields_text(const https::Header* h, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += std::string(h[i].name) + ": " + std::string(h[i].value) + "\n";
  }
  return out;
}

TEST(ResumableProtocolTest, SessionStartFields) {
  struct Row {
    bool size_final;
    std::string_view upload_length;
    std::string_view content_type;
    bool has_metadata;
    const char* expected;
  };
  const Row rows[] = {
      {true, "42", "image/png", true,
       "X-Upload-Content-Length: 42\nX-Upload-Content-Type: image/png\n"
       "Content-Type: application/json; charset=UTF-8\n"},
      {true, "0", "", false, "X-Upload-Content-Length: 0\n"},
      // A body still being produced declares no length.
      {false, "42", "", false, ""},
      {false, "42", "text/plain", false, "X-Upload-Content-Type: text/plain\n"},
      {false, "0", "", true, "Content-Type: application/json; charset=UTF-8\n"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.expected);
    https::Header out[3];
    const std::size_t n = session_start_fields(row.size_final, row.upload_length, row.content_type,
                                               row.has_metadata, out);
    EXPECT_EQ(fields_text(out, n), row.expected);
  }
}

TEST(ResumableProtocolTest, PlanPutAndContentRange) {
  struct Row {
    const char* name;
    std::uint64_t size;
    bool size_final;
    std::uint64_t committed;
    std::uint64_t chunk_size;
    bool need_query;
    PutPlan::Kind kind;
    bool last;
    std::uint64_t begin;
    std::uint64_t end;
    const char* content_range;  // "" for kStarved.
  };
  using P = PutPlan::Kind;
  const Row rows[] = {
      {"first of four chunks", 4 * kChunk, true, 0, kChunk, false, P::kChunk, false, 0, kChunk,
       "bytes 0-262143/1048576"},
      {"a middle chunk", 4 * kChunk, true, kChunk, kChunk, false, P::kChunk, false, kChunk,
       2 * kChunk, "bytes 262144-524287/1048576"},
      {"the last whole chunk", 2 * kChunk, true, kChunk, kChunk, false, P::kChunk, true, kChunk,
       2 * kChunk, "bytes 262144-524287/524288"},
      {"a short last chunk", kChunk + 10, true, kChunk, kChunk, false, P::kChunk, true, kChunk,
       kChunk + 10, "bytes 262144-262153/262154"},
      {"one byte", 1, true, 0, kChunk, false, P::kChunk, true, 0, 1, "bytes 0-0/1"},
      {"an empty body finishes with a query", 0, true, 0, kChunk, false, P::kQuery, true, 0, 0,
       "bytes */0"},
      {"all held: the finishing query", 3 * kChunk, true, 3 * kChunk, kChunk, false, P::kQuery,
       true, 0, 0, "bytes */786432"},
      {"a query after a failure", 4 * kChunk, true, kChunk, kChunk, true, P::kQuery, false, 0, 0,
       "bytes */1048576"},
      {"a query with everything held", kChunk, true, kChunk, kChunk, true, P::kQuery, false, 0, 0,
       "bytes */262144"},
      {"a growing body: a whole chunk ready", kChunk, false, 0, kChunk, false, P::kChunk, false, 0,
       kChunk, "bytes 0-262143/*"},
      {"a growing body: more than a chunk ready", 3 * kChunk - 1, false, kChunk, kChunk, false,
       P::kChunk, false, kChunk, 2 * kChunk, "bytes 262144-524287/*"},
      {"a growing body: less than a chunk ready", kChunk - 1, false, 0, kChunk, false, P::kStarved,
       false, 0, 0, ""},
      {"a growing body: all ready is held", kChunk, false, kChunk, kChunk, false, P::kStarved,
       false, 0, 0, ""},
      {"a growing body: a query goes even when starved", 10, false, 0, kChunk, true, P::kQuery,
       false, 0, 0, "bytes */*"},
      {"chunks of two granules", 5 * kChunk, true, 2 * kChunk, 2 * kChunk, false, P::kChunk, false,
       2 * kChunk, 4 * kChunk, "bytes 524288-1048575/1310720"},
      {"a huge body's query", UINT64_MAX, true, 0, kChunk, true, P::kQuery, false, 0, 0,
       "bytes */18446744073709551615"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const PutPlan plan =
        plan_put(row.size, row.size_final, row.committed, row.chunk_size, row.need_query);
    EXPECT_EQ(plan.kind, row.kind);
    EXPECT_EQ(plan.last, row.last);
    if (plan.kind == P::kChunk) {
      EXPECT_EQ(plan.begin, row.begin);
      EXPECT_EQ(plan.end, row.end);
    }
    if (plan.kind == P::kStarved) continue;
    char text[64];
    const std::size_t n = write_content_range(plan, row.size, row.size_final, text);
    EXPECT_EQ(std::string(text, n), row.content_range);
  }
}

TEST(ResumableProtocolTest, PutFields) {
  https::Header out[2];
  std::size_t n = put_fields("bytes */10", "", out);
  EXPECT_EQ(fields_text(out, n), "Content-Range: bytes */10\n");
  n = put_fields("bytes 0-9/10", "crc32c=AAAAAA==", out);
  EXPECT_EQ(fields_text(out, n), "x-goog-hash: crc32c=AAAAAA==\nContent-Range: bytes 0-9/10\n");
}

TEST(ResumableProtocolTest, SessionUri) {
  struct Row {
    const char* name;
    std::string_view location;
    std::string_view initiation;
    std::size_t room;
    const char* expected;  // "" when refused.
    const char* host;      // Of the parsed URL when accepted.
  };
  const Row rows[] = {
      {"absolute", "https://storage.googleapis.com/upload/o?upload_id=AB",
       "https://storage.googleapis.com/upload/b?uploadType=resumable", 256,
       "https://storage.googleapis.com/upload/o?upload_id=AB", "storage.googleapis.com"},
      {"absolute, exactly its room", "https://h/u", "https://x/", 11, "https://h/u", "h"},
      {"absolute, a byte over its room", "https://h/u", "https://x/", 10, "", ""},
      {"another origin is taken as given", "http://other.example:81/s", "https://h.example/i", 256,
       "http://other.example:81/s", "other.example"},
      {"a path on the initiation origin", "/upload?upload_id=1", "https://h.example/init", 256,
       "https://h.example/upload?upload_id=1", "h.example"},
      {"a path keeps a port that is not the default", "/s", "https://h.example:8443/i", 256,
       "https://h.example:8443/s", "h.example"},
      {"a path over plain http", "/s", "http://h.example/i", 256, "http://h.example/s",
       "h.example"},
      {"http on 443 names its port", "/s", "http://h.example:443/i", 256, "http://h.example:443/s",
       "h.example"},
      {"a path on an IPv6 literal", "/up", "https://[::1]:9000/i", 256, "https://[::1]:9000/up",
       "::1"},
      {"a protocol-relative Location stays on the origin", "//evil.example/x",
       "https://h.example/i", 256, "https://h.example//evil.example/x", "h.example"},
      // The room a path needs is reckoned with 6 bytes for a port, used or not.
      {"a path that would fit but for the port's room", "/a", "https://h/i", 16, "", ""},
      {"a path with the port's room", "/a", "https://h/i", 17, "https://h/a", "h"},
      {"empty", "", "https://h/i", 256, "", ""},
      {"not a URL", "upload?id=1", "https://h/i", 256, "", ""},
      {"another scheme", "ftp://h/x", "https://h/i", 256, "", ""},
      {"a space in it", "https://h/a b", "https://h/i", 256, "", ""},
      {"userinfo", "https://user@h/x", "https://h/i", 256, "", ""},
      {"no room at all", "https://h/x", "https://h/i", 0, "", ""},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    https::Url initiation;
    ASSERT_EQ(https::parse_url(row.initiation, &initiation), Status::kOk);
    std::vector<std::uint8_t> buffer(row.room + 1, 0xAA);
    https::Url url;
    url.host = "untouched";
    const std::size_t n =
        session_uri(row.location, initiation, https::MutableBytes{buffer.data(), row.room}, &url);
    const std::string text(reinterpret_cast<const char*>(buffer.data()), n);
    EXPECT_EQ(text, row.expected);
    EXPECT_EQ(buffer[row.room], 0xAA) << "wrote past its room";
    EXPECT_EQ(url.host, n > 0 ? std::string_view(row.host) : std::string_view("untouched"));
  }
}

TEST(ResumableProtocolTest, SessionUriOfItsOwnBuffer) {
  // A known session passed back from the buffer that holds it (session_uri() of an earlier
  // upload).
  char buffer[64] = "https://h.example/s?upload_id=7";
  const std::string_view known(buffer, 31);
  https::Url initiation;
  https::Url url;
  const std::size_t n = session_uri(
      known, initiation, https::MutableBytes{reinterpret_cast<std::uint8_t*>(buffer), 64}, &url);
  EXPECT_EQ(std::string_view(buffer, n), "https://h.example/s?upload_id=7");
  EXPECT_EQ(url.target, "/s?upload_id=7");
}

TEST(ResumableProtocolTest, HeldRange) {
  struct Row {
    std::string_view range;
    bool ok;
    std::uint64_t held;
  };
  const Row rows[] = {
      {"bytes=0-0", true, 1},
      {"bytes=0-262143", true, 262144},
      {"bytes=0-9999999999999999999", true, 10000000000000000000ULL},  // 19 digits.
      {"bytes=0-00", true, 1},
      {"bytes=0-18446744073709551614", false, 0},  // 20 digits.
      {"bytes=0-", false, 0},
      {"bytes=1-5", false, 0},
      {"bytes=0-5,7-9", false, 0},
      {"bytes=0-+5", false, 0},
      {"bytes=0--5", false, 0},
      {"bytes=0-5 ", false, 0},
      {" bytes=0-5", false, 0},
      {"Bytes=0-5", false, 0},
      {"bytes 0-5", false, 0},
      {"bytes=0-5/10", false, 0},
      {"", false, 0},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(row.range));
    std::uint64_t held = 12345;
    EXPECT_EQ(parse_held(row.range, &held), row.ok);
    EXPECT_EQ(held, row.ok ? row.held : 12345);
  }
}

struct ClassifyRow {
  const char* name;
  Answer answer;
  Kind kind;
  std::uint64_t held = 0;
  Outcome outcome = Outcome::kSuccess;  // kFail.
  Status error = Status::kOk;           // kFail.
  const char* message = "";             // kFail, kStalled.
};

void expect_verdict(const Verdict& v, const ClassifyRow& row) {
  EXPECT_EQ(v.kind, row.kind);
  EXPECT_EQ(v.held, row.held);
  EXPECT_STREQ(v.message, row.message);
  if (row.kind == Kind::kFail) {
    EXPECT_EQ(v.outcome, row.outcome);
    EXPECT_EQ(v.error, row.error);
  }
}

Answer answer(Outcome outcome, std::uint16_t status, std::optional<std::string_view> range = {},
              std::optional<std::string_view> location = {}) {
  Answer a;
  a.outcome = outcome;
  a.status = status;
  a.range = range;
  a.location = location;
  return a;
}

Answer failed(Outcome outcome, Status error, const char* message) {
  Answer a;
  a.outcome = outcome;
  a.error = error;
  a.message = message;
  return a;
}

constexpr char kNoSession[] =
    "the session POST was answered without a session (redirects are not followed)";
constexpr char kNoLocation[] = "the session POST's answer has no Location (the session URI)";
constexpr char kPostRefused[] = "the session POST was refused with a status that is not retried";
constexpr char kNotResent[] =
    "the session POST failed and may have been processed; it is not re-sent (see "
    "UploadSpec::idempotency)";
constexpr char kClientWords[] = "the Client's own words";

TEST(ResumableProtocolTest, ClassifySessionStart) {
  const ClassifyRow rows[] = {
      {"200 with Location", answer(Outcome::kSuccess, 200, {}, "https://h/s"), Kind::kOpened},
      {"201 with a path", answer(Outcome::kSuccess, 201, {}, "/s"), Kind::kOpened},
      {"an empty Location is handed on (session_uri refuses it)",
       answer(Outcome::kSuccess, 200, {}, ""), Kind::kOpened},
      {"200 without Location", answer(Outcome::kSuccess, 200), Kind::kFail, 0,
       Outcome::kTerminalFailure, Status::kProtocol, kNoLocation},
      {"a redirect is not a session", answer(Outcome::kSuccess, 302, {}, "https://h/s"),
       Kind::kFail, 0, Outcome::kTerminalStatus, Status::kOk, kNoSession},
      {"308 is not a session", answer(Outcome::kSuccess, 308, {}, "https://h/s"), Kind::kFail, 0,
       Outcome::kTerminalStatus, Status::kOk, kNoSession},
      {"a retryable failure", answer(Outcome::kRetriesExhausted, 503), Kind::kRetry},
      {"403", answer(Outcome::kTerminalStatus, 403), Kind::kFail, 0, Outcome::kTerminalStatus,
       Status::kOk, kPostRefused},
      {"404 to the POST is not an expired session", answer(Outcome::kTerminalStatus, 404),
       Kind::kFail, 0, Outcome::kTerminalStatus, Status::kOk, kPostRefused},
      {"not re-sent after a status", failed(Outcome::kNotIdempotent, Status::kOk, kClientWords),
       Kind::kFail, 0, Outcome::kNotIdempotent, Status::kOk, kNotResent},
      {"not re-sent after a failure",
       failed(Outcome::kNotIdempotent, Status::kTimeout, kClientWords), Kind::kFail, 0,
       Outcome::kNotIdempotent, Status::kTimeout, kClientWords},
      {"a terminal failure", failed(Outcome::kTerminalFailure, Status::kTlsVerify, kClientWords),
       Kind::kFail, 0, Outcome::kTerminalFailure, Status::kTlsVerify, kClientWords},
      {"the deadline", failed(Outcome::kDeadline, Status::kTimeout, kClientWords), Kind::kFail, 0,
       Outcome::kDeadline, Status::kTimeout, kClientWords},
      {"offline", failed(Outcome::kOffline, Status::kOk, kClientWords), Kind::kFail, 0,
       Outcome::kOffline, Status::kOk, kClientWords},
      {"cancelled", failed(Outcome::kCancelled, Status::kOk, kClientWords), Kind::kFail, 0,
       Outcome::kCancelled, Status::kOk, kClientWords},
  };
  for (const ClassifyRow& row : rows) {
    SCOPED_TRACE(row.name);
    const Verdict v = classify_session_start(row.answer);
    expect_verdict(v, row);
    if (row.kind == Kind::kOpened) {
      EXPECT_EQ(v.location, *row.answer.location);
    }
  }
}

constexpr char kUndeclared[] = "the server finished an upload whose size was not yet declared";
constexpr char kUnknownStatus[] =
    "the session answered with a status the protocol does not know (not 2xx, 308, 404 or 410)";
constexpr char kMalformed[] = "the 308's Range is not of the form bytes=0-K";
constexpr char kNeverSent[] = "the server claims bytes it was never sent";
constexpr char kKeptNone[] = "the server kept none of the chunk (308 without progress)";
constexpr char kNotFinished[] = "the server holds every byte but did not finish the upload";
constexpr char kPutRefused[] = "the upload was refused with a status that is not retried";

// A 1 MiB body of which the server held `committed` before a chunk ending at `chunk_end`
// (0: a query was sent).
Position at(std::uint64_t committed, std::uint64_t chunk_end, bool size_final = true,
            std::uint64_t size = 4 * kChunk) {
  Position p;
  p.size = size;
  p.size_final = size_final;
  p.committed = committed;
  p.chunk = chunk_end != 0;
  p.chunk_end = chunk_end;
  return p;
}

TEST(ResumableProtocolTest, ClassifyPut) {
  struct Row {
    ClassifyRow verdict;
    Position at;
  };
  const Row rows[] = {
      {{"200 after the last chunk", answer(Outcome::kSuccess, 200), Kind::kFinished},
       at(3 * kChunk, 4 * kChunk)},
      {{"201 to the finishing query", answer(Outcome::kSuccess, 201), Kind::kFinished},
       at(4 * kChunk, 0)},
      {{"2xx to a body whose size is not declared", answer(Outcome::kSuccess, 200), Kind::kFail, 0,
        Outcome::kTerminalFailure, Status::kProtocol, kUndeclared},
       at(0, kChunk, false)},
      {{"308 holding the chunk", answer(Outcome::kSuccess, 308, "bytes=0-262143"), Kind::kProgress,
        kChunk},
       at(0, kChunk)},
      {{"308 holding part of the chunk", answer(Outcome::kSuccess, 308, "bytes=0-300000"),
        Kind::kProgress, 300001},
       at(kChunk, 2 * kChunk)},
      {{"308 without Range after a chunk", answer(Outcome::kSuccess, 308), Kind::kStalled, 0,
        Outcome::kSuccess, Status::kOk, kKeptNone},
       at(0, kChunk)},
      {{"308 holding what it held before a chunk", answer(Outcome::kSuccess, 308, "bytes=0-262143"),
        Kind::kStalled, kChunk, Outcome::kSuccess, Status::kOk, kKeptNone},
       at(kChunk, 2 * kChunk)},
      {{"308 holding less than before a chunk (lost data)",
        answer(Outcome::kSuccess, 308, "bytes=0-99"), Kind::kStalled, 100, Outcome::kSuccess,
        Status::kOk, kKeptNone},
       at(kChunk, 2 * kChunk)},
      {{"308 to a query with nothing held", answer(Outcome::kSuccess, 308), Kind::kGoOn, 0},
       at(0, 0)},
      {{"308 to a query holding more", answer(Outcome::kSuccess, 308, "bytes=0-524287"),
        Kind::kProgress, 2 * kChunk},
       at(kChunk, 0)},
      {{"308 to a query holding the same", answer(Outcome::kSuccess, 308, "bytes=0-262143"),
        Kind::kGoOn, kChunk},
       at(kChunk, 0)},
      {{"308 to a query holding less (lost data)", answer(Outcome::kSuccess, 308, "bytes=0-9"),
        Kind::kGoOn, 10},
       at(kChunk, 0)},
      {{"308 to a query holding every byte", answer(Outcome::kSuccess, 308, "bytes=0-1048575"),
        Kind::kStalled, 4 * kChunk, Outcome::kSuccess, Status::kOk, kNotFinished},
       at(4 * kChunk, 0)},
      {{"308 to a query holding every byte ready of a growing body",
        answer(Outcome::kSuccess, 308, "bytes=0-262143"), Kind::kGoOn, kChunk},
       at(kChunk, 0, false, kChunk)},
      {{"Range beyond the chunk", answer(Outcome::kSuccess, 308, "bytes=0-262144"), Kind::kFail, 0,
        Outcome::kTerminalFailure, Status::kProtocol, kNeverSent},
       at(0, kChunk)},
      {{"Range beyond the body to a query", answer(Outcome::kSuccess, 308, "bytes=0-1048576"),
        Kind::kFail, 0, Outcome::kTerminalFailure, Status::kProtocol, kNeverSent},
       at(0, 0)},
      {{"Range of 10^19 bytes", answer(Outcome::kSuccess, 308, "bytes=0-9999999999999999999"),
        Kind::kFail, 0, Outcome::kTerminalFailure, Status::kProtocol, kNeverSent},
       at(0, 0)},
      {{"Range not from 0", answer(Outcome::kSuccess, 308, "bytes=5-9"), Kind::kFail, 0,
        Outcome::kTerminalFailure, Status::kProtocol, kMalformed},
       at(0, kChunk)},
      {{"Range without an end", answer(Outcome::kSuccess, 308, "bytes=0-"), Kind::kFail, 0,
        Outcome::kTerminalFailure, Status::kProtocol, kMalformed},
       at(0, 0)},
      {{"an empty Range", answer(Outcome::kSuccess, 308, ""), Kind::kFail, 0,
        Outcome::kTerminalFailure, Status::kProtocol, kMalformed},
       at(0, 0)},
      {{"Range of 20 digits", answer(Outcome::kSuccess, 308, "bytes=0-18446744073709551615"),
        Kind::kFail, 0, Outcome::kTerminalFailure, Status::kProtocol, kMalformed},
       at(0, 0)},
      {{"a redirect", answer(Outcome::kSuccess, 302), Kind::kFail, 0, Outcome::kTerminalFailure,
        Status::kProtocol, kUnknownStatus},
       at(0, kChunk)},
      {{"304", answer(Outcome::kSuccess, 304), Kind::kFail, 0, Outcome::kTerminalFailure,
        Status::kProtocol, kUnknownStatus},
       at(0, 0)},
      {{"404: the session expired", answer(Outcome::kTerminalStatus, 404), Kind::kGone},
       at(kChunk, 2 * kChunk)},
      {{"410: the session expired", answer(Outcome::kTerminalStatus, 410), Kind::kGone}, at(0, 0)},
      {{"403", answer(Outcome::kTerminalStatus, 403), Kind::kFail, 0, Outcome::kTerminalStatus,
        Status::kOk, kPutRefused},
       at(0, kChunk)},
      {{"a retryable failure", answer(Outcome::kRetriesExhausted, 503), Kind::kRetry},
       at(0, kChunk)},
      {{"a retryable transport failure", failed(Outcome::kRetriesExhausted, Status::kTimeout, ""),
        Kind::kRetry},
       at(0, 0)},
      {{"not re-sent", failed(Outcome::kNotIdempotent, Status::kOk, kClientWords), Kind::kFail, 0,
        Outcome::kNotIdempotent, Status::kOk, kNotResent},
       at(0, kChunk)},
      {{"a terminal failure", failed(Outcome::kTerminalFailure, Status::kTlsVerify, kClientWords),
        Kind::kFail, 0, Outcome::kTerminalFailure, Status::kTlsVerify, kClientWords},
       at(0, kChunk)},
      {{"the budget", failed(Outcome::kBudgetExhausted, Status::kOk, kClientWords), Kind::kFail, 0,
        Outcome::kBudgetExhausted, Status::kOk, kClientWords},
       at(0, 0)},
      {{"a server delay too long", failed(Outcome::kServerDelayTooLong, Status::kOk, kClientWords),
        Kind::kFail, 0, Outcome::kServerDelayTooLong, Status::kOk, kClientWords},
       at(0, 0)},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.verdict.name);
    expect_verdict(classify_put(row.verdict.answer, row.at), row.verdict);
  }
}

}  // namespace
}  // namespace stepback::transfer::detail

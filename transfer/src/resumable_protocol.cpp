#include "resumable_protocol.hpp"

#include <cstring>

namespace stepback::transfer::detail {

using https::Status;

char* write_u64(char* out, std::uint64_t v) {
  char digits[20];
  std::size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *out++ = digits[--n];
  return out;
}

char* write_text(char* out, std::string_view s) {
  if (!s.empty()) std::memcpy(out, s.data(), s.size());
  return out + s.size();
}

std::size_t session_start_fields(bool size_final, std::string_view upload_length,
                                 std::string_view content_type, bool has_metadata,
                                 https::Header* out) {
  std::size_t n = 0;
  if (size_final) out[n++] = https::Header{"X-Upload-Content-Length", upload_length};
  if (!content_type.empty()) out[n++] = https::Header{"X-Upload-Content-Type", content_type};
  if (has_metadata) out[n++] = https::Header{"Content-Type", "application/json; charset=UTF-8"};
  return n;
}

PutPlan plan_put(std::uint64_t size, bool size_final, std::uint64_t committed,
                 std::uint64_t chunk_size, bool need_query) {
  PutPlan plan;
  if (!size_final && !need_query && size - committed < chunk_size) return plan;  // kStarved.
  plan.last = size_final && !need_query && (committed >= size || size - committed <= chunk_size);
  if (need_query || (size_final && committed >= size)) {
    // With everything sent, the empty PUT also asks the server to finish.
    plan.kind = PutPlan::Kind::kQuery;
    return plan;
  }
  plan.kind = PutPlan::Kind::kChunk;
  plan.begin = committed;
  if (!size_final) {
    plan.end = committed + chunk_size;  // Ready: checked above.
  } else {
    plan.end = size - committed > chunk_size ? committed + chunk_size : size;
  }
  return plan;
}

std::size_t write_content_range(const PutPlan& plan, std::uint64_t size, bool size_final,
                                char* out) {
  char* end = write_text(out, "bytes ");
  if (plan.kind == PutPlan::Kind::kChunk) {
    end = write_u64(end, plan.begin);
    *end++ = '-';
    end = write_u64(end, plan.end - 1);
    *end++ = '/';
  } else {
    end = write_text(end, "*/");
  }
  if (size_final) {
    end = write_u64(end, size);
  } else {
    *end++ = '*';
  }
  return static_cast<std::size_t>(end - out);
}

std::size_t put_fields(std::string_view content_range, std::string_view goog_hash,
                       https::Header* out) {
  std::size_t n = 0;
  if (!goog_hash.empty()) out[n++] = https::Header{"x-goog-hash", goog_hash};
  out[n++] = https::Header{"Content-Range", content_range};
  return n;
}

std::size_t session_uri(std::string_view location, const https::Url& initiation,
                        https::MutableBytes out, https::Url* url) {
  const std::size_t room = out.size;
  char* const text = reinterpret_cast<char*>(out.data);
  std::size_t size = 0;
  if (!location.empty() && location.front() == '/') {
    // A path on the initiation URL's origin.
    const bool literal6 = initiation.host.find(':') != std::string_view::npos;
    const std::size_t prefix =
        8 + initiation.host.size() + (literal6 ? 2 : 0) + 6;  // port <= 5 digits.
    if (prefix + location.size() > room) return 0;
    char* at = write_text(text, initiation.tls ? "https://" : "http://");
    if (literal6) *at++ = '[';
    at = write_text(at, initiation.host);
    if (literal6) *at++ = ']';
    if (initiation.port != initiation.default_port()) {
      *at++ = ':';
      at = write_u64(at, initiation.port);
    }
    at = write_text(at, location);
    size = static_cast<std::size_t>(at - text);
  } else {
    if (location.size() > room) return 0;
    // The known session may already be in `out` (a caller passing session_uri() back).
    if (!location.empty()) std::memmove(text, location.data(), location.size());
    size = location.size();
  }
  https::Url parsed;
  if (https::parse_url(std::string_view(text, size), &parsed) != Status::kOk) return 0;
  *url = parsed;
  return size;
}

namespace {

Verdict fail(Outcome outcome, Status error, const char* message) {
  Verdict v;
  v.kind = Verdict::Kind::kFail;
  v.outcome = outcome;
  v.error = error;
  v.message = message;
  return v;
}

Verdict of_kind(Verdict::Kind kind) {
  Verdict v;
  v.kind = kind;
  return v;
}

// The outcomes a session POST and a PUT share: anything but kSuccess and kTerminalStatus.
Verdict common(const Answer& a) {
  switch (a.outcome) {
    case Outcome::kRetriesExhausted:
      // A retryable failure (the exchange's policy allows no retry): the session decides,
      // with the server's delay (Retry-After or RetryInfo) the Client read.
      return of_kind(Verdict::Kind::kRetry);
    case Outcome::kNotIdempotent:
      return fail(Outcome::kNotIdempotent, a.error,
                  a.error == Status::kOk
                      ? "the session POST failed and may have been processed; it is not "
                        "re-sent (see UploadSpec::idempotency)"
                      : a.message);
    case Outcome::kSuccess:
    case Outcome::kTerminalStatus:
    case Outcome::kTerminalFailure:
    case Outcome::kDeadline:
    case Outcome::kBudgetExhausted:
    case Outcome::kServerDelayTooLong:
    case Outcome::kCancelled:
    case Outcome::kOffline:
      break;
  }
  return fail(a.outcome, a.error, a.message);
}

// A 308: how much the server holds, against what it was sent.
Verdict held_range(const Answer& a, const Position& at) {
  std::uint64_t held = 0;
  if (a.range && !parse_held(*a.range, &held)) {
    return fail(Outcome::kTerminalFailure, Status::kProtocol,
                "the 308's Range is not of the form bytes=0-K");
  }
  if (held > at.size || (at.chunk && held > at.chunk_end)) {
    return fail(Outcome::kTerminalFailure, Status::kProtocol,
                "the server claims bytes it was never sent");
  }
  // The server's word is the truth, even below what it said before (it lost data): sending
  // goes on from there, never repeating a byte it holds.
  Verdict v;
  v.held = held;
  if (held > at.committed) {
    v.kind = Verdict::Kind::kProgress;
  } else if (!at.chunk && (held < at.size || !at.size_final)) {
    // The answer the query was for; the chunk from there (or the wait for more of a body
    // still being produced) is part of the same attempt.
    v.kind = Verdict::Kind::kGoOn;
  } else {
    // A chunk of which nothing was kept, or everything held and still no final answer: a
    // failed attempt, so that a server that never moves cannot hold the loop forever.
    v.kind = Verdict::Kind::kStalled;
    v.message = at.chunk ? "the server kept none of the chunk (308 without progress)"
                         : "the server holds every byte but did not finish the upload";
  }
  return v;
}

}  // namespace

Verdict classify_session_start(const Answer& a) {
  if (a.outcome == Outcome::kTerminalStatus) {
    return fail(Outcome::kTerminalStatus, Status::kOk,
                "the session POST was refused with a status that is not retried");
  }
  if (a.outcome != Outcome::kSuccess) return common(a);
  if (a.status / 100 != 2) {
    return fail(Outcome::kTerminalStatus, Status::kOk,
                "the session POST was answered without a session (redirects are not followed)");
  }
  if (!a.location) {
    return fail(Outcome::kTerminalFailure, Status::kProtocol,
                "the session POST's answer has no Location (the session URI)");
  }
  Verdict v = of_kind(Verdict::Kind::kOpened);
  v.location = *a.location;
  return v;
}

Verdict classify_put(const Answer& a, const Position& at) {
  if (a.outcome == Outcome::kTerminalStatus) {
    if (a.status == 404 || a.status == 410) return of_kind(Verdict::Kind::kGone);
    return fail(Outcome::kTerminalStatus, Status::kOk,
                "the upload was refused with a status that is not retried");
  }
  if (a.outcome != Outcome::kSuccess) return common(a);
  if (a.status / 100 == 2) {
    if (!at.size_final) {
      return fail(Outcome::kTerminalFailure, Status::kProtocol,
                  "the server finished an upload whose size was not yet declared");
    }
    return of_kind(Verdict::Kind::kFinished);
  }
  if (a.status != 308) {
    return fail(Outcome::kTerminalFailure, Status::kProtocol,
                "the session answered with a status the protocol does not know (not 2xx, "
                "308, 404 or 410)");
  }
  return held_range(a, at);
}

}  // namespace stepback::transfer::detail

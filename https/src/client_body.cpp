// The Client's body state: the Range lines of a resumed or ranged request and what pins them
// (If-Range, Cloud Storage's generation), whether a response may continue the body the sink
// holds (the same representation, range and length) or must start it over, and the bytes a
// response gives the sink. The exchange and the retry loop are in client.cpp.
#include <cstdio>
#include <cstring>

#include "http/content_range.hpp"
#include "http/http1_text.hpp"
#include "http/query.hpp"
#include "stepback/https/client.hpp"

namespace stepback::https {
namespace {

// Whether the request already names a Cloud Storage generation (in its URL, or a precondition
// field of the app's): then the Client adds none of its own.
bool names_generation(const RequestHead& head) {
  for (std::size_t i = 0; i < head.header_count; ++i) {
    if (http1_text::iequals(head.headers[i].name, "x-goog-if-generation-match")) return true;
  }
  return detail::has_query_parameter(head.url.target, "generation") ||
         detail::has_query_parameter(head.url.target, "ifGenerationMatch");
}

// Appends `text` at `*at` in `out`; false when it does not fit.
bool append(MutableBytes out, std::size_t* at, std::string_view text) {
  if (out.size - *at < text.size()) return false;
  std::memcpy(out.data + *at, text.data(), text.size());
  *at += text.size();
  return true;
}

}  // namespace

Status Client::write_head(bool ranged, std::uint64_t range_from) {
  range_from_ = 0;
  ranged_ = false;
  generation_sent_ = false;
  RequestHead head = spec_.head;  // Through a forward proxy: absolute form and its credentials.
  head.absolute_form = connector_.forwards(head.url, &head.proxy_authorization);
  forwarded_ = head.absolute_form;
  const Status s = write_request_head(head, options_.buffers.request, &head_size_);
  if (s != Status::kOk || !ranged) return s;
  MutableBytes out = options_.buffers.request;
  // Inserts Range (and If-Range, when something pins the bytes) before the blank line that
  // ends the head.
  std::size_t at = head_size_ - 2;
  char range[48];
  if (piece_end_ == UINT64_MAX) {
    std::snprintf(range, sizeof range, "%llu-", static_cast<unsigned long long>(range_from));
  } else {
    std::snprintf(range, sizeof range, "%llu-%llu", static_cast<unsigned long long>(range_from),
                  static_cast<unsigned long long>(piece_end_ - 1));
  }
  bool fits =
      append(out, &at, "Range: bytes=") && append(out, &at, range) && append(out, &at, "\r\n");
  if (validator_size_ > 0) {
    fits = fits && append(out, &at, "If-Range: ") &&
           append(out, &at, std::string_view(validator_, validator_size_)) &&
           append(out, &at, "\r\n");
  }
  // Cloud Storage: the generation the first part came from, as a precondition field (the
  // XML API answers 412 once the object is another; decide_body() then starts it over). The
  // URL is never touched: a signed URL's query is part of its signature.
  generation_sent_ = generation_size_ > 0 && !names_generation(spec_.head);
  if (generation_sent_) {
    fits = fits && append(out, &at, "x-goog-if-generation-match: ") &&
           append(out, &at, std::string_view(generation_, generation_size_)) &&
           append(out, &at, "\r\n");
  }
  fits = fits && append(out, &at, "\r\n");
  if (!fits) return Status::kBufferTooSmall;
  head_size_ = at;
  range_from_ = range_from;
  ranged_ = true;
  return Status::kOk;
}

void Client::take_digests(bool whole_body) {
  // Cloud Storage decompressive transcoding serves gunzipped bytes with the hashes of the
  // stored gzip bytes: those cannot be checked against what arrives.
  const auto stored = parser_.header("x-goog-stored-content-encoding");
  const auto served = parser_.header("content-encoding");
  if (stored && *stored != "identity" && (!served || *served != *stored)) {
    integrity_.clear();
    return;
  }
  const bool expected = integrity_.has_expectation();
  std::size_t cursor = 0;
  std::string_view name;
  std::string_view value;
  while (parser_.next_header(&cursor, &name, &value)) {
    // Content-MD5 of a 206 is the part's (RFC 2616 14.15); x-goog-hash is the object's.
    if (whole_body) {
      (void)integrity_.add_header(name, value);
    } else if (http1_text::iequals(name, "x-goog-hash")) {
      (void)integrity_.add_x_goog_hash(value);
    }
  }
  // Digests run only while something is expected (the body's hot path stays bare otherwise),
  // so digests first stated on a later part cannot cover the bytes before it: not checked.
  if (!expected && delivered_ > 0) integrity_.clear();
}

bool Client::restart_sink() {
  integrity_.reset();
  if (delivered_ == 0) return true;
  const ResponseSink& sink = options_.body;
  if (sink.write != nullptr && (sink.restart == nullptr || !sink.restart(sink.context))) {
    sink_failed_ = true;
    return false;
  }
  refetched_ += delivered_;
  delivered_ = 0;
  return true;
}

void Client::remember_validator() {
  const std::optional<std::string_view> etag = parser_.header("etag");
  const std::optional<std::string_view> modified = parser_.header("last-modified");
  validator_size_ = 0;
  std::string_view v;  // A weak ETag pins nothing; Last-Modified only when there is no ETag.
  if (etag) {
    if (http1_text::sub(*etag, 0, 2) != "W/") v = *etag;
  } else if (modified) {
    v = *modified;
  }
  if (!v.empty() && v.size() <= sizeof validator_) {
    std::memcpy(validator_, v.data(), v.size());
    validator_size_ = v.size();
    validator_is_etag_ = etag.has_value();
  }
  generation_size_ = 0;
  const std::optional<std::string_view> generation = parser_.header("x-goog-generation");
  if (generation && !generation->empty() && generation->size() <= sizeof generation_ &&
      generation->find_first_not_of("0123456789") == std::string_view::npos) {
    std::memcpy(generation_, generation->data(), generation->size());
    generation_size_ = generation->size();
  }
}

const char* Client::other_representation() const {
  const std::optional<std::string_view> etag = parser_.header("etag");
  const std::string_view pinned(validator_, validator_size_);
  if (validator_is_etag_) {
    if (!etag) return "a part came without the ETag the body is pinned to; fetching it whole again";
    if (*etag != pinned) {
      return "a part came from another version of the object (another ETag); fetching it whole "
             "again";
    }
  } else {
    const std::optional<std::string_view> modified = parser_.header("last-modified");
    if (!modified || *modified != pinned) {
      return "a part came from another version of the object (another Last-Modified); "
             "fetching it whole again";
    }
  }
  const std::optional<std::string_view> generation = parser_.header("x-goog-generation");
  if (generation_size_ > 0 && generation &&
      *generation != std::string_view(generation_, generation_size_)) {
    return "a part came from another generation of the object; fetching it whole again";
  }
  return nullptr;
}

void Client::refetch_whole(const char* why) {
  body_use_ = BodyUse::kDiscard;
  validator_size_ = 0;
  generation_size_ = 0;
  piece_end_ = UINT64_MAX;
  // A sink that cannot start over ends the request first (refuse_splice()).
  if (restart_sink()) unusable(Status::kReset, why);
}

void Client::unusable(Status status, const char* why) {
  body_use_ = BodyUse::kDiscard;
  unusable_ = status;
  unusable_message_ = why;
}

void Client::decide_body(Millis now) {
  if (body_use_ != BodyUse::kUndecided) return;
  const std::uint16_t status = parser_.status();
  ClientEvent e = event(ClientEvent::Kind::kResponse, now);
  e.status = status;
  e.reason = parser_.reason();
  emit(e);
  // An expired token's 401 is answered with a fresh one; its body is nobody's.
  if (token_rejected()) {
    body_use_ = BodyUse::kDiscard;
    return;
  }
  // A redirect's body is nobody's: the request goes on elsewhere.
  if (is_followed_redirect()) {
    body_use_ = BodyUse::kDiscard;
    return;
  }
  // Retryable answers keep their body for RetryInfo; it is never the representation.
  if (classify(context_.policy, AttemptResult::http(status)) == Verdict::kRetryable) {
    body_use_ = BodyUse::kCapture;
    return;
  }
  body_use_ = BodyUse::kDeliver;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::optional<std::uint64_t> total;
  const auto range = parser_.header("content-range");
  const bool part = status == 206 && range.has_value() &&
                    detail::parse_content_range(*range, &first, &last, &total);
  if (status == 206 && ranged_) {
    // The first piece of a ranged download, or a resume from byte 0: nothing pins the
    // representation yet. Otherwise the part must be of the pinned one.
    const char* other = validator_size_ > 0 ? other_representation() : nullptr;
    const std::optional<std::uint64_t> length = parser_.content_length();
    if (part && other == nullptr && first == delivered_ &&
        (!total_ || !total || *total == *total_) && (!length || *length == last - first + 1)) {
      if (total) total_ = total;
      part_end_ = last + 1;
      part_limit_ = part_end_;
      if (delivered_ == 0 && validator_size_ == 0) remember_validator();
      take_digests(/*whole_body=*/false);
      return;  // The missing bytes, in place.
    }
    // Another version, another range or another length: never splice; start the body over,
    // whole.
    refetch_whole(other != nullptr ? other
                                   : "the server's range did not continue the body; fetching "
                                     "it whole again");
    return;
  }
  if (status == 206) {
    // A part nobody asked for. Only one that is plainly the whole representation is taken as
    // it; any other would leave a short body looking complete.
    if (!part || first != 0 || !total || last + 1 != *total) {
      unusable(Status::kProtocol,
               "the server answered a request without Range with 206 Partial Content that is "
               "not the whole representation");
      return;
    }
  }
  if (status == 412 && ranged_ && generation_sent_) {
    // The generation precondition failed: the object is another version now.
    refetch_whole(
        "the object is another generation now (412 to x-goog-if-generation-match); fetching "
        "it whole again");
    return;
  }
  if (status / 100 == 2) {
    // A whole representation (a server that ignores ranges sends it in one, pieces or not).
    // If it is provably the one the sink has part of, the part is skipped; otherwise the sink
    // starts over.
    piece_end_ = UINT64_MAX;
    const bool same = delivered_ > 0 && validator_is_etag_ && validator_size_ > 0 &&
                      other_representation() == nullptr;
    if (same) {
      skip_ = delivered_;
    } else if (!restart_sink()) {
      body_use_ = BodyUse::kDiscard;
      return;
    } else {
      integrity_.clear();  // Another representation: its own digests.
    }
    take_digests(/*whole_body=*/true);
    remember_validator();
    total_ = parser_.chunked() ? std::nullopt : parser_.content_length();
    return;
  }
  if (status == 416 && ranged_) {
    // The range no longer fits the object (it changed, or a piece was asked of an empty
    // one): start over, whole.
    refetch_whole("the server's range did not continue the body; fetching it whole again");
    return;
  }
  // Perhaps a pre-signed URL's expiry answer: read to be checked (is_expired_url()).
  if (may_be_expired_url()) {
    body_use_ = BodyUse::kCapture;
    return;
  }
  // Another final status: its body is the caller's, unless part of a representation is
  // already there and the two would run together.
  if (delivered_ > 0) body_use_ = BodyUse::kDiscard;
}

bool Client::deliver_body(void* self, ConstBytes data) {
  auto* c = static_cast<Client*>(self);
  c->decide_body(c->now_);  // The head is complete once body bytes flow.
  switch (c->body_use_) {
    case BodyUse::kCapture: {
      // Keeps what fits; a longer error body is cut (RetryInfo then reads as absent).
      MutableBytes& keep = c->options_.buffers.error_body;
      const std::size_t room = keep.size - c->error_body_size_;
      const std::size_t n = data.size < room ? data.size : room;
      if (n > 0) std::memcpy(keep.data + c->error_body_size_, data.data, n);
      c->error_body_size_ += n;
      return true;
    }
    case BodyUse::kDiscard:
      return !c->sink_failed_;
    case BodyUse::kUndecided:
    case BodyUse::kDeliver:
      break;
  }
  if (c->skip_ > 0) {
    const std::size_t n = data.size < c->skip_ ? data.size : static_cast<std::size_t>(c->skip_);
    c->skip_ -= n;
    c->refetched_ += n;
    data.data += n;
    data.size -= n;
    if (data.size == 0) return true;
  }
  if (data.size > c->part_limit_ - c->delivered_) {
    // A chunked part that runs past its own Content-Range: what it claims is kept, the rest
    // never reaches the sink, and the attempt fails at the end of the response.
    c->unusable_ = Status::kProtocol;
    c->unusable_message_ = "a 206 part carried more bytes than its Content-Range says";
    data.size = static_cast<std::size_t>(c->part_limit_ - c->delivered_);
    if (data.size == 0) return true;
  }
  if (c->integrity_.has_expectation()) c->integrity_.update(data);
  const ResponseSink& sink = c->options_.body;
  const std::uint64_t offset = c->delivered_;
  if (!c->meter_receiving_) {
    c->meter_.start(c->now_, offset, c->options_.progress);
    c->meter_receiving_ = true;
  }
  c->delivered_ += data.size;
  if (sink.write != nullptr && !sink.write(sink.context, offset, data)) return false;
  c->report_progress(c->now_, /*sending=*/false, c->delivered_);
  return true;
}

BodyResume Client::body_resume() const {
  BodyResume r;
  r.offset = delivered_;
  r.validator = validator();
  r.validator_is_etag = validator_is_etag_;
  if (follow_.redirects() == 0) r.generation = generation();
  r.total = total_;
  r.integrity = integrity_.state();
  if (r.integrity.expected_crc32c.size == 0 && r.integrity.expected_md5.size == 0) {
    r.integrity = IntegrityState{};
    r.integrity.size = delivered_;
  }
  return r;
}

}  // namespace stepback::https

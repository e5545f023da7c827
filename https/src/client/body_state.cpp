#include "stepback/https/client/body_state.hpp"

#include <cstring>

#include "http/content_range.hpp"
#include "http/http1_text.hpp"

namespace stepback::https {

bool BodyState::valid(const BodyResume& r) {
  if (r.validator.size() > sizeof validator_ || r.generation.size() > sizeof generation_ ||
      r.generation.find_first_not_of("0123456789") != std::string_view::npos ||
      r.integrity.size != r.offset || (r.total && *r.total < r.offset) || r.until <= r.offset) {
    return false;
  }
  for (const char c : r.validator) {
    // The validator goes into If-Range as it is: no byte may split the head.
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

void BodyState::reset() {
  delivered_ = refetched_ = range_from_ = skip_ = 0;
  piece_end_ = UINT64_MAX;
  total_.reset();
  validator_size_ = generation_size_ = 0;
  integrity_.clear();
  sink_failed_ = ranged_ = generation_sent_ = false;
}

bool BodyState::resume(const BodyResume& r) {
  if (!integrity_.restore(r.integrity)) return false;
  delivered_ = r.offset;
  total_ = r.total;
  // (An empty view may hold a null pointer, which memcpy may not be given even for 0 bytes.)
  if (!r.validator.empty()) std::memcpy(validator_, r.validator.data(), r.validator.size());
  validator_size_ = r.validator.size();
  validator_is_etag_ = r.validator_is_etag;
  if (!r.generation.empty()) std::memcpy(generation_, r.generation.data(), r.generation.size());
  generation_size_ = r.generation.size();
  piece_end_ = r.until;
  return true;
}

BodyState::Range BodyState::next_range(bool resumable, bool names_generation) const {
  // A cut download goes on from where it stopped, pinned to the same representation; a
  // piece is asked for from there, or from byte 0 when nothing pins the bytes the sink has
  // (then the whole representation is asked for: the sink starts over).
  Range r;
  const bool pinned = resumable && validator_size_ > 0;
  r.from = pinned ? delivered_ : 0;
  r.ranged = r.from > 0 || (resumable && piece_end_ != UINT64_MAX && (pinned || delivered_ == 0));
  if (!r.ranged) return Range{};
  r.end = piece_end_;
  r.if_range = validator();
  // Cloud Storage: the generation the first part came from, as a precondition field (the
  // XML API answers 412 once the object is another; decide() then starts it over). The URL
  // is never touched: a signed URL's query is part of its signature.
  if (!names_generation) r.generation = generation();
  return r;
}

void BodyState::asked(const Range& range) {
  ranged_ = range.ranged;
  range_from_ = range.ranged ? range.from : 0;
  generation_sent_ = range.ranged && !range.generation.empty();
}

void BodyState::begin_response() {
  captured_ = 0;
  skip_ = 0;
  use_ = Use::kUndecided;
  unusable_ = Status::kOk;
  unusable_message_ = "";
  part_limit_ = UINT64_MAX;
}

void BodyState::take_digests(const ResponseParser& response, bool whole_body) {
  // Cloud Storage decompressive transcoding serves gunzipped bytes with the hashes of the
  // stored gzip bytes: those cannot be checked against what arrives.
  const auto stored = response.header("x-goog-stored-content-encoding");
  const auto served = response.header("content-encoding");
  if (stored && *stored != "identity" && (!served || *served != *stored)) {
    integrity_.clear();
    return;
  }
  const bool expected = integrity_.has_expectation();
  std::size_t cursor = 0;
  std::string_view name;
  std::string_view value;
  while (response.next_header(&cursor, &name, &value)) {
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

bool BodyState::restart_sink() {
  integrity_.reset();
  if (delivered_ == 0) return true;
  if (sink_.write != nullptr && (sink_.restart == nullptr || !sink_.restart(sink_.context))) {
    sink_failed_ = true;
    return false;
  }
  refetched_ += delivered_;
  delivered_ = 0;
  return true;
}

void BodyState::remember_validator(const ResponseParser& response) {
  const std::optional<std::string_view> etag = response.header("etag");
  const std::optional<std::string_view> modified = response.header("last-modified");
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
  const std::optional<std::string_view> generation = response.header("x-goog-generation");
  if (generation && !generation->empty() && generation->size() <= sizeof generation_ &&
      generation->find_first_not_of("0123456789") == std::string_view::npos) {
    std::memcpy(generation_, generation->data(), generation->size());
    generation_size_ = generation->size();
  }
}

// Why this response is not the representation the sink holds part of (RFC 9110 15.3.7.3:
// parts combine only under the same strong validator): another or no ETag where one is
// pinned, another or no Last-Modified where that is pinned, another Cloud Storage generation;
// null when it is the same.
const char* BodyState::other_representation(const ResponseParser& response) const {
  const std::optional<std::string_view> etag = response.header("etag");
  const std::string_view pinned = validator();
  if (validator_is_etag_) {
    if (!etag) return "a part came without the ETag the body is pinned to; fetching it whole again";
    if (*etag != pinned) {
      return "a part came from another version of the object (another ETag); fetching it whole "
             "again";
    }
  } else {
    const std::optional<std::string_view> modified = response.header("last-modified");
    if (!modified || *modified != pinned) {
      return "a part came from another version of the object (another Last-Modified); "
             "fetching it whole again";
    }
  }
  const std::optional<std::string_view> generation = response.header("x-goog-generation");
  if (generation_size_ > 0 && generation && *generation != this->generation()) {
    return "a part came from another generation of the object; fetching it whole again";
  }
  return nullptr;
}

// Drops what pinned the body and has it fetched whole from byte 0 on the next attempt (the
// sink restarted), `why` being the attempt's failure.
void BodyState::refetch_whole(const char* why) {
  use_ = Use::kDiscard;
  validator_size_ = 0;
  generation_size_ = 0;
  piece_end_ = UINT64_MAX;
  // A sink that cannot start over ends the request first (sink_failed()).
  if (restart_sink()) refuse(Status::kReset, why);
}

void BodyState::refuse(Status status, const char* why) {
  use_ = Use::kDiscard;
  unusable_ = status;
  unusable_message_ = why;
}

void BodyState::decide(const ResponseParser& response, const Known& known) {
  if (use_ != Use::kUndecided) return;
  if (known.nobodys) {
    use_ = Use::kDiscard;
    return;
  }
  // Retryable answers keep their body for RetryInfo; it is never the representation.
  if (known.retryable) {
    use_ = Use::kCapture;
    return;
  }
  use_ = Use::kDeliver;
  const std::uint16_t status = response.status();
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::optional<std::uint64_t> total;
  const auto range = response.header("content-range");
  const bool part = status == 206 && range.has_value() &&
                    detail::parse_content_range(*range, &first, &last, &total);
  if (status == 206) {
    decide_part(response, part, first, last, total);
    return;
  }
  if (status == 412 && ranged_ && generation_sent_) {
    // The generation precondition failed: the object is another version now.
    refetch_whole(
        "the object is another generation now (412 to x-goog-if-generation-match); fetching "
        "it whole again");
    return;
  }
  if (status / 100 == 2) {
    decide_whole(response);
    return;
  }
  if (status == 416 && ranged_) {
    // The range no longer fits the object (it changed, or a piece was asked of an empty
    // one): start over, whole.
    refetch_whole("the server's range did not continue the body; fetching it whole again");
    return;
  }
  // Perhaps a pre-signed URL's expiry answer: read to be checked.
  if (known.may_be_expired) {
    use_ = Use::kCapture;
    return;
  }
  // Another final status: its body is the caller's, unless part of a representation is
  // already there and the two would run together.
  if (delivered_ > 0) use_ = Use::kDiscard;
}

void BodyState::decide_part(const ResponseParser& response, bool part, std::uint64_t first,
                            std::uint64_t last, std::optional<std::uint64_t> total) {
  if (!ranged_) {
    // A part nobody asked for. Only one that is plainly the whole representation is taken
    // as it; any other would leave a short body looking complete.
    if (!part || first != 0 || !total || last + 1 != *total) {
      refuse(Status::kProtocol,
             "the server answered a request without Range with 206 Partial Content that is "
             "not the whole representation");
      return;
    }
    decide_whole(response);
    return;
  }
  // The first piece of a ranged download, or a resume from byte 0: nothing pins the
  // representation yet. Otherwise the part must be of the pinned one.
  const char* other = validator_size_ > 0 ? other_representation(response) : nullptr;
  const std::optional<std::uint64_t> length = response.content_length();
  if (part && other == nullptr && first == delivered_ && (!total_ || !total || *total == *total_) &&
      (!length || *length == last - first + 1)) {
    if (total) total_ = total;
    part_end_ = last + 1;
    part_limit_ = part_end_;
    if (delivered_ == 0 && validator_size_ == 0) remember_validator(response);
    take_digests(response, /*whole_body=*/false);
    return;  // The missing bytes, in place.
  }
  // Another version, another range or another length: never splice; start the body over,
  // whole.
  refetch_whole(other != nullptr
                    ? other
                    : "the server's range did not continue the body; fetching it whole again");
}

void BodyState::decide_whole(const ResponseParser& response) {
  // A whole representation (a server that ignores ranges sends it in one, pieces or not).
  // If it is provably the one the sink has part of, the part is skipped; otherwise the sink
  // starts over.
  piece_end_ = UINT64_MAX;
  const bool same = delivered_ > 0 && validator_is_etag_ && validator_size_ > 0 &&
                    other_representation(response) == nullptr;
  if (same) {
    skip_ = delivered_;
  } else if (!restart_sink()) {
    use_ = Use::kDiscard;
    return;
  } else {
    integrity_.clear();  // Another representation: its own digests.
  }
  take_digests(response, /*whole_body=*/true);
  remember_validator(response);
  total_ = response.chunked() ? std::nullopt : response.content_length();
}

BodyState::Delivery BodyState::deliver(ConstBytes data) {
  Delivery d;
  switch (use_) {
    case Use::kCapture: {
      // Keeps what fits; a longer error body is cut (RetryInfo then reads as absent).
      const std::size_t room = error_body_.size - captured_;
      const std::size_t n = data.size < room ? data.size : room;
      if (n > 0) std::memcpy(error_body_.data + captured_, data.data, n);
      captured_ += n;
      return d;
    }
    case Use::kDiscard:
      d.ok = !sink_failed_;
      return d;
    case Use::kUndecided:
    case Use::kDeliver:
      break;
  }
  if (skip_ > 0) {
    const std::size_t n = data.size < skip_ ? data.size : static_cast<std::size_t>(skip_);
    skip_ -= n;
    refetched_ += n;
    data.data += n;
    data.size -= n;
    if (data.size == 0) return d;
  }
  if (data.size > part_limit_ - delivered_) {
    // A chunked part that runs past its own Content-Range: what it claims is kept, the rest
    // never reaches the sink, and the attempt fails at the end of the response.
    unusable_ = Status::kProtocol;
    unusable_message_ = "a 206 part carried more bytes than its Content-Range says";
    data.size = static_cast<std::size_t>(part_limit_ - delivered_);
    if (data.size == 0) return d;
  }
  if (integrity_.has_expectation()) integrity_.update(data);
  d.offset = delivered_;
  d.wrote = true;
  delivered_ += data.size;
  if (sink_.write != nullptr && !sink_.write(sink_.context, d.offset, data)) d.ok = false;
  return d;
}

bool BodyState::give_captured() {
  const ConstBytes kept = captured();
  if (kept.size > 0 && sink_.write != nullptr && !sink_.write(sink_.context, 0, kept)) {
    return false;
  }
  delivered_ = kept.size;
  return true;
}

std::optional<IntegrityResult> BodyState::check_integrity() {
  if (use_ != Use::kDeliver || !integrity_.has_expectation() || (total_ && delivered_ < *total_)) {
    return std::nullopt;
  }
  const IntegrityResult checked = integrity_.finish();
  (void)format_integrity_message(checked, integrity_message_, sizeof integrity_message_);
  return checked;
}

bool BodyState::cut(std::uint16_t status) const {
  // A part (206) that ends before the representation does is still a cut body, unless the
  // request asked for a piece and the part came whole (a server may send less than asked).
  const bool piece_done = status == 206 && piece_end_ != UINT64_MAX && delivered_ == part_end_;
  return use_ == Use::kDeliver && total_ && delivered_ < *total_ &&
         (status == 200 || status == 206) && !piece_done;
}

BodyResume BodyState::resume_point(bool with_generation) const {
  BodyResume r;
  r.offset = delivered_;
  r.validator = validator();
  r.validator_is_etag = validator_is_etag_;
  if (with_generation) r.generation = generation();
  r.total = total_;
  r.integrity = integrity_.state();
  if (r.integrity.expected_crc32c.size == 0 && r.integrity.expected_md5.size == 0) {
    r.integrity = IntegrityState{};
    r.integrity.size = r.offset;
  }
  return r;
}

}  // namespace stepback::https

// The Client's body state: what the sink holds of the representation and what pins it (the
// strong validator, Cloud Storage's generation, the integrity check over the bytes), the
// range the next attempt asks for, and what each response's body is for: the missing bytes
// in place, the whole representation again (the sink restarted, or a provably same one
// skipped through), an error body kept for RetryInfo, or nothing. A part of another version,
// range or length is never spliced in.
#ifndef STEPBACK_HTTPS_CLIENT_BODY_STATE_HPP_
#define STEPBACK_HTTPS_CLIENT_BODY_STATE_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "stepback/https/http/response_parser.hpp"
#include "stepback/https/integrity/integrity.hpp"
#include "stepback/https/types.hpp"

namespace stepback::https {

// Where the response body goes. Each byte of the representation arrives once, in order:
// write(context, offset, data) gets bytes [offset, offset + data.size) and returns false to
// abort. When a retry must start the representation over (the server ignored a range, or
// the object changed), restart(context) is called first; a sink that cannot start over
// (stdout, a pipe) leaves `restart` null or returns false, and the request then fails with
// Status::kRestartRefused instead of splicing two bodies. A null `write` discards the body.
struct ResponseSink {
  bool (*write)(void* context, std::uint64_t offset, ConstBytes data) = nullptr;
  bool (*restart)(void* context) = nullptr;
  void* context = nullptr;
};

// Where a GET's representation stood when an earlier request stopped (in another process,
// say): the request asks only for the rest (Range from `offset`, If-Range on `validator`,
// pinned to Cloud Storage's `generation`) and checks integrity over the whole body. A server
// that answers with the whole representation (another one, or one that ignores ranges) gets
// the sink restarted, as within one request. Views need only last for start().
struct BodyResume {
  std::uint64_t offset = 0;  // Bytes of the representation the sink already holds.
  // The strong ETag or the Last-Modified date the bytes came with; empty: none, and the body
  // is fetched whole (the sink restarts).
  std::string_view validator;
  bool validator_is_etag = true;
  std::string_view generation;         // x-goog-generation (digits); empty: none.
  std::optional<std::uint64_t> total;  // The representation's length, when it was known.
  IntegrityState integrity;            // The check over the first `offset` bytes.
  // Asks only for the bytes before this one (`bytes=offset-(until-1)`), even from offset 0:
  // a 206 that delivers its whole part ends the request with status 206 as a finished piece
  // (a ranged download asks for the next with Client::continue_body). UINT64_MAX: the rest.
  std::uint64_t until = UINT64_MAX;
};

class BodyState {
 public:
  // What a response's body is for.
  enum class Use : std::uint8_t { kUndecided, kDeliver, kCapture, kDiscard };
  // What the Client knows of a response before its body is looked at.
  struct Known {
    bool nobodys = false;         // A redirect followed, or a token refreshed: nobody's body.
    bool retryable = false;       // A retryable answer: its body is kept for RetryInfo.
    bool may_be_expired = false;  // Perhaps a pre-signed URL's expiry answer (kept to check).
  };
  // What deliver() did.
  struct Delivery {
    bool ok = true;      // False: the sink refused the bytes (the response is abandoned).
    bool wrote = false;  // Bytes went to the sink, from `offset`.
    std::uint64_t offset = 0;
  };

  // The body of responses goes to `sink`; retryable answers' bodies into `error_body`. Both
  // must outlive the state.
  BodyState(const ResponseSink& sink, MutableBytes error_body)
      : sink_(sink), error_body_(error_body) {}

  // Whether a request may go on from `resume` (a validator that fits and cannot split a head,
  // a generation of digits, an integrity state over exactly `offset` bytes, a sane range).
  static bool valid(const BodyResume& resume);
  // A new request: nothing delivered, nothing pinned, the whole body asked for.
  void reset();
  // A request that goes on from `resume` (valid()); false when its integrity state is not one.
  bool resume(const BodyResume& resume);
  // The request asks for bytes before `until` only (UINT64_MAX: the rest).
  void set_until(std::uint64_t until) { piece_end_ = until; }
  // What the next attempt's head asks for: a Range from where the body stands, pinned, when
  // `resumable` (a GET) and the bytes are pinned or none are there yet and a piece is asked.
  struct Range {
    bool ranged = false;
    std::uint64_t from = 0;
    std::uint64_t end = UINT64_MAX;
    std::string_view if_range;
    std::string_view generation;  // Sent as x-goog-if-generation-match ("" when not).
  };
  Range next_range(bool resumable, bool names_generation) const;
  // The head that went asks for `range` (ranged false: the whole body).
  void asked(const Range& range);

  // A new response: its use undecided, nothing captured, nothing to skip.
  void begin_response();
  // Decides what the body of `response` (its head complete) is for; once per response.
  void decide(const ResponseParser& response, const Known& known);
  Use use() const { return use_; }
  // Takes body bytes of the response.
  Delivery deliver(ConstBytes data);
  // Gives the sink the captured body of a final answer that was kept to be checked (a
  // possible URL expiry that was not one); false when the sink refuses it.
  bool give_captured();
  // After the response: the digests' verdict when the whole representation is in, else none.
  std::optional<IntegrityResult> check_integrity();
  const char* integrity_message() const { return integrity_message_; }
  // Whether the response ended before what it was for: a cut body (200 or 206 short of the
  // representation, unless a 206 delivered the whole piece asked for).
  bool cut(std::uint16_t status) const;

  // The response cannot serve the body: the attempt's failure (kOk: none) and its words.
  Status unusable() const { return unusable_; }
  const char* unusable_message() const { return unusable_message_; }
  // The sink refused to start over: the request must end rather than splice.
  bool sink_failed() const { return sink_failed_; }
  ConstBytes captured() const { return ConstBytes{error_body_.data, captured_}; }

  std::uint64_t delivered() const { return delivered_; }
  std::uint64_t refetched() const { return refetched_; }
  std::optional<std::uint64_t> total() const { return total_; }
  // Whether a 206 ended a piece of a representation not yet complete.
  bool incomplete() const { return total_ && delivered_ < *total_; }
  std::uint64_t range_from() const { return range_from_; }
  std::string_view validator() const { return std::string_view(validator_, validator_size_); }
  bool validator_is_etag() const { return validator_is_etag_; }
  std::string_view generation() const { return std::string_view(generation_, generation_size_); }
  IntegrityState integrity_state() const { return integrity_.state(); }
  bool integrity_expected() const { return integrity_.has_expectation(); }
  // Where the body stands, as start(spec, resume) takes it: the bytes delivered, their
  // validator, the generation when `with_generation`, the length when known, and the
  // integrity check (the byte count alone when no digest was announced). Views into this.
  BodyResume resume_point(bool with_generation) const;

 private:
  void decide_part(const ResponseParser& response, bool part, std::uint64_t first,
                   std::uint64_t last, std::optional<std::uint64_t> total);
  void decide_whole(const ResponseParser& response);
  void remember_validator(const ResponseParser& response);
  const char* other_representation(const ResponseParser& response) const;
  void refetch_whole(const char* why);
  void refuse(Status status, const char* why);
  bool restart_sink();
  void take_digests(const ResponseParser& response, bool whole_body);

  const ResponseSink& sink_;
  MutableBytes error_body_;
  IntegrityCheck integrity_;     // Digests over every delivered byte of the representation.
  std::uint64_t delivered_ = 0;  // Representation bytes the sink has.
  std::uint64_t refetched_ = 0;
  std::uint64_t range_from_ = 0;          // Where this attempt's Range starts.
  std::uint64_t piece_end_ = UINT64_MAX;  // BodyResume::until of the request.
  std::uint64_t part_end_ = 0;            // A 206's Content-Range end + 1.
  // This response's body may not go past this offset (a 206's part_end_): bytes beyond what
  // its Content-Range claims are never delivered, and the attempt fails.
  std::uint64_t part_limit_ = UINT64_MAX;
  std::uint64_t skip_ = 0;  // Body bytes of this response to drop (already delivered).
  std::optional<std::uint64_t> total_;
  std::size_t captured_ = 0;  // Bytes of error_body_ kept.
  std::size_t validator_size_ = 0;
  std::size_t generation_size_ = 0;
  const char* unusable_message_ = "";
  Status unusable_ = Status::kOk;
  Use use_ = Use::kUndecided;
  bool validator_is_etag_ = false;
  bool sink_failed_ = false;
  bool ranged_ = false;           // This attempt's request has a Range field.
  bool generation_sent_ = false;  // This attempt pinned the generation.
  char validator_[160] = {};      // The strong ETag or Last-Modified of the representation.
  char generation_[20] = {};      // Cloud Storage's x-goog-generation of the representation.
  char integrity_message_[kIntegrityMessageMax] = {};
};

}  // namespace stepback::https

#endif  // STEPBACK_HTTPS_CLIENT_BODY_STATE_HPP_

// The JSON forms of google.longrunning.Operation and google.rpc.Status, read in one
// validating pass over the caller's bytes (RFC 8259, nesting at most kOperationJsonMaxDepth,
// an optional UTF-8 byte order mark) with an explicit stack instead of recursion, the way
// the RetryInfo reader (https/src/http/retry_info_json.cpp) reads error bodies. Nothing is
// copied or allocated: the reader answers with views into the caller's buffer.
//
// What it keeps, by path (keys compared after their escapes are decoded):
//   name, done, metadata (raw), metadata.verb, metadata.statusDetail, response (raw),
//   error (raw), error.code, error.message, error.status, error.details (raw).
// Everything else is validated and skipped. A document whose kept fields have the wrong
// JSON type (a numeric "done", an object "name", a fractional "code"), that names a kept
// field twice, or that carries both "response" and "error" is valid JSON but not an
// Operation: kShape. proto3's JSON mapping leaves default values out, so an absent "done"
// reads as false, and null stands for an absent field.
//
// The same reader takes the error body of a failed HTTP request (Google's
// {"error": {"code": 409, "message": "...", "status": "ALREADY_EXISTS", "details": [...]}}),
// also when an endpoint wraps it in an array ([{"error": {...}}], the first one counts).
//
// Stack: bounded, no recursion; most of it the per-level state of kOperationJsonMaxDepth
// levels in read_operation's frame. Measured figures: docs/performance.md.
#ifndef STEPBACK_TRANSFER_OPERATION_JSON_HPP_
#define STEPBACK_TRANSFER_OPERATION_JSON_HPP_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepback/https/types.hpp"

namespace stepback::transfer {

// Deepest nesting of arrays and objects the reader accepts; deeper is malformed.
inline constexpr std::size_t kOperationJsonMaxDepth = 32;

// A google.rpc.Status as JSON: Operation.error, or the "error" object of an HTTP error body.
// Strings are raw views (between the quotes, escapes not decoded: see json_decode_string).
struct RpcStatusView {
  bool present = false;      // The document has a non-null "error" object.
  bool has_code = false;     // "code" was there (a number, or a string of digits).
  std::int32_t code = 0;     // google.rpc.Code in Operation.error; the HTTP status in an
                             // HTTP error body.
  std::string_view message;  // "message", raw.
  std::string_view status;   // "status" of an HTTP error body ("ALREADY_EXISTS"), raw.
  std::string_view details;  // The "details" array as sent (raw JSON), "" when absent.
  std::string_view raw;      // The whole "error" object as sent.
};

// A google.longrunning.Operation as JSON, as views into the caller's buffer.
struct OperationView {
  std::string_view name;           // "name", raw; "" when absent.
  bool done = false;               // "done"; absent or null is false.
  std::string_view metadata;       // The "metadata" value as sent (raw JSON), "" when absent.
  std::string_view verb;           // metadata.verb ("create"), raw, when it is a string.
  std::string_view status_detail;  // metadata.statusDetail, raw, when it is a string.
  bool has_response = false;       // A non-null "response" (done with a result).
  std::string_view response;       // The "response" value as sent (raw JSON).
  RpcStatusView error;             // "error" (done with a failure).
};

// What a read found.
enum class JsonRead : std::uint8_t {
  kOk,
  kSyntax,  // Not valid JSON (or nested deeper than kOperationJsonMaxDepth, or empty).
  kShape,   // Valid JSON, but not the expected message (see the file comment).
};

// The lower-case name of `r` ("ok", "syntax", "shape").
const char* to_string(JsonRead r);

// Reads `body` as an Operation (its top level must be an object) into *out.
[[nodiscard]] JsonRead read_operation(https::ConstBytes body, OperationView* out);

// Reads `body` as an HTTP error body ({"error": {...}}, or an array whose first element is
// one) into *out; kShape when the document has no "error" object.
[[nodiscard]] JsonRead read_error_body(https::ConstBytes body, RpcStatusView* out);

// Whether `body` is one valid JSON value (RFC 8259, the same limits as the readers).
[[nodiscard]] bool json_valid(https::ConstBytes body);

// Decodes a raw string view of these readers (escapes, \uXXXX surrogate pairs joined, into
// UTF-8) into `out`; returns the bytes written. Cut at out.size, never inside a UTF-8
// sequence the decoder wrote. `raw` must come from a successful read (it is not revalidated:
// a malformed escape ends the decoding there).
std::size_t json_decode_string(std::string_view raw, https::MutableBytes out);

// The name of a google.rpc.Code (9: "FAILED_PRECONDITION"); "" for a number without one.
const char* rpc_code_name(std::int32_t code);

}  // namespace stepback::transfer

#endif  // STEPBACK_TRANSFER_OPERATION_JSON_HPP_

// libFuzzer target for the Operation and google.rpc.Status JSON reader
// (transfer/src/operation_json.cpp). The input is read as an Operation, as an HTTP error body
// and as plain JSON; the three must agree on validity, every view must lie inside the input,
// every kept container must itself be valid JSON, decoding a kept string never writes past
// its room, and the RetryInfo reader (another validating pass over the same grammar) finds
// nothing in a document this reader calls invalid. Any disagreement aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "stepback/https/http/retry_info.hpp"
#include "stepback/transfer/operation_json.hpp"

namespace {

using stepback::https::ConstBytes;
using stepback::https::MutableBytes;
using stepback::transfer::JsonRead;

const std::uint8_t* g_begin = nullptr;
const std::uint8_t* g_end = nullptr;

ConstBytes bytes(std::string_view s) {
  return ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Aborts unless `v` is empty or a view into the input.
void inside(std::string_view v) {
  if (v.empty()) return;
  const auto* p = reinterpret_cast<const std::uint8_t*>(v.data());
  if (p < g_begin || p + v.size() > g_end) std::abort();
}

// A kept container: inside the input and valid JSON on its own.
void container(std::string_view v) {
  inside(v);
  if (!v.empty() && !stepback::transfer::json_valid(bytes(v))) std::abort();
}

// A kept string: inside the input; decoding it stays within its room and never grows it.
void string(std::string_view v) {
  inside(v);
  for (const std::size_t room : {std::size_t{0}, std::size_t{1}, std::size_t{7}, v.size() + 4}) {
    std::vector<std::uint8_t> out(room + 1, 0xA5);
    const std::size_t n = stepback::transfer::json_decode_string(v, MutableBytes{out.data(), room});
    if (n > room || n > v.size() || out[room] != 0xA5) std::abort();
  }
}

void status(const stepback::transfer::RpcStatusView& s) {
  string(s.message);
  string(s.status);
  container(s.details);
  container(s.raw);
  if (s.present && s.raw.empty()) std::abort();
  (void)stepback::transfer::rpc_code_name(s.code);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // An exact copy, so that AddressSanitizer sees a read one past the end.
  std::vector<std::uint8_t> input(data, data + size);
  g_begin = input.data();
  g_end = input.data() + input.size();
  const ConstBytes body{input.data(), input.size()};

  stepback::transfer::OperationView op;
  const JsonRead as_operation = stepback::transfer::read_operation(body, &op);
  stepback::transfer::RpcStatusView error;
  const JsonRead as_error = stepback::transfer::read_error_body(body, &error);
  const bool valid = stepback::transfer::json_valid(body);

  if ((as_operation == JsonRead::kSyntax) == valid) std::abort();
  if ((as_error == JsonRead::kSyntax) == valid) std::abort();
  if (!valid && stepback::https::retry_delay_from_status_json(body).has_value()) std::abort();
  if (as_operation != JsonRead::kSyntax) {
    string(op.name);
    string(op.verb);
    string(op.status_detail);
    container(op.metadata);
    container(op.response);
    status(op.error);
    if (op.has_response && op.response.empty()) std::abort();
    if (as_operation == JsonRead::kOk && op.has_response && op.error.present) std::abort();
  }
  if (as_error == JsonRead::kOk) {
    status(error);
    if (!error.present) std::abort();
  }
  return 0;
}

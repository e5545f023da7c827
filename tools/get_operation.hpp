// `stepback get --operation`: the request is a mutation that answers with a long-running
// Operation (Memorystore for Redis and other Google Cloud APIs), followed until done with
// transfer::Operation. run_get() prepares the request as for a plain get and hands it here.
#ifndef STEPBACK_TOOLS_GET_OPERATION_HPP_
#define STEPBACK_TOOLS_GET_OPERATION_HPP_

#include <cstdio>
#include <optional>

#include "client_loop.hpp"
#include "output.hpp"
#include "reporter.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/connector.hpp"
#include "stepback/profiles/profile.hpp"
#include "stepback/transfer/operation.hpp"

namespace stepback::tools {

// Exit codes of `stepback get --operation` beyond the plain ones (also in --help and
// docs/memorystore.md).
enum OperationExitCode : int {
  kExitOperationError = 11,  // The operation finished with an error (its google.rpc.Status).
  kExitGaveUpPolling = 12,   // The polling deadline (--deadline, else the profile's) passed.
  kExitAlreadyExists = 13,   // The create was answered 409 ALREADY_EXISTS.
};

// What run_operation_command() needs; everything must outlive the call.
struct OperationCommand {
  https::Connector* connector = nullptr;
  const RetryContext* context = nullptr;
  https::ClientOptions client;  // Its body sink is replaced; its events go to `reporter`.
  https::RequestSpec mutation;
  PollingPolicy polling;
  Reporter* reporter = nullptr;  // The plain get's progress lines and --trace events.
  BodyOutput* output = nullptr;  // Where the final response goes.
  std::FILE* err = stderr;
  bool trace = false;
  bool countdown = false;   // stderr is a terminal: a live line.
  Millis start{};           // t_ms counts from here.
  const char* prefix = "";  // "stepback get: ".
};

// The profile's polling policy (desktop or mobile values), with `deadline` (--deadline) as
// its total deadline when given (0: none).
PollingPolicy polling_for(const profiles::DeviceProfile& profile, std::optional<Millis> deadline);

// The exit code of a finished operation; `output_failed` when writing the response failed.
int operation_exit_code(const transfer::OperationResult& result, bool output_failed);

// Sends the mutation and follows its operation from a poll() loop, with progress on `err`;
// returns the exit code (flushing and closing the output is the caller's).
int run_operation_command(const OperationCommand& command);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_GET_OPERATION_HPP_

#include "get_operation.hpp"

#include "operation_reporter.hpp"

namespace stepback::tools {
namespace {

// The latest answer (the Operation, its response or error) lives here whole. Static: a
// created Memorystore instance is 1-2 KiB; an answer that does not fit fails as malformed.
std::uint8_t g_operation[32 * 1024];

}  // namespace

PollingPolicy polling_for(const profiles::DeviceProfile& profile, std::optional<Millis> deadline) {
  PollingPolicy p = profile.polling;
  if (deadline) p.total_deadline = *deadline;
  return p;
}

int operation_exit_code(const transfer::OperationResult& result, bool output_failed) {
  if (output_failed || result.response_refused) return kExitLocalIo;
  switch (result.outcome) {
    case transfer::OperationOutcome::kSucceeded:
      return kExitOk;
    case transfer::OperationOutcome::kFailed:
      return kExitOperationError;
    case transfer::OperationOutcome::kPollingDeadline:
      return kExitGaveUpPolling;
    case transfer::OperationOutcome::kAlreadyExists:
      return kExitAlreadyExists;
    case transfer::OperationOutcome::kGaveUpRetrying:
      return kExitGaveUp;
    case transfer::OperationOutcome::kRequestFailed:
      return exit_code(result.request, false);
    case transfer::OperationOutcome::kMalformed:
      return kExitTransport;
    case transfer::OperationOutcome::kCancelled:
      break;
  }
  return kExitInternal;
}

int run_operation_command(const OperationCommand& c) {
  OperationReporter progress(c);
  transfer::OperationOptions options;
  options.client = c.client;
  options.client.events = progress.client_sink();
  options.operation_buffer = https::MutableBytes{g_operation, sizeof g_operation};
  options.response = body_sink(c.output);
  options.polling = c.polling;
  options.events = progress.sink();
  transfer::Operation op(*c.connector, *c.context, options);
  transfer::OperationSpec spec;
  spec.mutation = c.mutation;
  const https::Status started = op.start(spec);
  if (started != https::Status::kOk) {
    std::fprintf(c.err, "%s%s\n", c.prefix,
                 started == https::Status::kBufferTooSmall
                     ? request_head_too_large()
                     : "invalid request: check the method (-X), the headers (-H) and the URL");
    return kExitUsage;
  }

  run_steps(
      Stepper{[](void* o, Millis now) { return static_cast<transfer::Operation*>(o)->step(now); },
              &op},
      progress, nullptr);
  progress.finish(op);
  return operation_exit_code(op.result(), c.output->failed);
}

}  // namespace stepback::tools

// `stepback get` of a plain GET: a transfer::Download whose body goes to stdout, to a file in
// place, or to FILE.part with a checkpoint beside it (FILE.part.state, or --state FILE), so
// that the same command run again after a kill, a crash or a power cut goes on from there.
#ifndef STEPBACK_TOOLS_GET_DOWNLOAD_HPP_
#define STEPBACK_TOOLS_GET_DOWNLOAD_HPP_

#include <cstdint>
#include <optional>
#include <string_view>

#include "reporter.hpp"
#include "response_gate.hpp"
#include "stepback/core/checkpoint.hpp"
#include "stepback/core/millis.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/connector.hpp"

namespace stepback::tools {

// What one download needs; every pointer and view must outlive run_download_command().
struct DownloadCommand {
  https::Connector* connector = nullptr;
  const RetryContext* context = nullptr;
  https::ClientOptions client;  // The body sink is set by the command.
  https::RequestSpec request;   // A GET: URL, headers, User-Agent, Host.
  std::string_view url_text;    // The URL as given (kept in the checkpoint).
  bool url_may_change = false;  // --url-file: a state file of another URL is taken up.
  CheckpointPolicy checkpoint;
  std::uint64_t max_rate = 0;    // --limit-rate, bytes a second; 0: none.
  std::uint64_t range_size = 0;  // --range-size, bytes a piece; 0: one request.
  // --network-type: the network, fixed; none: the routes say, and their changes are followed.
  std::optional<https::NetworkInfo> network_type;
  // --defer-after: a wait longer than this (or one for a network) saves and ends the run.
  std::optional<Millis> defer_after;
  const char* interface = nullptr;  // --interface: the device whose routes are the network.
  const char* output = nullptr;     // -o FILE; null: stdout.
  const char* state = nullptr;      // --state FILE; null: FILE.part.state with -o.
  Reporter* reporter = nullptr;
  // -f, -i: the body goes to the output through it (it also has the client's events); null:
  // straight.
  ResponseGate* gate = nullptr;
  bool fail = false;    // -f, --fail-with-body: an HTTP error exits kExitHttpFail.
  bool silent = false;  // -s: no words on going on from a checkpoint.
  const char* prefix = "";
  bool trace = false;
  Millis start{};
};

// Runs the download to its end and returns the exit code (client_loop.hpp's).
int run_download_command(const DownloadCommand& command);

// After giving up on a retryable answer (a 503 to the end, say), its body explains it: the
// start of it goes to stderr, printable bytes only, as a 404's body goes to the output.
// With `trace_at` (time since the start), a JSON trace event instead of a line.
void show_last_error_body(const https::ClientResult& result, https::ConstBytes body,
                          std::optional<Millis> trace_at);

}  // namespace stepback::tools

#endif  // STEPBACK_TOOLS_GET_DOWNLOAD_HPP_

#include "get.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdarg>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include "client_loop.hpp"
#include "get_args.hpp"
#include "get_download.hpp"
#include "get_operation.hpp"
#include "get_sources.hpp"
#include "request_flags.hpp"
#include "stack.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/detail/text.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/http/request_writer.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"
#include "stepback/transfer/operation.hpp"

namespace stepback::tools {
namespace {

constexpr const char* kPrefix = "stepback get: ";

// The output stream's stdio buffer, installed before the first write so that stdio does not
// allocate one while the request runs.
char g_output_buffer[16 * 1024];

}  // namespace

int run_get(int argc, char** argv) {
  std::string error;
  const std::optional<GetOptions> parsed = parse_get_args(argc, argv, &error);
  if (!parsed) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }
  GetOptions o = *parsed;
  if (o.help) {
    print_get_usage(stdout);
    return kExitOk;
  }
  static UrlFile url_file;
  if (o.url_file != nullptr) {
    url_file.path = o.url_file;
    if (!read_url_file(&url_file)) {
      std::fprintf(stderr, "%scannot read a URL from --url-file '%s' (its first line)\n", kPrefix,
                   o.url_file);
      return kExitUsage;
    }
    // The request's URL views into a copy that stays: url_file.current changes on refresh.
    static char first_url[sizeof url_file.current];
    std::memcpy(first_url, url_file.current, url_file.size);
    o.url = std::string_view(first_url, url_file.size);
  }
  https::Url url;
  if (https::parse_url(o.url, &url) != https::Status::kOk) {
    std::fprintf(stderr, "%sinvalid URL '%s' (expected https://host[:port]/path)\n", kPrefix,
                 std::string(o.url).c_str());
    return kExitUsage;
  }
  const std::optional<Policy> policy = make_policy(o.retry, &error);
  if (!policy) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }
  static ProxySetup proxy;
  if (!make_proxy(o.proxy, url, &proxy, &error)) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitUsage;
  }

  std::vector<std::uint8_t> body_storage;
  https::ConstBytes body;
  if (o.data && !load_body(*o.data, &body_storage, &body, &error)) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return kExitLocalIo;
  }
  const std::string_view method = !o.method.empty() ? o.method : (o.data ? "POST" : "GET");
  // A plain GET is a transfer::Download (get_download.cpp): it opens its own output.
  const bool download = method == "GET" && !o.data && !o.operation;
  if (o.retry.defer_after && !download) {
    std::fprintf(stderr, "%s--defer-after is for a GET (a download), not this request\n", kPrefix);
    return kExitUsage;
  }
  if (o.range_size > 0 && !download) {
    std::fprintf(stderr, "%s--range-size is for a GET (a download), not this request\n", kPrefix);
    return kExitUsage;
  }
  BodyOutput output{stdout};
  // -o FILE, a regular file or a new one: the body goes to FILE.part, renamed over FILE on
  // success only, so a failed run neither leaves a partial FILE nor wipes an existing one.
  // Anything else (/dev/null, a FIFO, a terminal) is written in place and, like stdout,
  // cannot start over.
  const bool via_part = o.output != nullptr && !download && writes_via_part(o.output);
  const std::string part = via_part ? std::string(o.output) + ".part" : std::string();
  if (o.output != nullptr && !download) {
    const char* path = via_part ? part.c_str() : o.output;
    output.file = std::fopen(path, "wb");
    if (output.file == nullptr) {
      std::fprintf(stderr, "%scannot open '%s' for writing: %s\n", kPrefix, path,
                   std::strerror(errno));
      return kExitLocalIo;
    }
    output.restartable = via_part;
  }

  if (!download) (void)std::setvbuf(output.file, g_output_buffer, _IOFBF, sizeof g_output_buffer);

  Stack stack;
  StackSpec stack_spec;
  stack_spec.tls = url.tls;
  stack_spec.trust = &o.trust;
  stack_spec.pins = o.pins;
  stack_spec.pin_count = o.pin_count;
  stack_spec.dns_servers = o.dns_servers;
  stack_spec.proxy = &proxy;
  stack_spec.binding = &o.retry;
  if (const int code = stack.build(stack_spec, &error); code != kExitOk) {
    std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
    return code;
  }
  platform::Status random_status = platform::Status::kOk;
  Xoshiro128 random = platform::make_os_random(&random_status);
  RetryBudget budget(o.retry.profile->budget);
  const RetryContext context{*policy, random, &budget};
  const Millis start = platform::monotonic_now();
  Reporter reporter(stderr, o.trace, ::isatty(STDERR_FILENO) == 1, kPrefix, start);
  reporter.set_time_limit(o.max_time);
  https::TcpTlsConnector& connector = stack.connector();
  https::ClientOptions options;
  options.timeouts = make_timeouts(o.retry);
  options.network = o.retry.network;
  options.buffers = client_buffers();
  options.body = body_sink(&output);
  options.events = reporter.sink();
  options.progress = reporter.progress_policy();
  options.wall_now = &platform::wall_now;
  options.max_time = o.max_time;
  // Redirects for every request get makes: the plain one, the download, the operation's.
  options.max_redirects = o.max_redirects.value_or(o.retry.profile->max_redirects);
  options.redirect_url = redirect_buffer();
  // --limit-rate for requests that are not a download (which paces itself: max_rate), in
  // each direction, as curl's.
  RateLimiter receive_limit(o.retry.limit_rate, default_burst(o.retry.limit_rate));
  RateLimiter send_limit(o.retry.limit_rate, default_burst(o.retry.limit_rate));
  if (o.retry.limit_rate > 0 && !download) {
    options.receive_limit = &receive_limit;
    options.send_limit = &send_limit;
  }
  if (o.url_file != nullptr) {
    options.url_refresh = https::UrlRefresh{&fresh_url_from_file, &url_file};
  }
  TokenSource tokens{o.bearer, o.token_file};
  if (o.bearer != nullptr || o.token_file != nullptr) {
    options.credentials = https::Credentials{&token_authorization, &tokens};
  }

  https::RequestSpec spec;
  spec.head.method = method;
  spec.head.url = url;
  spec.head.user_agent = o.user_agent;
  spec.head.host = o.host;
  // A body without a declared type is declared as bytes, never left for the server to guess.
  https::Header headers[kMaxGetHeaders + 1];
  std::size_t header_count = 0;
  bool has_type = false;
  for (std::size_t i = 0; i < o.header_count; ++i) {
    headers[header_count++] = o.headers[i];
    has_type |= https::detail::iequals(o.headers[i].name, "content-type");
  }
  // (A mutation of a Google API takes JSON.)
  if (o.data && !has_type) {
    headers[header_count++] = {"Content-Type",
                               o.operation ? "application/json" : "application/octet-stream"};
  }
  spec.head.headers = headers;
  spec.head.header_count = header_count;
  spec.body = https::BodySource::of(&body);
  spec.idempotency = o.retry.idempotency;

  std::optional<https::ClientResult> result;  // The plain request's; none with --operation.
  int operation_code = kExitOk;
  if (download) {
    DownloadCommand command;
    command.connector = &connector;
    command.context = &context;
    command.client = options;
    command.request = spec;
    command.url_text = o.url;
    command.url_may_change = o.url_file != nullptr;
    command.checkpoint = o.retry.profile->checkpoint;
    command.max_rate = o.retry.limit_rate;
    command.range_size = o.range_size;
    command.network_type = o.retry.network_type;
    command.defer_after = o.retry.defer_after;
    command.interface = o.retry.interface;
    command.output = o.output;
    command.state = o.state;
    command.reporter = &reporter;
    command.prefix = kPrefix;
    command.trace = o.trace;
    command.start = start;
    return run_download_command(command);
  }
  if (o.operation) {
    // A create that names its resource (?instanceId=) cannot make a second one: it may be
    // re-sent after a lost answer, and a 409 then says the first one landed.
    if (spec.idempotency == https::RequestSpec::Idempotency::kByMethod &&
        spec.head.method == "POST" && transfer::names_its_resource(url.target)) {
      spec.idempotency = https::RequestSpec::Idempotency::kYes;
    }
    OperationCommand command;
    command.connector = &connector;
    command.context = &context;
    command.client = options;
    command.mutation = spec;
    command.polling = polling_for(*o.retry.profile, o.retry.deadline);
    command.reporter = &reporter;
    command.output = &output;
    command.trace = o.trace;
    command.countdown = ::isatty(STDERR_FILENO) == 1;
    command.start = start;
    command.prefix = kPrefix;
    operation_code = run_operation_command(command);
    if (operation_code == kExitUsage) return kExitUsage;
  } else {
    https::Client client(connector, context, options);
    reporter.attach(&client);
    const https::Status started = client.start(spec);
    if (started != https::Status::kOk) {
      std::fprintf(stderr, "%s%s\n", kPrefix,
                   started == https::Status::kBufferTooSmall
                       ? request_head_too_large()
                       : "invalid request: check the method (-X), the headers (-H) and the URL");
      return kExitUsage;
    }
    result = run_client(client, reporter, nullptr);
    show_last_error_body(
        *result, client.error_body(),
        o.trace ? std::optional<Millis>(platform::monotonic_now() - start) : std::nullopt);
  }
  finish_output(&output, o.output != nullptr, kPrefix,
                via_part ? part.c_str() : (o.output != nullptr ? o.output : "stdout"));
  const int code = result ? exit_code(*result, output.failed)
                          : (output.failed ? static_cast<int>(kExitLocalIo) : operation_code);
  if (via_part) {
    if (code == kExitOk && std::rename(part.c_str(), o.output) != 0) {
      std::fprintf(stderr, "%scannot rename '%s' to '%s': %s\n", kPrefix, part.c_str(), o.output,
                   std::strerror(errno));
      (void)std::remove(part.c_str());
      return kExitLocalIo;
    }
    if (code != kExitOk) (void)std::remove(part.c_str());
  }
  return code;
}

}  // namespace stepback::tools

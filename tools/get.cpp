#include "get.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client_loop.hpp"
#include "curl_habits.hpp"
#include "get_args.hpp"
#include "get_download.hpp"
#include "get_operation.hpp"
#include "get_sources.hpp"
#include "head_tap.hpp"
#include "output.hpp"
#include "request_flags.hpp"
#include "response_gate.hpp"
#include "stack.hpp"
#include "stepback/core/budget.hpp"
#include "stepback/core/rate_limit.hpp"
#include "stepback/core/retry_machine.hpp"
#include "stepback/https/detail/text.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/transfer/operation.hpp"

namespace stepback::tools {
namespace {

constexpr const char* kPrefix = "stepback get: ";

// --url-file's URL: read once before the request, and again when it expires.
UrlFile g_url_file;

// Says `error` on stderr and returns `code`.
int fail(int code, const std::string& error) {
  std::fprintf(stderr, "%s%s\n", kPrefix, error.c_str());
  return code;
}

// The URL of the request, from argv or --url-file, in *url; kExitOk or kExitUsage, said.
int take_url(GetOptions* o, https::Url* url) {
  if (o->url_file != nullptr) {
    g_url_file.path = o->url_file;
    if (!read_url_file(&g_url_file)) {
      std::fprintf(stderr, "%scannot read a URL from --url-file '%s' (its first line)\n", kPrefix,
                   o->url_file);
      return kExitUsage;
    }
    // The request's URL views into a copy that stays: g_url_file.current changes on refresh.
    static char first_url[sizeof g_url_file.current];
    std::memcpy(first_url, g_url_file.current, g_url_file.size);
    o->url = std::string_view(first_url, g_url_file.size);
  }
  if (https::parse_url(o->url, url) != https::Status::kOk) {
    std::fprintf(stderr, "%sinvalid URL '%s' (expected https://host[:port]/path)\n", kPrefix,
                 std::string(o->url).c_str());
    return kExitUsage;
  }
  if (o->remote_name) {
    // -O: -o with the name the URL ends in (the first URL's, with --url-file).
    static std::string name;
    std::string error;
    const std::optional<std::string> taken = remote_file_name(url->target, &error);
    if (!taken) return fail(kExitUsage, error);
    name = *taken;
    o->output = name.c_str();
  }
  return kExitOk;
}

// The flags that are only for a download; kExitOk or kExitUsage, said.
int check_download_flags(const GetOptions& o, bool download) {
  if (o.retry.defer_after && !download) {
    std::fprintf(stderr, "%s--defer-after is for a GET (a download), not this request\n", kPrefix);
    return kExitUsage;
  }
  if (o.range_size > 0 && !download) {
    std::fprintf(stderr, "%s--range-size is for a GET (a download), not this request\n", kPrefix);
    return kExitUsage;
  }
  return kExitOk;
}

// What `stepback get` sends through, as its flags say.
StackSpec stack_spec(const GetOptions& o, const https::Url& url, const ProxySetup& proxy) {
  StackSpec spec;
  spec.tls = url.tls;
  spec.trust = &o.trust;
  spec.pins = o.pins;
  spec.pin_count = o.pin_count;
  spec.dns_servers = o.dns_servers;
  spec.system_resolver = o.system_resolver;
  spec.proxy = &proxy;
  spec.binding = &o.retry;
  return spec;
}

// What the Client's options point to: the --limit-rate buckets and the token source.
struct ClientRoom {
  explicit ClientRoom(const GetOptions& o)
      : receive_limit(o.retry.limit_rate, default_burst(o.retry.limit_rate)),
        send_limit(o.retry.limit_rate, default_burst(o.retry.limit_rate)),
        tokens{o.bearer, o.token_file} {}
  RateLimiter receive_limit;
  RateLimiter send_limit;
  TokenSource tokens;
};

// The Client's options for every request `stepback get` makes: the plain one, the download,
// the operation's. Events and the plain request's body go through `gate` (-f, -i).
https::ClientOptions client_options(const GetOptions& o, bool download, BodyOutput* output,
                                    const Reporter& reporter, ResponseGate* gate,
                                    ClientRoom* room) {
  https::ClientOptions options;
  options.timeouts = make_timeouts(o.retry);
  options.network = o.retry.network;
  options.buffers = client_buffers();
  // A download gives the gate its own sink (get_download.cpp).
  options.body = download ? body_sink(output) : gate->sink(body_sink(output));
  options.events = gate->events();
  options.progress = reporter.progress_policy();
  options.wall_now = &platform::wall_now;
  options.max_time = o.max_time;
  options.max_redirects = o.max_redirects.value_or(o.retry.profile->max_redirects);
  options.redirect_url = redirect_buffer();
  // --limit-rate for requests that are not a download (which paces itself: max_rate), in
  // each direction, as curl's.
  if (o.retry.limit_rate > 0 && !download) {
    options.receive_limit = &room->receive_limit;
    options.send_limit = &room->send_limit;
  }
  if (o.url_file != nullptr) {
    options.url_refresh = https::UrlRefresh{&fresh_url_from_file, &g_url_file};
  }
  if (o.bearer != nullptr || o.token_file != nullptr) {
    options.credentials = https::Credentials{&token_authorization, &room->tokens};
  }
  return options;
}

// The request's head and body as the flags say; it views `body` and `headers` (room for
// kMaxGetHeaders + 1), which must outlive it.
https::RequestSpec request_spec(const GetOptions& o, const https::Url& url, std::string_view method,
                                const https::ConstBytes* body, https::Header* headers) {
  https::RequestSpec spec;
  spec.head.method = method;
  spec.head.url = url;
  spec.head.user_agent = o.user_agent;
  spec.head.host = o.host;
  // A body without a declared type is declared, never left for the server to guess.
  std::size_t header_count = 0;
  bool has_type = false;
  for (std::size_t i = 0; i < o.header_count; ++i) {
    headers[header_count++] = o.headers[i];
    has_type |= https::detail::iequals(o.headers[i].name, "content-type");
  }
  // curl's type for -d and --data-binary (a mutation of a Google API takes JSON).
  if (o.has_data() && !has_type) {
    headers[header_count++] = {
        "Content-Type", o.operation ? "application/json" : "application/x-www-form-urlencoded"};
  }
  spec.head.headers = headers;
  spec.head.header_count = header_count;
  spec.body = https::BodySource::of(body);
  spec.idempotency = o.retry.idempotency;
  return spec;
}

// What run_get() hands to each kind of request.
struct Prepared {
  const GetOptions& o;
  https::Connector& connector;
  const RetryContext& context;
  const https::ClientOptions& options;
  const https::RequestSpec& spec;
  Reporter& reporter;
  ResponseGate& gate;
  Millis start;
};

// A plain GET: a transfer::Download (get_download.cpp), which opens its own output.
int run_download(const Prepared& p) {
  DownloadCommand command;
  command.connector = &p.connector;
  command.context = &p.context;
  command.client = p.options;
  command.request = p.spec;
  command.url_text = p.o.url;
  command.url_may_change = p.o.url_file != nullptr;
  command.checkpoint = p.o.retry.profile->checkpoint;
  command.max_rate = p.o.retry.limit_rate;
  command.range_size = p.o.range_size;
  command.network_type = p.o.retry.network_type;
  command.defer_after = p.o.retry.defer_after;
  command.interface = p.o.retry.interface;
  command.output = p.o.output;
  command.state = p.o.state;
  command.reporter = &p.reporter;
  command.gate = &p.gate;
  command.fail = p.o.fail || p.o.fail_with_body;
  command.silent = p.o.silent;
  command.prefix = kPrefix;
  command.trace = p.o.trace;
  command.start = p.start;
  return run_download_command(command);
}

// --operation: the mutation, then its operation followed until done; the exit code.
int run_operation(const Prepared& p, BodyOutput* output) {
  OperationCommand command;
  command.connector = &p.connector;
  command.context = &p.context;
  command.client = p.options;
  command.mutation = p.spec;
  // A create that names its resource (?instanceId=) cannot make a second one: it may be
  // re-sent after a lost answer, and a 409 then says the first one landed.
  if (command.mutation.idempotency == https::RequestSpec::Idempotency::kByMethod &&
      command.mutation.head.method == "POST" &&
      transfer::names_its_resource(command.mutation.head.url.target)) {
    command.mutation.idempotency = https::RequestSpec::Idempotency::kYes;
  }
  command.polling = polling_for(*p.o.retry.profile, p.o.retry.deadline);
  command.reporter = &p.reporter;
  command.output = output;
  command.trace = p.o.trace;
  command.countdown = ::isatty(STDERR_FILENO) == 1;
  command.start = p.start;
  command.prefix = kPrefix;
  return run_operation_command(command);
}

// A request that is not a download (--data, -X, --operation), its body to `output`, which
// is then finished: FILE.part renamed over FILE on success, removed otherwise. The exit code.
int run_request(const Prepared& p, const OutputPath& target, BodyOutput* output) {
  std::optional<https::ClientResult> result;  // The plain request's; none with --operation.
  int operation_code = kExitOk;
  if (p.o.operation) {
    operation_code = run_operation(p, output);
    if (operation_code == kExitUsage) return kExitUsage;
  } else {
    https::Client client(p.connector, p.context, p.options);
    p.reporter.attach(&client);
    const https::Status started = client.start(p.spec);
    if (started != https::Status::kOk) {
      p.reporter.attach(nullptr);  // The client goes away with this frame.
      std::fprintf(stderr, "%s%s\n", kPrefix,
                   started == https::Status::kBufferTooSmall
                       ? request_head_too_large()
                       : "invalid request: check the method (-X), the headers (-H) and the URL");
      return kExitUsage;
    }
    result = run_client(client, p.reporter, nullptr);
    show_last_error_body(
        *result, client.error_body(),
        p.o.trace ? std::optional<Millis>(platform::monotonic_now() - p.start) : std::nullopt);
  }
  if (!p.gate.finish()) output->failed = true;  // -I: the head, as no body came.
  target.finish(output, kPrefix);
  int code = result ? exit_code(*result, output->failed)
                    : (output->failed ? static_cast<int>(kExitLocalIo) : operation_code);
  if (result && (p.o.fail || p.o.fail_with_body)) code = fail_exit_code(*result, code);
  if (target.via_part()) {
    if (code == kExitOk && !target.commit(kPrefix)) {
      (void)std::remove(target.part());
      return kExitLocalIo;
    }
    if (code != kExitOk) (void)std::remove(target.part());
  }
  return code;
}

}  // namespace

int run_get(int argc, char** argv) {
  std::string error;
  std::optional<GetOptions> parsed = parse_get_args(argc, argv, &error);
  if (!parsed) return fail(kExitUsage, error);
  GetOptions& o = *parsed;
  if (o.help) {
    print_get_usage(stdout);
    return kExitOk;
  }
  // curl's -k is taken so that a habit does not stop a script, and said even with -s, since
  // what it would have turned off stays on.
  if (o.insecure) std::fprintf(stderr, "%s%s\n", kPrefix, kInsecureWarning);
  https::Url url;
  if (const int code = take_url(&o, &url); code != kExitOk) return code;
  const std::optional<Policy> policy = make_policy(o.retry, &error);
  if (!policy) return fail(kExitUsage, error);
  static ProxySetup proxy;
  if (!make_proxy(o.proxy, url, &proxy, &error)) return fail(kExitUsage, error);

  std::vector<std::uint8_t> body_storage;
  https::ConstBytes body;
  if (!load_data(o.data, o.data_count, &body_storage, &body, &error)) {
    return fail(kExitLocalIo, error);
  }
  const std::string_view method = !o.method.empty() ? o.method
                                  : o.head          ? "HEAD"
                                  : o.has_data()    ? "POST"
                                                    : "GET";
  const bool download = method == "GET" && !o.has_data() && !o.operation;
  if (const int code = check_download_flags(o, download); code != kExitOk) return code;
  // -o FILE, a regular file or a new one: the body goes to FILE.part, renamed over FILE on
  // success only, so a failed run neither leaves a partial FILE nor wipes an existing one.
  // Anything else (/dev/null, a FIFO, a terminal) is written in place and, like stdout,
  // cannot start over.
  const OutputPath target(download ? nullptr : o.output);
  BodyOutput output{stdout};
  if (target.path() != nullptr) {
    if (!target.create(&output, kPrefix)) return kExitLocalIo;
    output.restartable = target.via_part();
  }
  if (!download) buffer_output(&output);

  Stack stack;
  if (const int code = stack.build(stack_spec(o, url, proxy), &error); code != kExitOk) {
    return fail(code, error);
  }
  stack.load_session(o.trust, o.url, kPrefix);
  // -v, -i, -I: the heads, seen on the connection.
  static std::optional<HeadTap> tap;
  https::Connector* connector = &stack.connector();
  if (o.verbose || o.include || o.head) {
    tap.emplace(stack.connector(), o.verbose ? stderr : nullptr);
    connector = &*tap;
  }
  platform::Status random_status = platform::Status::kOk;
  Xoshiro128 random = platform::make_os_random(&random_status);
  RetryBudget budget(o.retry.profile->budget);
  const RetryContext context{*policy, random, &budget};
  const Millis start = platform::monotonic_now();
  // A live line would be torn by -v's lines, and -s has none.
  const bool countdown = ::isatty(STDERR_FILENO) == 1 && !o.verbose && !o.silent;
  Reporter reporter(stderr, o.trace, countdown, kPrefix, start);
  reporter.set_time_limit(o.max_time);
  reporter.set_quiet(o.silent);
  ResponseGate gate({o.fail, o.include || o.head}, tap ? &*tap : nullptr, reporter.sink());
  ClientRoom room(o);
  const https::ClientOptions options = client_options(o, download, &output, reporter, &gate, &room);
  https::Header headers[kMaxGetHeaders + 1];
  const https::RequestSpec spec = request_spec(o, url, method, &body, headers);
  const Prepared prepared{o, *connector, context, options, spec, reporter, gate, start};
  const int code = download ? run_download(prepared) : run_request(prepared, target, &output);
  stack.store_session(kPrefix);
  if (code == kExitHttpFail && !o.trace) {
    // curl says its (22) too: the body it did not write explains nothing on its own.
    std::fprintf(stderr, "%sthe server answered %u: %s, exit 22\n", kPrefix,
                 static_cast<unsigned>(gate.status()),
                 o.fail ? "nothing written (-f)" : "its body written (--fail-with-body)");
  }
  return code;
}

}  // namespace stepback::tools

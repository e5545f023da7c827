// Memorystore for Redis through the library: create an instance, wait for its operation,
// read the instance, delete it and wait again, each step from the same poll() loop.
//
//   example_memorystore [--endpoint URL] [--parent projects/P/locations/L] [--instance ID]
//                       [--cacert FILE] [--token-file FILE]
//
// Defaults: https://redis.googleapis.com, projects/my-project/locations/us-central1, an
// instance named stepback-example, the Debian CA bundle, and no Authorization unless
// --token-file names a file holding an OAuth 2.0 access token (read again before every
// attempt, so `gcloud auth print-access-token > FILE` from a timer keeps it fresh). Against
// the local server (tests/integration/memorystore/memorystore_server.py) see docs/memorystore.md.
// Exits 0 when every step succeeded.
#include <poll.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "stepback/core/polling.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/dns/cares_resolver.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls_arena.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"
#include "stepback/transfer/operation.hpp"

namespace {

namespace https = stepback::https;
namespace transfer = stepback::transfer;

alignas(16) std::uint8_t g_tls_arena[512 * 1024];
std::uint8_t g_request[4 * 1024];
std::uint8_t g_response_head[8 * 1024];
std::uint8_t g_io[16 * 1024];
std::uint8_t g_error_body[2 * 1024];
std::uint8_t g_operation[32 * 1024];  // The latest Operation, whole.
char g_url[1024];

// The token of --token-file, read again before every attempt; "Bearer TOKEN" into `out`.
std::size_t authorization(void* context, bool /*refresh*/, https::MutableBytes out) {
  const char* path = static_cast<const char*>(context);
  std::FILE* in = std::fopen(path, "rb");
  if (in == nullptr) return 0;
  static char token[4096];
  std::size_t n = std::fread(token, 1, sizeof token, in);
  std::fclose(in);
  while (n > 0 && (token[n - 1] == '\n' || token[n - 1] == '\r' || token[n - 1] == ' ')) --n;
  static constexpr char kScheme[] = "Bearer ";
  const std::size_t size = sizeof kScheme - 1 + n;
  if (n == 0 || size > out.size) return n == 0 ? 0 : size;
  std::memcpy(out.data, kScheme, sizeof kScheme - 1);
  std::memcpy(out.data + sizeof kScheme - 1, token, n);
  return size;
}

// The latest read of the instance, whole.
struct InstanceBody {
  char text[16 * 1024];
  std::size_t size = 0;
};

bool keep_body(void* context, std::uint64_t offset, https::ConstBytes data) {
  auto* body = static_cast<InstanceBody*>(context);
  if (offset > sizeof body->text || data.size > sizeof body->text - offset) return false;
  std::memcpy(body->text + offset, data.data, data.size);
  body->size = static_cast<std::size_t>(offset) + data.size;
  return true;
}

bool restart_body(void* context) {
  static_cast<InstanceBody*>(context)->size = 0;
  return true;
}

// Whether the Instance JSON in `body` has "state": "CREATING" (a plain scan, enough for an
// example: the key is unique in an Instance and its value a bare enum name).
bool is_creating(std::string_view body) {
  const std::size_t key = body.find("\"state\"");
  if (key == std::string_view::npos) return false;
  std::size_t i = key + 7;
  while (i < body.size() && (body[i] == ' ' || body[i] == ':' || body[i] == '\n')) ++i;
  return body.substr(i, 10) == "\"CREATING\"";
}

void print_request_event(void* /*context*/, const https::ClientEvent& e) {
  if (e.kind == https::ClientEvent::Kind::kResponse && e.status / 100 != 2) {
    std::fprintf(stderr, "  attempt %u: HTTP %u\n", e.attempt, static_cast<unsigned>(e.status));
  } else if (e.kind == https::ClientEvent::Kind::kError) {
    std::fprintf(stderr, "  attempt %u: %s\n", e.attempt, e.message);
  } else if (e.kind == https::ClientEvent::Kind::kWait) {
    std::fprintf(stderr, "  retrying in %.2f s\n", static_cast<double>(e.wait.count()) / 1000.0);
  }
}

void print_operation_event(void* /*context*/, const transfer::OperationEvent& e) {
  using Kind = transfer::OperationEvent::Kind;
  if (e.kind == Kind::kOperation) {
    std::fprintf(stderr, "  operation %.*s (%.*s)\n", static_cast<int>(e.name.size()),
                 e.name.data(), static_cast<int>(e.verb.size()), e.verb.data());
  } else if (e.kind == Kind::kPolled && e.done) {
    std::fprintf(stderr, "  poll %u: done\n", e.poll);
  } else if (e.kind == Kind::kPolled) {
    std::fprintf(stderr, "  poll %u: not done: %.*s\n", e.poll,
                 static_cast<int>(e.status_detail.size()), e.status_detail.data());
  }
}

// Steps `task` (a Client or an Operation: both answer step(now) with a ClientNext) from a
// poll() loop until it is done.
template <typename Task>
void run(Task& task) {
  stepback::Millis now = stepback::platform::monotonic_now();
  for (https::ClientNext next = task.step(now); next.kind != https::ClientNext::Kind::kDone;
       next = task.step(now)) {
    https::poll_wait(next, now);
    now = stepback::platform::monotonic_now();
  }
}

// endpoint + "/v1/" + parent + "/instances" + tail, into g_url.
bool make_url(std::string_view endpoint, std::string_view parent, const char* tail,
              https::Url* url) {
  const int n = std::snprintf(g_url, sizeof g_url, "%.*s/v1/%.*s/instances%s",
                              static_cast<int>(endpoint.size()), endpoint.data(),
                              static_cast<int>(parent.size()), parent.data(), tail);
  return n > 0 && static_cast<std::size_t>(n) < sizeof g_url &&
         https::parse_url(g_url, url) == https::Status::kOk;
}

// Follows one mutation to its end; true when the operation succeeded (or, for the create,
// when the instance turned out to exist already).
bool mutate(const char* what, https::Connector& connector, const stepback::RetryContext& context,
            const transfer::OperationOptions& options, const transfer::OperationSpec& spec) {
  std::fprintf(stderr, "%s\n", what);
  transfer::Operation op(connector, context, options);
  if (op.start(spec) != https::Status::kOk) {
    std::fprintf(stderr, "  invalid request\n");
    return false;
  }
  run(op);
  const transfer::OperationResult& r = op.result();
  switch (r.outcome) {
    case transfer::OperationOutcome::kSucceeded:
      std::fprintf(stderr, "  done after %u poll(s)\n", r.polls);
      return true;
    case transfer::OperationOutcome::kAlreadyExists:
      // Our own earlier attempt may have made it (its answer lost), or someone else did:
      // either way the next step reads it.
      std::fprintf(stderr, "  %s\n", r.message);
      return true;
    case transfer::OperationOutcome::kFailed:
      std::fprintf(stderr, "  the operation failed: %d %s: %.*s\n", static_cast<int>(r.error.code),
                   r.error.code_name, static_cast<int>(r.error.message.size()),
                   r.error.message.data());
      return false;
    default:
      std::fprintf(stderr, "  %s: %s (%s, HTTP %u)\n", transfer::to_string(r.outcome), r.message,
                   stepback::to_string(r.request.outcome), static_cast<unsigned>(r.request.status));
      return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view endpoint = "https://redis.googleapis.com";
  std::string_view parent = "projects/my-project/locations/us-central1";
  std::string_view instance = "stepback-example";
  const char* ca_file = "/etc/ssl/certs/ca-certificates.crt";
  const char* token_file = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--endpoint") {
      endpoint = argv[i + 1];
    } else if (flag == "--parent") {
      parent = argv[i + 1];
    } else if (flag == "--instance") {
      instance = argv[i + 1];
    } else if (flag == "--cacert") {
      ca_file = argv[i + 1];
    } else if (flag == "--token-file") {
      token_file = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }

  // Set-up, once: the TLS arena before any mbedTLS call, then TLS and its trust anchors.
  https::TlsClientConfig tls;
  if (https::tls_arena_init(g_tls_arena, sizeof g_tls_arena) != https::Status::kOk ||
      tls.init() != https::Status::kOk || tls.add_ca_file(ca_file) != https::Status::kOk) {
    std::fprintf(stderr, "cannot set up TLS with CA file %s\n", ca_file);
    return 1;
  }
  const stepback::profiles::DeviceProfile& profile = stepback::profiles::active;
  stepback::platform::Status random_status{};
  stepback::Xoshiro128 random = stepback::platform::make_os_random(&random_status);
  stepback::RetryBudget budget(profile.budget);
  const stepback::RetryContext context{profile.retry, random, &budget};
  // The resolver reads resolv.conf once, here, outside the loop (a failure is reported by
  // the first lookup, with why; numeric hosts need no lookup).
  https::CaresResolver resolver;
  (void)resolver.init(https::CaresOptions{});
  https::TcpTlsConnector connector(tls, resolver);

  https::ClientOptions client;
  client.timeouts = profile.timeouts;
  client.buffers = https::ClientBuffers{{g_request, sizeof g_request},
                                        {g_response_head, sizeof g_response_head},
                                        {g_io, sizeof g_io},
                                        {g_error_body, sizeof g_error_body}};
  client.events = https::EventSink{&print_request_event, nullptr};
  client.wall_now = &stepback::platform::wall_now;
  if (token_file != nullptr) {
    client.credentials = https::Credentials{&authorization, const_cast<char*>(token_file)};
  }
  transfer::OperationOptions options;
  options.client = client;
  options.operation_buffer = https::MutableBytes{g_operation, sizeof g_operation};
  options.polling = profile.polling;
  options.events = transfer::OperationEventSink{&print_operation_event, nullptr};

  const https::Header json[] = {{"Content-Type", "application/json"}};
  char tail[128];

  // 1. Create: POST .../instances?instanceId=ID. The create names its instance, so it may be
  // re-sent after a lost answer (a second create cannot make a second instance).
  static const char kInstance[] = R"({"tier":"BASIC","memorySizeGb":1,"redisVersion":"REDIS_7_0"})";
  const https::ConstBytes instance_body{reinterpret_cast<const std::uint8_t*>(kInstance),
                                        sizeof kInstance - 1};
  transfer::OperationSpec create;
  std::snprintf(tail, sizeof tail, "?instanceId=%.*s", static_cast<int>(instance.size()),
                instance.data());
  if (!make_url(endpoint, parent, tail, &create.mutation.head.url)) {
    std::fprintf(stderr, "bad --endpoint, --parent or --instance\n");
    return 2;
  }
  create.mutation.head.method = "POST";
  create.mutation.head.headers = json;
  create.mutation.head.header_count = 1;
  create.mutation.body = https::BodySource::of(&instance_body);
  create.mutation.idempotency = transfer::names_its_resource(create.mutation.head.url.target)
                                    ? https::RequestSpec::Idempotency::kYes
                                    : https::RequestSpec::Idempotency::kByMethod;
  if (!mutate("creating the instance", connector, context, options, create)) return 1;

  // 2. Read it: a plain GET with retries, the instance's JSON to stdout. After a 409 the
  // instance may still be CREATING (our own lost create is running): read it again, at the
  // polling policy's pace, until it is not.
  std::fprintf(stderr, "reading the instance\n");
  https::RequestSpec get;
  std::snprintf(tail, sizeof tail, "/%.*s", static_cast<int>(instance.size()), instance.data());
  if (!make_url(endpoint, parent, tail, &get.head.url)) return 2;
  static InstanceBody body;
  https::ClientOptions read = client;
  read.body = https::ResponseSink{&keep_body, &restart_body, &body};
  const stepback::Millis started = stepback::platform::monotonic_now();
  stepback::Millis previous = profile.polling.initial_delay;
  for (std::uint32_t n = 0;; ++n) {
    body.size = 0;
    https::Client reader(connector, context, read);
    if (reader.start(get) != https::Status::kOk) return 1;
    run(reader);
    if (reader.result().outcome != stepback::Outcome::kSuccess) {
      std::fprintf(stderr, "  %s, HTTP %u\n", stepback::to_string(reader.result().outcome),
                   static_cast<unsigned>(reader.result().status));
      return 1;
    }
    std::fprintf(stderr, "  read after %u attempt(s)\n", reader.result().attempts);
    if (!is_creating(std::string_view(body.text, body.size))) break;
    const stepback::Millis wait = stepback::polling_wait(profile.polling, n, previous, random);
    previous = wait;
    const stepback::Millis now = stepback::platform::monotonic_now();
    if (profile.polling.total_deadline.count() > 0 &&
        now + wait - started > profile.polling.total_deadline) {
      std::fprintf(stderr, "  still CREATING at the polling deadline\n");
      return 1;
    }
    std::fprintf(stderr, "  still CREATING, reading again in %.2f s\n",
                 static_cast<double>(wait.count()) / 1000.0);
    (void)::poll(nullptr, 0, static_cast<int>(wait.count()));
  }
  std::fwrite(body.text, 1, body.size, stdout);
  std::fflush(stdout);

  // 3. Delete: DELETE .../instances/ID, and wait for that operation too.
  transfer::OperationSpec remove;
  remove.mutation.head.method = "DELETE";
  remove.mutation.head.url = get.head.url;
  if (!mutate("deleting the instance", connector, context, options, remove)) return 1;
  return 0;
}

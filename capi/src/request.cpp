// stepback_request: one https::Client with the profile's options, its buffers and its
// retry context in the caller's storage.
#include <cstring>
#include <string_view>

#include "adapters.hpp"
#include "full.hpp"
#include "stepback/app/defaults.hpp"
#include "stepback/app/https_stack.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/http/url.hpp"
#include "stepback/stepback.h"
#include "storage.hpp"

namespace {

namespace capi = stepback::capi;
namespace https = stepback::https;

struct Request {
  Request(stepback::app::HttpsStack& stack, const stepback_options* c)
      : ok(settings.set(c, &why)), client(stack.connector(), settings.retry.context, options()) {}
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  https::ClientOptions options() {
    https::ClientOptions o = settings.client(buffers, this);
    o.body = capi::sink_of(&sink);
    o.events = https::EventSink{&on_event, this};
    return o;
  }
  static void on_event(void* self, const https::ClientEvent& e) {
    capi::emit(static_cast<Request*>(self)->settings.options, e);
  }

  capi::Settings settings;
  const char* why = "";
  bool ok;
  stepback::app::Buffers buffers{};
  https::Client client;
  https::RequestSpec spec;
  stepback_source source{};
  stepback_sink sink{};
  char url[2048] = {};
  char method[32] = {};
  bool started = false;
};

static_assert(capi::footprint<Request>() <= STEPBACK_REQUEST_SIZE,
              "STEPBACK_REQUEST_SIZE is too small for the request");

Request* self(stepback_request* r) { return capi::place<Request>(r); }
const Request* self(const stepback_request* r) { return capi::place<Request>(r); }

}  // namespace

extern "C" {

stepback_status stepback_request_init(stepback_request* request, size_t size, stepback_stack* stack,
                                      const stepback_options* options) {
  if (stack == nullptr) return STEPBACK_E_INVALID_ARGUMENT;
  Request* made = nullptr;
  const stepback_status placed = capi::construct(
      request, size, &made, *capi::place<stepback::app::HttpsStack>(stack), options);
  if (placed != STEPBACK_OK) return placed;
  if (!made->ok) return STEPBACK_E_INVALID_ARGUMENT;
  return STEPBACK_OK;
}

stepback_status stepback_request_start(stepback_request* request, const char* method,
                                       const char* url, const stepback_source* body,
                                       const stepback_sink* response) {
  Request* r = self(request);
  r->started = false;
  if (!r->ok) return STEPBACK_E_STATE;
  if (method == nullptr || !capi::copy_text(method, r->method, sizeof r->method) ||
      !capi::copy_text(url, r->url, sizeof r->url)) {
    r->why = "no method or URL, or one longer than this object holds";
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  https::RequestSpec spec;
  if (https::parse_url(r->url, &spec.head.url) != https::Status::kOk) {
    r->why = "not an http(s) URL";
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  if ((body != nullptr && body->read == nullptr) ||
      (response != nullptr && response->write == nullptr)) {
    r->why = "a body source without read() or a sink without write()";
    return STEPBACK_E_INVALID_ARGUMENT;
  }
  const stepback_options& o = r->settings.options;
  spec.head.method = r->method;
  spec.head.user_agent = o.user_agent != nullptr ? o.user_agent : "";
  spec.head.headers = r->settings.headers;
  spec.head.header_count = r->settings.header_count;
  spec.idempotency = static_cast<https::RequestSpec::Idempotency>(o.idempotency);
  if (body != nullptr) {
    r->source = *body;
    spec.body = capi::source_of(&r->source);
  }
  // The sink is the client's option, fixed at init: its adapter reads r->sink at each write.
  r->sink = response != nullptr ? *response : stepback_sink{};
  r->spec = spec;
  r->why = "";
  const https::Status s = r->client.start(r->spec);
  if (s != https::Status::kOk) {
    r->why = "the request was refused (a bad method, header or URL, or buffers too small)";
    return capi::to_c(s);
  }
  r->started = true;
  return STEPBACK_OK;
}

stepback_next_kind stepback_request_step(stepback_request* request, int64_t now_ms,
                                         stepback_next* next) {
  Request* r = self(request);
  if (!r->started) return capi::answer(https::ClientNext{}, next);
  return capi::answer(r->client.step(capi::to_millis(now_ms)), next);
}

void stepback_request_cancel(stepback_request* request) { self(request)->client.cancel(); }

void stepback_request_network_available(stepback_request* request, int64_t now_ms) {
  self(request)->client.network_available(capi::to_millis(now_ms));
}

void stepback_request_result(const stepback_request* request, stepback_result* result) {
  capi::to_c(self(request)->client.result(), result);
}

int32_t stepback_request_header(const stepback_request* request, const char* name, char* out,
                                size_t out_size) {
  if (name == nullptr || out == nullptr) return -1;
  const auto value = self(request)->client.response_header(name);
  if (!value || value->size() >= out_size || value->size() > INT32_MAX) return -1;
  std::memcpy(out, value->data(), value->size());
  out[value->size()] = '\0';
  return static_cast<int32_t>(value->size());
}

const char* stepback_request_message(const stepback_request* request) {
  const Request* r = self(request);
  if (r->why[0] != '\0') return r->why;
  return r->started ? r->client.result().message : "";
}

void stepback_request_destroy(stepback_request* request) { self(request)->~Request(); }

}  // extern "C"

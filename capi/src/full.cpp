// The full C API's shared parts (full.hpp), the clocks, poll(), the profile and the stack.
#include "full.hpp"

#include <cstring>
#include <new>
#include <string_view>

#include "policy.hpp"
#include "stepback/app/https_stack.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/platform/clock.hpp"
#include "stepback/platform/random.hpp"
#include "stepback/profiles/active.hpp"
#include "storage.hpp"

namespace stepback::capi {

static_assert(footprint<app::HttpsStack>() <= STEPBACK_STACK_SIZE,
              "STEPBACK_STACK_SIZE is too small for app::HttpsStack");
static_assert(static_cast<int>(https::Status::kProxyAuth) == STEPBACK_E_PROXY_AUTH);
static_assert(static_cast<int>(https::Status::kWouldBlock) == STEPBACK_E_WOULD_BLOCK);
// to_c(RunHint) casts the state.
static_assert(static_cast<int>(https::RunHint::State::kDone) == STEPBACK_RUN_DONE);
static_assert(static_cast<int>(https::RunHint::State::kDeferred) == STEPBACK_RUN_DEFERRED);

stepback_status to_c(https::Status s) {
  if (s == https::Status::kOk) return STEPBACK_OK;
  if (s == https::Status::kError) return STEPBACK_E_ERROR;
  return static_cast<stepback_status>(s);
}

bool RetryParts::set(const stepback_policy* c) {
  if (c == nullptr) {
    policy = profiles::active.retry;
  } else if (!policy_from_c(*c, &policy)) {
    return false;
  }
  // The OS's seed; without one the clocks', as app::RetrySetup does (usable, if alike
  // across a fleet started together).
  std::uint64_t seed = 0;
  if (platform::os_seed(&seed) != platform::Status::kOk) {
    seed = platform::wall_now().count() ^ (platform::monotonic_now().count() << 20);
  }
  random = Xoshiro128(seed);
  return true;
}

bool Settings::set(const stepback_options* c, const char** why) {
  if (c == nullptr) {
    stepback_options_default(&options);
  } else {
    options = *c;
  }
  if (options.header_count > STEPBACK_MAX_HEADERS ||
      (options.header_count > 0 && options.headers == nullptr)) {
    *why = "more header fields than STEPBACK_MAX_HEADERS, or none where a count is given";
    return false;
  }
  if (options.max_redirects > 255 || options.max_time_ms < 0 ||
      static_cast<unsigned>(options.idempotency) > STEPBACK_IDEMPOTENT_NO) {
    *why = "max_redirects above 255, a negative max_time_ms or an unknown idempotency";
    return false;
  }
  header_count = options.header_count;
  for (std::size_t i = 0; i < header_count; ++i) {
    const stepback_header& h = options.headers[i];
    if (h.name == nullptr || h.value == nullptr) {
      *why = "a header field without a name or a value";
      return false;
    }
    headers[i] = https::Header{h.name, h.value};
  }
  if (!retry.set(options.policy)) {
    *why = "the policy is not valid (see stepback_policy_valid)";
    return false;
  }
  options.policy = nullptr;  // Copied into retry.policy; the caller's need not live on.
  return true;
}

https::ClientOptions Settings::client(app::Buffers& buffers, void* event_context) {
  https::ClientOptions o = app::client_options(buffers);
  o.max_redirects = static_cast<std::uint8_t>(options.max_redirects);
  if (options.max_time_ms > 0) o.max_time = Millis(static_cast<std::uint64_t>(options.max_time_ms));
  (void)event_context;
  return o;
}

namespace {

stepback_event base_event(stepback_event_kind kind, Millis at) {
  stepback_event c{};
  c.kind = kind;
  c.total = STEPBACK_UNKNOWN;
  c.at_ms = from_millis(at);
  c.message = "";
  return c;
}

// A string view as a NUL-terminated message, cut to what `out` holds.
const char* terminated(std::string_view text, char* out, std::size_t size) {
  const std::size_t n = text.size() < size - 1 ? text.size() : size - 1;
  if (n > 0) std::memcpy(out, text.data(), n);
  out[n] = '\0';
  return out;
}

stepback_event_kind kind_of(https::ClientEvent::Kind k) {
  using K = https::ClientEvent::Kind;
  switch (k) {
    case K::kAttempt:
      return STEPBACK_EVENT_ATTEMPT;
    case K::kResponse:
      return STEPBACK_EVENT_RESPONSE;
    case K::kError:
      return STEPBACK_EVENT_ERROR;
    case K::kWait:
      return STEPBACK_EVENT_WAIT;
    case K::kResume:
      return STEPBACK_EVENT_RESUME;
    case K::kIntegrity:
      return STEPBACK_EVENT_INTEGRITY;
    case K::kRedirect:
      return STEPBACK_EVENT_REDIRECT;
    case K::kUrlRefresh:
      return STEPBACK_EVENT_OTHER;
    case K::kProgress:
      return STEPBACK_EVENT_PROGRESS;
    case K::kDone:
      return STEPBACK_EVENT_DONE;
  }
  return STEPBACK_EVENT_OTHER;
}

}  // namespace

void emit(const stepback_options& sink, const https::ClientEvent& e) {
  if (sink.on_event == nullptr) return;
  stepback_event c = base_event(kind_of(e.kind), e.at);
  char text[512];  // Reasons and URLs are views, not C strings: copied, cut to this.
  c.attempt = e.attempt;
  c.http_status = e.status;
  c.failure = static_cast<stepback_failure>(e.failure);
  c.outcome = static_cast<stepback_outcome>(e.outcome);
  c.wait_ms = from_millis(e.wait);
  c.message = e.message != nullptr ? e.message : "";
  if (e.kind == https::ClientEvent::Kind::kResponse)
    c.message = terminated(e.reason, text, sizeof text);
  if (e.kind == https::ClientEvent::Kind::kRedirect ||
      e.kind == https::ClientEvent::Kind::kUrlRefresh) {
    c.message = terminated(e.url, text, sizeof text);
  }
  if (e.kind == https::ClientEvent::Kind::kResume) c.bytes = e.offset;
  if (e.kind == https::ClientEvent::Kind::kProgress) {
    c.bytes = e.bytes;
    c.total = e.total ? *e.total : STEPBACK_UNKNOWN;
    c.rate = e.rate;
  }
  sink.on_event(sink.event_context, &c);
}

void emit(const stepback_options& sink, const transfer::UploadEvent& e) {
  if (sink.on_event == nullptr) return;
  using K = transfer::UploadEvent::Kind;
  stepback_event_kind kind = STEPBACK_EVENT_OTHER;
  switch (e.kind) {
    case K::kSession:
    case K::kChunk:
    case K::kQuery:
      kind = STEPBACK_EVENT_ATTEMPT;
      break;
    case K::kResponse:
      kind = STEPBACK_EVENT_RESPONSE;
      break;
    case K::kError:
      kind = STEPBACK_EVENT_ERROR;
      break;
    case K::kCommitted:
      kind = STEPBACK_EVENT_COMMITTED;
      break;
    case K::kWait:
      kind = STEPBACK_EVENT_WAIT;
      break;
    case K::kExpired:
      kind = STEPBACK_EVENT_EXPIRED;
      break;
    case K::kProgress:
      kind = STEPBACK_EVENT_PROGRESS;
      break;
    case K::kDone:
      kind = STEPBACK_EVENT_DONE;
      break;
  }
  stepback_event c = base_event(kind, e.at);
  char text[128];
  c.attempt = e.exchange;
  c.http_status = e.status;
  c.failure = static_cast<stepback_failure>(e.failure);
  c.outcome = static_cast<stepback_outcome>(e.outcome);
  c.wait_ms = from_millis(e.wait);
  c.bytes = e.offset;
  c.message = e.message != nullptr ? e.message : "";
  if (e.kind == K::kResponse) c.message = terminated(e.reason, text, sizeof text);
  if (e.kind == K::kChunk) c.total = e.size;
  if (e.kind == K::kProgress) {
    c.total = e.size != 0 ? e.size : STEPBACK_UNKNOWN;
    c.rate = e.rate;
  }
  sink.on_event(sink.event_context, &c);
}

void emit_checkpoint(const stepback_options& sink, Millis at, std::uint64_t delivered) {
  if (sink.on_event == nullptr) return;
  stepback_event c = base_event(STEPBACK_EVENT_CHECKPOINT, at);
  c.bytes = delivered;
  sink.on_event(sink.event_context, &c);
}

stepback_next_kind answer(const https::ClientNext& n, stepback_next* out) {
  stepback_next c{};
  c.fd = -1;
  c.outcome = STEPBACK_OUTCOME_CANCELLED;
  switch (n.kind) {
    case https::ClientNext::Kind::kWaitIo:
      c.kind = STEPBACK_NEXT_WAIT_IO;
      c.fd = n.fd;
      c.want_read = (static_cast<unsigned>(n.interest) & 1u) != 0;
      c.want_write = (static_cast<unsigned>(n.interest) & 2u) != 0;
      c.at_ms = from_millis(n.at);
      break;
    case https::ClientNext::Kind::kWaitUntil:
      c.kind = STEPBACK_NEXT_WAIT_UNTIL;
      c.at_ms = from_millis(n.at);
      break;
    case https::ClientNext::Kind::kDone:
      c.kind = STEPBACK_NEXT_DONE;
      break;
  }
  if (out != nullptr) *out = c;
  return c.kind;
}

https::ClientNext from_c(const stepback_next* next) {
  if (next == nullptr) return https::ClientNext{};
  const Millis at = next->at_ms == STEPBACK_NEVER ? Millis::max() : to_millis(next->at_ms);
  switch (next->kind) {
    case STEPBACK_NEXT_WAIT_IO: {
      const unsigned bits = (next->want_read ? 1u : 0u) | (next->want_write ? 2u : 0u);
      return https::ClientNext::wait_io(next->fd, static_cast<https::IoInterest>(bits), at);
    }
    case STEPBACK_NEXT_SEND:
    case STEPBACK_NEXT_WAIT_UNTIL:
      return https::ClientNext::wait_until(at);
    case STEPBACK_NEXT_DONE:
      break;
  }
  return https::ClientNext{};
}

void to_c(const https::RunHint& h, stepback_run_hint* out) {
  if (out == nullptr) return;
  stepback_run_hint c{};
  c.state = static_cast<stepback_run_state>(h.state);
  c.run_at_ms = from_millis(h.run_at);
  c.unmetered = h.unmetered;
  c.not_roaming = h.not_roaming;
  c.bytes_left = h.bytes_left ? *h.bytes_left : STEPBACK_UNKNOWN;
  *out = c;
}

void to_c(const https::ClientResult& r, stepback_result* out) {
  if (out == nullptr) return;
  stepback_result c{};
  c.outcome = static_cast<stepback_outcome>(r.outcome);
  c.http_status = r.status;
  c.error = to_c(r.error);
  c.attempts = r.attempts;
  c.message = r.message != nullptr ? r.message : "";
  *out = c;
}

bool copy_text(const char* text, char* out, std::size_t size) {
  if (text == nullptr || size == 0) return false;
  const std::size_t n = std::strlen(text);
  if (n >= size) return false;
  std::memcpy(out, text, n + 1);
  return true;
}

}  // namespace stepback::capi

using stepback::capi::construct;
using stepback::capi::place;
using stepback::capi::to_millis;

extern "C" {

int64_t stepback_monotonic_ms(void) {
  return stepback::capi::from_millis(stepback::platform::monotonic_now());
}

int64_t stepback_wall_ms(void) {
  return stepback::capi::from_millis(stepback::platform::wall_now());
}

bool stepback_poll_wait(const stepback_next* next, int64_t now_ms) {
  if (next == nullptr || next->kind == STEPBACK_NEXT_SEND || next->kind == STEPBACK_NEXT_DONE) {
    return false;
  }
  return stepback::https::poll_wait(stepback::capi::from_c(next), to_millis(now_ms));
}

void stepback_policy_from_profile(stepback_policy* policy) {
  if (policy != nullptr) stepback::capi::policy_to_c(stepback::profiles::active.retry, policy);
}

const char* stepback_profile_name(void) { return stepback::profiles::active.name; }

void stepback_options_default(stepback_options* options) {
  if (options == nullptr) return;
  stepback_options c{};
  c.max_redirects = stepback::profiles::active.max_redirects;
  c.idempotency = STEPBACK_IDEMPOTENT_BY_METHOD;
  *options = c;
}

stepback_status stepback_stack_init(stepback_stack* stack, size_t size, const char* ca) {
  stepback::app::HttpsStack* made = nullptr;
  const stepback_status placed = construct(stack, size, &made);
  if (placed != STEPBACK_OK) return placed;
  return stepback::capi::to_c(made->init(ca));
}

const char* stepback_stack_message(const stepback_stack* stack) {
  return place<stepback::app::HttpsStack>(stack)->message();
}

void stepback_stack_destroy(stepback_stack* stack) {
  place<stepback::app::HttpsStack>(stack)->~HttpsStack();
}

}  // extern "C"

#include "stepback/transfer/operation.hpp"

#include <cstring>

#include "stepback/transfer/operation_json.hpp"

namespace stepback::transfer {
namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() &&
         std::memcmp(s.data() + s.size() - tail.size(), tail.data(), tail.size()) == 0;
}

// A path character of RFC 3986 (pchar, percent signs included) or '/': what an operation
// name may hold to be pasted into a request target as it is.
bool is_path_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::strchr("-._~!$&'()*+,;=:@/%", c) != nullptr && c != '\0';
}

bool is_path(std::string_view s) {
  for (const char c : s) {
    if (!is_path_char(c)) return false;
  }
  return true;
}

// The first segment of `target` with its slashes ("/v1/" of "/v1/projects/p/..."); "/" when
// the target has none.
std::string_view first_segment(std::string_view target) {
  if (target.empty() || target[0] != '/') return "/";
  for (std::size_t i = 1; i < target.size(); ++i) {
    if (target[i] == '/') return std::string_view(target.data(), i + 1);
    if (target[i] == '?' || target[i] == '#') break;
  }
  return "/";
}

https::ConstBytes bytes_of(std::string_view s) {
  return https::ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

const char* to_string(OperationOutcome o) {
  switch (o) {
    case OperationOutcome::kSucceeded:
      return "succeeded";
    case OperationOutcome::kFailed:
      return "failed";
    case OperationOutcome::kPollingDeadline:
      return "polling_deadline";
    case OperationOutcome::kGaveUpRetrying:
      return "gave_up_retrying";
    case OperationOutcome::kAlreadyExists:
      return "already_exists";
    case OperationOutcome::kRequestFailed:
      return "request_failed";
    case OperationOutcome::kMalformed:
      return "malformed";
    case OperationOutcome::kCancelled:
      return "cancelled";
  }
  return "?";
}

const char* to_string(OperationPhase p) {
  switch (p) {
    case OperationPhase::kIdle:
      return "idle";
    case OperationPhase::kMutation:
      return "mutation";
    case OperationPhase::kWaiting:
      return "waiting";
    case OperationPhase::kPoll:
      return "poll";
    case OperationPhase::kDone:
      return "done";
  }
  return "?";
}

bool names_its_resource(std::string_view target) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return false;
  std::string_view query(target.data() + q + 1, target.size() - q - 1);
  const std::size_t hash = query.find('#');
  if (hash != std::string_view::npos) query = std::string_view(query.data(), hash);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view param(query.data(), amp == std::string_view::npos ? query.size() : amp);
    const std::size_t eq = param.find('=');
    if (eq != std::string_view::npos && eq + 1 < param.size()) {
      const std::string_view name(param.data(), eq);
      if (name.size() > 2 && ends_with(name, "Id")) return true;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return false;
}

https::ClientOptions Operation::client_options(const OperationOptions& options, Operation* self) {
  https::ClientOptions c = options.client;
  c.body = https::ResponseSink{&Operation::write_answer, &Operation::restart_answer, self};
  return c;
}

Operation::Operation(https::Connector& connector, const RetryContext& context,
                     const OperationOptions& options)
    : context_(context),
      options_(options),
      client_(connector, context, client_options(options, this)) {}

https::Status Operation::start(const OperationSpec& spec) {
  const https::MutableBytes buffer = options_.operation_buffer;
  if (buffer.data == nullptr || buffer.size == 0 || !valid(options_.polling)) {
    return https::Status::kInvalidArgument;
  }
  const std::string_view prefix =
      spec.poll_prefix.empty() ? first_segment(spec.mutation.head.url.target) : spec.poll_prefix;
  if (prefix.size() > kMaxPollPrefix || prefix.front() != '/' || prefix.back() != '/' ||
      !is_path(prefix)) {
    return https::Status::kInvalidArgument;
  }
  spec_ = spec;
  std::memcpy(target_, prefix.data(), prefix.size());
  target_size_ = prefix.size();
  poll_ = https::RequestSpec{};
  poll_.head.method = "GET";
  poll_.head.url = spec.mutation.head.url;
  poll_.head.url.target = std::string_view(target_, target_size_);
  poll_.head.user_agent = spec.mutation.head.user_agent;
  poll_.head.headers = spec.poll_headers;
  poll_.head.header_count = spec.poll_header_count;
  poll_.idempotency = https::RequestSpec::Idempotency::kByMethod;  // GET: safe.

  answer_size_ = 0;
  answer_overflow_ = false;
  name_size_ = 0;
  polls_ = 0;
  previous_wait_ = options_.polling.initial_delay;
  deadline_ = Millis::max();
  wake_ = Millis{};
  result_ = OperationResult{};
  phase_ = OperationPhase::kIdle;
  const https::Status s = client_.start(spec.mutation);
  if (s != https::Status::kOk) return s;
  phase_ = OperationPhase::kMutation;
  return https::Status::kOk;
}

// The transition table: each handler yields an answer for the loop or names the next
// phase; phase_ changes here (and in start() and cancel()) only.
https::ClientNext Operation::step(Millis now) {
  for (;;) {
    Step s;
    switch (phase_) {
      case OperationPhase::kIdle:
      case OperationPhase::kDone:
        return https::ClientNext::done();
      case OperationPhase::kWaiting:
        s = on_waiting(now);
        break;
      case OperationPhase::kMutation:
      case OperationPhase::kPoll:
        s = on_request(now);
        break;
    }
    phase_ = s.phase;
    if (s.yield) return s.next;
  }
}

Operation::Step Operation::on_waiting(Millis now) {
  if (now < wake_) return yield(https::ClientNext::wait_until(wake_), OperationPhase::kWaiting);
  return begin_poll(now);
}

Operation::Step Operation::on_request(Millis now) {
  const https::ClientNext next = client_.step(now);
  if (next.kind != https::ClientNext::Kind::kDone) return yield(next, phase_);
  return on_answer(now);
}

void Operation::cancel() {
  if (phase_ == OperationPhase::kIdle || phase_ == OperationPhase::kDone) return;
  client_.cancel();
  result_.request = client_.result();
  phase_ = finish(Millis{}, OperationOutcome::kCancelled, "cancelled", phase_).phase;
}

Operation::Step Operation::begin_poll(Millis now) {
  answer_size_ = 0;
  answer_overflow_ = false;
  if (client_.start(poll_) != https::Status::kOk) {
    return finish(now, OperationOutcome::kRequestFailed,
                  "the poll request does not fit the request-head buffer", OperationPhase::kPoll);
  }
  ++polls_;
  result_.polls = polls_;
  OperationEvent e;
  e.kind = OperationEvent::Kind::kPoll;
  e.at = now;
  e.poll = polls_;
  e.name = name();
  emit(e);
  // The first step of the poll runs now; the loop gets its answer.
  return go(OperationPhase::kPoll);
}

Operation::Step Operation::on_answer(Millis now) {
  result_.request = client_.result();
  const https::ClientResult& r = result_.request;
  const bool mutation = phase_ == OperationPhase::kMutation;
  switch (r.outcome) {
    case Outcome::kSuccess:
      if (r.status / 100 != 2) {
        return finish(now, OperationOutcome::kRequestFailed,
                      mutation ? "the mutation was answered with neither an Operation nor an error "
                                 "(a redirect is not followed)"
                               : "the poll was answered with neither an Operation nor an error "
                                 "(a redirect is not followed)",
                      phase_);
      }
      return read_operation_answer(now);
    case Outcome::kRetriesExhausted:
    case Outcome::kDeadline:
    case Outcome::kBudgetExhausted:
    case Outcome::kServerDelayTooLong:
      take_error_body();
      return finish(now, OperationOutcome::kGaveUpRetrying,
                    mutation ? "the mutation gave up retrying" : "a poll gave up retrying", phase_);
    case Outcome::kTerminalStatus:
      take_error_body();
      if (mutation && r.status == 409 && result_.error.status == "ALREADY_EXISTS") {
        result_.resent = r.attempts > 1;
        return finish(now, OperationOutcome::kAlreadyExists,
                      result_.resent
                          ? "already exists (409 ALREADY_EXISTS) after the create was sent again: "
                            "the first attempt may have made it; get the resource"
                          : "already exists (409 ALREADY_EXISTS); get the resource",
                      phase_);
      }
      return finish(now, OperationOutcome::kRequestFailed,
                    mutation ? "the mutation was answered with an HTTP error that is not retried"
                             : "a poll was answered with an HTTP error that is not retried",
                    phase_);
    case Outcome::kNotIdempotent:
      if (r.error == https::Status::kOk) take_error_body();
      return finish(now, OperationOutcome::kRequestFailed,
                    "the mutation failed after it may have reached the server and is not "
                    "declared idempotent, so it was not sent again",
                    phase_);
    case Outcome::kTerminalFailure:
    case Outcome::kOffline:
      return finish(now, OperationOutcome::kRequestFailed, r.message, phase_);
    case Outcome::kCancelled:
      break;
  }
  return finish(now, OperationOutcome::kCancelled, "cancelled", phase_);
}

Operation::Step Operation::read_operation_answer(Millis now) {
  if (answer_overflow_) {
    return finish(now, OperationOutcome::kMalformed, "the answer does not fit the operation buffer",
                  phase_);
  }
  const https::ConstBytes answer{options_.operation_buffer.data, answer_size_};
  OperationView op;
  const JsonRead read = read_operation(answer, &op);
  if (read != JsonRead::kOk) {
    return finish(now, OperationOutcome::kMalformed,
                  read == JsonRead::kSyntax ? "the answer is not valid JSON"
                                            : "the answer is JSON but not an Operation",
                  phase_);
  }
  const bool mutation = phase_ == OperationPhase::kMutation;
  if (mutation) {
    if (op.name.size() > kMaxOperationName) {
      return finish(now, OperationOutcome::kMalformed, "the operation's name is too long", phase_);
    }
    name_size_ = json_decode_string(
        op.name, https::MutableBytes{reinterpret_cast<std::uint8_t*>(name_), sizeof name_});
    if (!op.done && name_size_ == 0) {
      return finish(now, OperationOutcome::kMalformed,
                    "the Operation is not done and has no name to poll", phase_);
    }
    if (!is_path(name()) || (name_size_ > 0 && name_[0] == '/')) {
      return finish(now, OperationOutcome::kMalformed, "the operation's name cannot be a URL path",
                    phase_);
    }
    std::memcpy(target_ + target_size_, name_, name_size_);
    poll_.head.url.target = std::string_view(target_, target_size_ + name_size_);
    answered_ = now;
    const Millis limit = options_.polling.total_deadline;
    deadline_ = limit.count() == 0 ? Millis::max() : now + limit;
  }
  OperationEvent e;
  e.kind = mutation ? OperationEvent::Kind::kOperation : OperationEvent::Kind::kPolled;
  e.at = now;
  e.poll = polls_;
  e.name = name();
  e.verb = op.verb;
  e.status_detail = op.status_detail;
  e.done = op.done;
  emit(e);
  if (!op.done) return schedule_poll(now);
  if (op.error.present) {
    result_.error.present = true;
    result_.error.code = op.error.code;
    result_.error.code_name = rpc_code_name(op.error.code);
    result_.error.status = op.error.status;
    result_.error.details = op.error.details;
    take_status_message(op.error.message);
    return finish(now, OperationOutcome::kFailed, "the operation finished with an error", phase_);
  }
  const https::ResponseSink& sink = options_.response;
  if (op.has_response && sink.write != nullptr) {
    result_.response_refused = !sink.write(sink.context, 0, bytes_of(op.response));
  }
  return finish(now, OperationOutcome::kSucceeded, "the operation is done", phase_);
}

Operation::Step Operation::schedule_poll(Millis now) {
  if (now >= deadline_) {
    return finish(now, OperationOutcome::kPollingDeadline,
                  "gave up polling: the operation was not done by the polling deadline", phase_);
  }
  Millis wait = polling_wait(options_.polling, polls_, previous_wait_, context_.random);
  previous_wait_ = wait;
  if (now + wait > deadline_) {
    // One last look at the deadline, unless that would poll sooner than the floor.
    if (deadline_ - now < options_.polling.min_delay) {
      return finish(now, OperationOutcome::kPollingDeadline,
                    "gave up polling: the operation was not done by the polling deadline", phase_);
    }
    wait = deadline_ - now;
  }
  wake_ = now + wait;
  OperationEvent e;
  e.kind = OperationEvent::Kind::kWait;
  e.at = now;
  e.poll = polls_ + 1;
  e.name = name();
  e.wait = wait;
  emit(e);
  return yield(https::ClientNext::wait_until(wake_), OperationPhase::kWaiting);
}

Operation::Step Operation::finish(Millis now, OperationOutcome outcome, const char* message,
                                  OperationPhase ended) {
  result_.outcome = outcome;
  result_.phase = ended;
  result_.polls = polls_;
  result_.message = message;
  OperationEvent e;
  e.kind = OperationEvent::Kind::kDone;
  e.at = now;
  e.poll = polls_;
  e.name = name();
  e.outcome = outcome;
  emit(e);
  return yield(https::ClientNext::done(), OperationPhase::kDone);
}

void Operation::take_error_body() {
  if (answer_overflow_ || answer_size_ == 0) return;
  RpcStatusView status;
  const https::ConstBytes answer{options_.operation_buffer.data, answer_size_};
  if (read_error_body(answer, &status) != JsonRead::kOk) return;
  result_.error.present = true;
  result_.error.code = status.code;
  result_.error.code_name = "";
  result_.error.status = status.status;
  result_.error.details = status.details;
  take_status_message(status.message);
}

void Operation::take_status_message(std::string_view raw) {
  const std::size_t n = json_decode_string(
      raw, https::MutableBytes{reinterpret_cast<std::uint8_t*>(message_), sizeof message_});
  result_.error.message = std::string_view(message_, n);
}

bool Operation::write_answer(void* self, std::uint64_t offset, https::ConstBytes data) {
  auto* op = static_cast<Operation*>(self);
  const https::MutableBytes buffer = op->options_.operation_buffer;
  // Whatever does not fit is dropped and the answer marked: it is read as kMalformed, and
  // the connection stays usable.
  if (offset > buffer.size || data.size > buffer.size - offset) op->answer_overflow_ = true;
  if (offset < buffer.size) {
    const std::size_t room = buffer.size - static_cast<std::size_t>(offset);
    const std::size_t n = data.size < room ? data.size : room;
    if (n > 0) std::memcpy(buffer.data + offset, data.data, n);
    const std::size_t end = static_cast<std::size_t>(offset) + n;
    if (end > op->answer_size_) op->answer_size_ = end;
  }
  return true;
}

bool Operation::restart_answer(void* self) {
  auto* op = static_cast<Operation*>(self);
  op->answer_size_ = 0;
  op->answer_overflow_ = false;
  return true;
}

void Operation::emit(const OperationEvent& event) const {
  if (options_.events.on_event != nullptr) options_.events.on_event(options_.events.context, event);
}

}  // namespace stepback::transfer

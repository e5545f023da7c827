// The Operation follower against scripted connections on a fake clock: the mutation, the
// polls it sends and when, every way it can end, and the polling policy's draws.
#include "stepback/transfer/operation.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "stepback/core/backoff.hpp"
#include "stepback/core/polling.hpp"
#include "stepback/profiles/desktop.hpp"
#include "stepback/profiles/mobile.hpp"
#include "tests/support/fake_tokens.hpp"
#include "tests/support/scripted_connector.hpp"
#include "tests/support/scripted_random.hpp"

namespace stepback::transfer {
namespace {

using https::ClientNext;
using https::Status;
using testing::FakeTokens;
using testing::ScriptedConnector;

// Every byte sent on every connection handed out so far, in order.
std::string all_sent(ScriptedConnector& connector) {
  std::string all;
  for (std::size_t i = 0; i < connector.opened(); ++i) all += connector.connection(i).sent();
  return all;
}

// An HTTP/1.1 response with a JSON body; the connection closes after it.
std::string response(int status, const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(status) + " Status\r\nContent-Type: application/json\r\n" +
         extra + "Connection: close\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

constexpr char kName[] = "projects/p/locations/l/operations/operation-1";

std::string running(const std::string& detail = "Creating instance") {
  return response(200, std::string("{\"name\":\"") + kName +
                           "\",\"metadata\":{\"verb\":\"create\",\"statusDetail\":\"" + detail +
                           "\"},\"done\":false}");
}
std::string done_with_instance() {
  return response(200, std::string("{\"name\":\"") + kName +
                           "\",\"done\":true,\"response\":{\"name\":\"projects/p/locations/l/"
                           "instances/cache\",\"state\":\"READY\"}}");
}
const std::string k503 =
    response(503, R"({"error":{"code":503,"message":"try later","status":"UNAVAILABLE"}})");

// A recorded operation event (its views copied).
struct Seen {
  OperationEvent::Kind kind;
  Millis at;
  std::uint32_t poll;
  std::string name, verb, detail;
  bool done;
  Millis wait;
  OperationOutcome outcome;
};

void record(void* context, const OperationEvent& e) {
  static_cast<std::vector<Seen>*>(context)->push_back(
      Seen{e.kind, e.at, e.poll, std::string(e.name), std::string(e.verb),
           std::string(e.status_detail), e.done, e.wait, e.outcome});
}

bool keep_response(void* context, std::uint64_t offset, https::ConstBytes data) {
  auto* s = static_cast<std::string*>(context);
  if (offset != s->size()) return false;
  s->append(reinterpret_cast<const char*>(data.data), data.size);
  return true;
}

void record_client(void* context, const https::ClientEvent& e) {
  if (e.kind == https::ClientEvent::Kind::kWait) {
    static_cast<std::vector<https::ClientEvent>*>(context)->push_back(e);
  }
}

// One operation with its buffers, a short retry policy and a fake clock.
struct Harness {
  explicit Harness(
      const char* url = "https://redis.test/v1/projects/p/locations/l/instances?instanceId=cache",
      const char* method = "POST") {
    policy.jitter = Jitter::kNone;
    policy.initial_delay = Millis(100);
    policy.max_backoff = Millis(400);
    policy.max_retries = 3;
    EXPECT_EQ(https::parse_url(url, &spec.mutation.head.url), Status::kOk);
    spec.mutation.head.method = method;
    spec.mutation.head.user_agent = "stepback-test";
    body_bytes = https::ConstBytes{reinterpret_cast<const std::uint8_t*>(body.data()), body.size()};
    spec.mutation.body = https::BodySource::of(&body_bytes);
    spec.mutation.idempotency = https::RequestSpec::Idempotency::kYes;  // Named by instanceId.
  }
  ClientNext start() {
    OperationOptions options;
    options.client.timeouts.read = Millis(5000);
    options.client.buffers = https::ClientBuffers{{request, sizeof request},
                                                  {head, sizeof head},
                                                  {io, sizeof io},
                                                  {error_body, sizeof error_body}};
    options.client.wall_now = [] { return Millis(1'700'000'000'000); };
    options.client.credentials = credentials;
    options.client.events = https::EventSink{&record_client, &client_waits};
    options.operation_buffer = https::MutableBytes{answer, answer_size};
    options.response = https::ResponseSink{&keep_response, nullptr, &instance};
    options.polling = polling;
    options.events = OperationEventSink{&record, &events};
    op = std::make_unique<Operation>(connector, context, options);
    EXPECT_EQ(op->start(spec), Status::kOk);
    return op->step(now);
  }
  // Steps until done, jumping the clock to each deadline.
  ClientNext run(ClientNext next, int limit = 100000) {
    for (int i = 0; i < limit && next.kind != ClientNext::Kind::kDone; ++i) {
      if (next.kind == ClientNext::Kind::kWaitUntil && next.at > now) now = next.at;
      next = op->step(now);
    }
    return next;
  }
  ClientNext run() { return run(start()); }
  std::vector<Seen> of(OperationEvent::Kind kind) const {
    std::vector<Seen> out;
    for (const Seen& s : events) {
      if (s.kind == kind) out.push_back(s);
    }
    return out;
  }

  Policy policy;
  Xoshiro128 random{7};
  RetryContext context{policy, random, nullptr};
  PollingPolicy polling = profiles::desktop.polling;
  ScriptedConnector connector;
  OperationSpec spec;
  std::string body = R"({"tier":"BASIC","memorySizeGb":1})";
  https::ConstBytes body_bytes;
  https::Credentials credentials;
  std::uint8_t request[1024];
  std::uint8_t head[1024];
  std::uint8_t io[256];
  std::uint8_t error_body[512];
  std::uint8_t answer[2048];
  std::size_t answer_size = sizeof answer;
  std::string instance;
  std::vector<Seen> events;
  std::vector<https::ClientEvent> client_waits;  // The Client's kWait events.
  Millis now{1000};
  std::unique_ptr<Operation> op;
};

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

TEST(Operation, SendsTheMutationAndPollsUntilDone) {
  Harness h;
  h.connector.add().recv_data(running("Creating instance"));
  h.connector.add().recv_data(running("Provisioning"));
  h.connector.add().recv_data(done_with_instance());
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const OperationResult& r = h.op->result();
  EXPECT_EQ(r.outcome, OperationOutcome::kSucceeded) << r.message;
  EXPECT_EQ(r.phase, OperationPhase::kPoll);
  EXPECT_EQ(r.polls, 2U);
  EXPECT_EQ(h.op->name(), kName);
  EXPECT_EQ(h.instance, R"({"name":"projects/p/locations/l/instances/cache","state":"READY"})");
  const std::string sent = all_sent(h.connector);
  EXPECT_EQ(
      sent.rfind("POST /v1/projects/p/locations/l/instances?instanceId=cache HTTP/1.1\r\n", 0), 0U)
      << sent;
  EXPECT_EQ(count(sent, std::string("GET /v1/") + kName + " HTTP/1.1\r\n"), 2U) << sent;
  EXPECT_EQ(count(sent, "User-Agent: stepback-test\r\n"), 3U);
  EXPECT_EQ(count(sent, "{\"tier\":\"BASIC\",\"memorySizeGb\":1}"), 1U);  // Polls carry no body.
  const auto first = h.of(OperationEvent::Kind::kOperation);
  ASSERT_EQ(first.size(), 1U);
  EXPECT_EQ(first[0].verb, "create");
  EXPECT_EQ(first[0].detail, "Creating instance");
  const auto polled = h.of(OperationEvent::Kind::kPolled);
  ASSERT_EQ(polled.size(), 2U);
  EXPECT_EQ(polled[0].detail, "Provisioning");
  EXPECT_FALSE(polled[0].done);
  EXPECT_TRUE(polled[1].done);
  ASSERT_EQ(h.of(OperationEvent::Kind::kDone).size(), 1U);
}

TEST(Operation, AMutationDoneAtOnceIsNotPolled) {
  Harness h;
  h.connector.add().recv_data(done_with_instance());
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.op->result().outcome, OperationOutcome::kSucceeded);
  EXPECT_EQ(h.op->result().polls, 0U);
  EXPECT_EQ(h.op->result().phase, OperationPhase::kMutation);
  EXPECT_EQ(h.connector.opened(), 1U);
}

TEST(Operation, DoneWithoutResponseOrErrorSucceedsWithNothingToDeliver) {
  Harness h("https://redis.test/v1/projects/p/locations/l/instances/cache", "DELETE");
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(
      response(200, std::string("{\"name\":\"") + kName + "\",\"done\":true}"));
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.op->result().outcome, OperationOutcome::kSucceeded);
  EXPECT_EQ(h.instance, "");
}

// No poll earlier than the policy allows, and the jitter drawn: with each profile's polling
// policy, every gap between an answer and the next poll lies in [max(floor, t/2), t] for
// t = min(initial x 2^n, 60 s), and the gaps are not the bare schedule.
void ExpectPollsFollow(const PollingPolicy& policy) {
  Harness h;
  h.polling = policy;
  h.connector.add().recv_data(running());
  constexpr int kPolls = 12;
  for (int i = 0; i < kPolls - 1; ++i) h.connector.add().recv_data(running());
  h.connector.add().recv_data(done_with_instance());
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  ASSERT_EQ(h.op->result().outcome, OperationOutcome::kSucceeded);
  ASSERT_EQ(h.op->result().polls, static_cast<std::uint32_t>(kPolls));

  // Answers: kOperation then kPolled; polls: kPoll. With scripted connections an answer
  // arrives at the instant its request leaves.
  std::vector<Millis> answers;
  std::vector<Millis> polls;
  for (const Seen& s : h.events) {
    if (s.kind == OperationEvent::Kind::kOperation || s.kind == OperationEvent::Kind::kPolled) {
      answers.push_back(s.at);
    }
    if (s.kind == OperationEvent::Kind::kPoll) polls.push_back(s.at);
  }
  ASSERT_EQ(polls.size(), static_cast<std::size_t>(kPolls));
  const std::uint64_t initial = policy.initial_delay.count();
  const std::uint64_t floor = policy.min_delay.count();
  const std::uint64_t cap = policy.max_delay.count();
  int at_bare_schedule = 0;
  for (std::size_t n = 0; n < polls.size(); ++n) {
    const std::uint64_t gap = (polls[n] - answers[n]).count();
    const std::uint64_t t = std::min<std::uint64_t>(initial << n, cap);
    EXPECT_GE(gap, std::max<std::uint64_t>(floor, t / 2)) << "poll " << n + 1;
    EXPECT_LE(gap, t) << "poll " << n + 1;
    if (gap == t || gap == t / 2) ++at_bare_schedule;
  }
  EXPECT_LT(at_bare_schedule, 3);
  // The first poll is never sooner than 0.5 s after the mutation's answer.
  EXPECT_GE(polls[0] - answers[0], Millis(500));
  // The kWait events announce those same gaps.
  const auto waits = h.of(OperationEvent::Kind::kWait);
  ASSERT_EQ(waits.size(), polls.size());
  for (std::size_t n = 0; n < polls.size(); ++n) {
    EXPECT_EQ(waits[n].at + waits[n].wait, polls[n]);
    EXPECT_EQ(waits[n].poll, n + 1);
  }
}

TEST(Operation, PollsFollowTheDesktopPollingPolicyOnAFakeClock) {
  ExpectPollsFollow(profiles::desktop.polling);
}

TEST(Operation, PollsFollowTheMobilePollingPolicyOnAFakeClock) {
  ExpectPollsFollow(profiles::mobile.polling);
}

// Each profile's polling deadline ends an operation that is never done: the last poll is at
// most the deadline after the mutation's answer, and none comes sooner than the floor.
void ExpectPollingEndsAtTheDeadline(const PollingPolicy& policy) {
  Harness h;
  h.polling = policy;
  for (int i = 0; i < 200; ++i) h.connector.add().recv_data(running());
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  ASSERT_EQ(h.op->result().outcome, OperationOutcome::kPollingDeadline);
  Millis answered{};
  Millis previous{};
  Millis last_poll{};
  for (const Seen& s : h.events) {
    if (s.kind == OperationEvent::Kind::kOperation) answered = previous = s.at;
    if (s.kind == OperationEvent::Kind::kPolled) previous = s.at;
    if (s.kind == OperationEvent::Kind::kPoll) {
      EXPECT_GE(s.at - previous, policy.min_delay) << "poll " << s.poll;
      last_poll = s.at;
    }
  }
  EXPECT_LE(last_poll - answered, policy.total_deadline);
  EXPECT_GE(last_poll - answered, policy.total_deadline - policy.max_delay);
}

TEST(Operation, PollingEndsAtTheDesktopPollingDeadline) {
  ExpectPollingEndsAtTheDeadline(profiles::desktop.polling);
}

TEST(Operation, PollingEndsAtTheMobilePollingDeadline) {
  ExpectPollingEndsAtTheDeadline(profiles::mobile.polling);
}

TEST(Operation, TheFirstPollWaitsAtLeastTheFloor) {
  Harness h;
  h.polling.jitter = Jitter::kFull;  // Could draw 0: the floor holds it at 0.5 s.
  testing::ScriptedRandom zero{1};   // uniform() answers 0.
  const RetryContext context{h.policy, zero, nullptr};
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(done_with_instance());
  OperationOptions options;
  options.client.buffers = https::ClientBuffers{{h.request, sizeof h.request},
                                                {h.head, sizeof h.head},
                                                {h.io, sizeof h.io},
                                                {h.error_body, sizeof h.error_body}};
  options.client.wall_now = [] { return Millis(1'700'000'000'000); };
  options.operation_buffer = https::MutableBytes{h.answer, sizeof h.answer};
  options.polling = h.polling;
  options.events = OperationEventSink{&record, &h.events};
  Operation op(h.connector, context, options);
  ASSERT_EQ(op.start(h.spec), Status::kOk);
  ClientNext next = op.step(h.now);
  for (int i = 0; i < 1000 && next.kind != ClientNext::Kind::kDone; ++i) {
    if (next.kind == ClientNext::Kind::kWaitUntil && next.at > h.now) h.now = next.at;
    next = op.step(h.now);
  }
  ASSERT_EQ(op.result().outcome, OperationOutcome::kSucceeded);
  const auto waits = h.of(OperationEvent::Kind::kWait);
  ASSERT_EQ(waits.size(), 1U);
  EXPECT_EQ(waits[0].wait, Millis(500));
}

TEST(Operation, AFailedPollIsRetriedAndTheNextPollStartsAFreshRetryCount) {
  Harness h;
  h.policy.max_retries = 2;
  h.connector.add().recv_data(running());
  // Poll 1: two 503s (both retries) and an answer; poll 2 the same: a count carried over
  // from poll 1 would have run out.
  h.connector.add().recv_data(k503);
  h.connector.add().recv_data(k503);
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(k503);
  h.connector.add().recv_data(k503);
  h.connector.add().recv_data(done_with_instance());
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const OperationResult& r = h.op->result();
  EXPECT_EQ(r.outcome, OperationOutcome::kSucceeded) << r.message;
  EXPECT_EQ(r.polls, 2U);
  EXPECT_EQ(r.request.attempts, 3U);  // The last poll's request.
  EXPECT_EQ(h.connector.opened(), 7U);
}

TEST(Operation, A429RetryInfoOnAPollLengthensItsRetry) {
  Harness h;
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(response(
      429,
      R"({"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}]}})"));
  h.connector.add().recv_data(done_with_instance());
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.op->result().outcome, OperationOutcome::kSucceeded);
  ASSERT_EQ(h.client_waits.size(), 1U);
  EXPECT_EQ(h.client_waits[0].wait_reason, WaitReason::kRetryInfo);
  EXPECT_GE(h.client_waits[0].wait.count(), 3000U);
}

TEST(Operation, APollThatGivesUpRetryingIsNotPollingTime) {
  Harness h;
  h.policy.max_retries = 1;
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(k503);
  h.connector.add().recv_reset();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const OperationResult& r = h.op->result();
  EXPECT_EQ(r.outcome, OperationOutcome::kGaveUpRetrying);
  EXPECT_EQ(r.phase, OperationPhase::kPoll);
  EXPECT_EQ(r.request.outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(r.polls, 1U);
}

TEST(Operation, AMutationThatGivesUpRetrying) {
  Harness h;
  h.policy.max_retries = 2;
  for (int i = 0; i < 3; ++i) h.connector.add().recv_data(k503);
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const OperationResult& r = h.op->result();
  EXPECT_EQ(r.outcome, OperationOutcome::kGaveUpRetrying);
  EXPECT_EQ(r.phase, OperationPhase::kMutation);
  EXPECT_EQ(r.polls, 0U);
}

TEST(Operation, AnOperationThatEndsInErrorIsItsOwnOutcome) {
  Harness h;
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(response(
      200,
      std::string("{\"name\":\"") + kName +
          R"(","done":true,"error":{"code":9,"message":"Instance \u0022cache\u0022 is busy","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"BUSY"}]}})"));
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const OperationResult& r = h.op->result();
  EXPECT_EQ(r.outcome, OperationOutcome::kFailed);
  ASSERT_TRUE(r.error.present);
  EXPECT_EQ(r.error.code, 9);
  EXPECT_EQ(std::string(r.error.code_name), "FAILED_PRECONDITION");
  EXPECT_EQ(r.error.message, "Instance \"cache\" is busy");
  EXPECT_EQ(r.error.details,
            R"([{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"BUSY"}])");
  EXPECT_EQ(h.instance, "");
}

const std::string k409 = response(
    409,
    R"({"error":{"code":409,"message":"Resource 'projects/p/locations/l/instances/cache' already exists","status":"ALREADY_EXISTS"}})");

TEST(Operation, AResentCreateMetBy409IsAlreadyExists) {
  Harness h;
  // The create lands, its answer is lost (reset before a byte of it); the re-sent create
  // finds the instance.
  h.connector.add().recv_reset();
  h.connector.add().recv_data(k409);
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const OperationResult& r = h.op->result();
  EXPECT_EQ(r.outcome, OperationOutcome::kAlreadyExists);
  EXPECT_TRUE(r.resent);
  EXPECT_NE(std::string(r.message).find("already exists"), std::string::npos);
  EXPECT_EQ(r.error.status, "ALREADY_EXISTS");
  EXPECT_EQ(r.error.code, 409);
  EXPECT_EQ(r.error.message, "Resource 'projects/p/locations/l/instances/cache' already exists");
  EXPECT_EQ(r.request.status, 409);
  EXPECT_EQ(count(all_sent(h.connector), "POST /v1/"), 2U);
}

TEST(Operation, AFirstCreateMetBy409IsAlreadyExistsToo) {
  Harness h;
  h.connector.add().recv_data(k409);
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.op->result().outcome, OperationOutcome::kAlreadyExists);
  EXPECT_FALSE(h.op->result().resent);
}

TEST(Operation, A409ThatIsNotAlreadyExistsIsAFailedRequest) {
  Harness h;
  h.connector.add().recv_data(
      response(409, R"({"error":{"code":409,"message":"conflict","status":"ABORTED"}})"));
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.op->result().outcome, OperationOutcome::kRequestFailed);
  EXPECT_EQ(h.op->result().error.status, "ABORTED");
}

TEST(Operation, ALostAnswerToAnUndeclaredCreateIsNotResent) {
  Harness h;
  h.spec.mutation.idempotency = https::RequestSpec::Idempotency::kByMethod;  // POST: no.
  h.connector.add().recv_reset();
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.op->result().outcome, OperationOutcome::kRequestFailed);
  EXPECT_EQ(h.op->result().request.outcome, Outcome::kNotIdempotent);
  EXPECT_EQ(h.connector.opened(), 1U);
}

TEST(Operation, GivesUpPollingAtThePollingDeadlineAfterOneLastLook) {
  Harness h;
  h.polling.total_deadline = Millis(10000);
  h.connector.add().recv_data(running());
  for (int i = 0; i < 20; ++i) h.connector.add().recv_data(running());
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const OperationResult& r = h.op->result();
  EXPECT_EQ(r.outcome, OperationOutcome::kPollingDeadline);
  const auto answered = h.of(OperationEvent::Kind::kOperation);
  const auto polls = h.of(OperationEvent::Kind::kPoll);
  ASSERT_EQ(answered.size(), 1U);
  ASSERT_FALSE(polls.empty());
  // The last poll is at the deadline, none after it.
  EXPECT_EQ(polls.back().at, answered[0].at + Millis(10000));
  for (const Seen& p : polls) EXPECT_LE(p.at, answered[0].at + Millis(10000));
  EXPECT_EQ(r.polls, polls.size());
}

TEST(Operation, APollAnswered404IsAFailedRequest) {
  Harness h;
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(response(
      404, R"({"error":{"code":404,"message":"operation not found","status":"NOT_FOUND"}})"));
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const OperationResult& r = h.op->result();
  EXPECT_EQ(r.outcome, OperationOutcome::kRequestFailed);
  EXPECT_EQ(r.phase, OperationPhase::kPoll);
  EXPECT_EQ(r.request.status, 404);
  EXPECT_EQ(r.error.message, "operation not found");
}

TEST(Operation, AnswersThatAreNotOperationsAreMalformed) {
  const std::string cases[] = {
      response(200, "<html>ok</html>"),
      response(200, R"({"done":false})"),                          // Nothing to poll.
      response(200, R"({"name":"operations/a b","done":false})"),  // Not a path.
      response(200, R"({"name":"operations/a?x=1","done":false})"),
      response(200, R"({"name":"/operations/a","done":false})"),
      response(200, R"({"name":"operations/a","done":"no"})"),
      response(200, std::string("{\"name\":\"") + std::string(1500, 'a') + "\"}"),  // Too long.
      response(200,
               std::string("{\"name\":\"x\",\"metadata\":\"") + std::string(3000, 'a') + "\"}"),
  };
  for (const std::string& answer : cases) {
    Harness h;
    h.connector.add().recv_data(answer);
    ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
    EXPECT_EQ(h.op->result().outcome, OperationOutcome::kMalformed) << answer;
    EXPECT_EQ(h.op->result().polls, 0U);
  }
}

TEST(Operation, EveryRequestAsksForTheTokenAndAnExpiredOneIsRefreshedOnce) {
  Harness h;
  FakeTokens tokens;
  h.credentials = https::Credentials{&FakeTokens::get, &tokens};
  const std::string expired =
      "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"x\", "
      "error=\"invalid_token\"\r\n"
      "Connection: close\r\nContent-Length: 0\r\n\r\n";
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(expired);
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(done_with_instance());
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  EXPECT_EQ(h.op->result().outcome, OperationOutcome::kSucceeded);
  EXPECT_EQ(tokens.asked, 4);
  EXPECT_EQ(tokens.refreshed, 1);
  const std::string sent = all_sent(h.connector);
  EXPECT_EQ(count(sent, "Authorization: Bearer t1\r\n"), 2U);
  EXPECT_EQ(count(sent, "Authorization: Bearer t2\r\n"), 2U);
}

TEST(Operation, ASecondRejectedTokenInARowEndsThePoll) {
  Harness h;
  FakeTokens tokens;
  h.credentials = https::Credentials{&FakeTokens::get, &tokens};
  const std::string expired =
      "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer error=\"invalid_token\"\r\n"
      "Connection: close\r\nContent-Length: 0\r\n\r\n";
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(expired);
  h.connector.add().recv_data(expired);
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const OperationResult& r = h.op->result();
  EXPECT_EQ(r.outcome, OperationOutcome::kRequestFailed);
  EXPECT_EQ(r.request.outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(r.request.status, 401);
  EXPECT_EQ(tokens.refreshed, 1);
}

TEST(Operation, PollsGoToThePrefixTheCallerNames) {
  Harness h;
  h.spec.poll_prefix = "/v1beta1/";
  const https::Header extra[] = {{"x-goog-user-project", "billing"}};
  h.spec.poll_headers = extra;
  h.spec.poll_header_count = 1;
  h.connector.add().recv_data(running());
  h.connector.add().recv_data(done_with_instance());
  ASSERT_EQ(h.run().kind, ClientNext::Kind::kDone);
  const std::string sent = all_sent(h.connector);
  EXPECT_NE(sent.find(std::string("GET /v1beta1/") + kName + " HTTP/1.1\r\n"), std::string::npos);
  EXPECT_EQ(count(sent, "x-goog-user-project: billing\r\n"), 1U);
}

TEST(Operation, StartRefusesWhatCannotWork) {
  Harness h;
  h.spec.poll_prefix = "v1";
  h.connector.add().recv_data(running());
  OperationOptions options;
  options.client.buffers = https::ClientBuffers{{h.request, sizeof h.request},
                                                {h.head, sizeof h.head},
                                                {h.io, sizeof h.io},
                                                {h.error_body, sizeof h.error_body}};
  options.client.wall_now = [] { return Millis(1); };
  Operation no_buffer(h.connector, h.context, options);
  EXPECT_EQ(no_buffer.start(h.spec), Status::kInvalidArgument);
  options.operation_buffer = https::MutableBytes{h.answer, sizeof h.answer};
  Operation bad_prefix(h.connector, h.context, options);
  EXPECT_EQ(bad_prefix.start(h.spec), Status::kInvalidArgument);
  h.spec.poll_prefix = "/v1/";
  EXPECT_EQ(bad_prefix.start(h.spec), Status::kOk);
}

TEST(Operation, CancelEndsIt) {
  Harness h;
  h.connector.add().recv_data(running());
  ClientNext next = h.start();
  for (int i = 0; i < 100 && h.op->phase() != OperationPhase::kWaiting; ++i)
    next = h.op->step(h.now);
  ASSERT_EQ(h.op->phase(), OperationPhase::kWaiting);
  h.op->cancel();
  EXPECT_EQ(h.op->result().outcome, OperationOutcome::kCancelled);
  EXPECT_EQ(h.op->step(h.now).kind, ClientNext::Kind::kDone);
}

TEST(NamesItsResource, ReadsTheQuery) {
  EXPECT_TRUE(names_its_resource("/v1/projects/p/locations/l/instances?instanceId=cache"));
  EXPECT_TRUE(names_its_resource("/v1/x?alt=json&requestId=123"));
  EXPECT_FALSE(names_its_resource("/v1/x?instanceId="));
  EXPECT_FALSE(names_its_resource("/v1/x?Id=1"));
  EXPECT_FALSE(names_its_resource("/v1/projects/p/locations/l/instances"));
  EXPECT_FALSE(names_its_resource("/v1/instanceId=cache"));
}

TEST(PollingWait, EqualJitterStaysWithinHalfTheScheduleAndTheFloor) {
  Xoshiro128 random(1);
  for (std::uint32_t n = 0; n < 40; ++n) {
    for (int k = 0; k < 50; ++k) {
      const Millis w = polling_wait(profiles::desktop.polling, n, Millis(1000), random);
      const std::uint64_t t = n < 6 ? 1000ULL << n : 60000;
      EXPECT_GE(w.count(), std::max<std::uint64_t>(500, t / 2));
      EXPECT_LE(w.count(), t);
    }
  }
}

TEST(PollingWait, TheMobileScheduleStartsLater) {
  testing::ScriptedRandom low{1};  // uniform() answers 0.
  EXPECT_EQ(polling_wait(profiles::mobile.polling, 0, Millis(0), low), Millis(1000));
  EXPECT_EQ(polling_wait(profiles::desktop.polling, 0, Millis(0), low), Millis(500));
  EXPECT_EQ(polling_wait(profiles::desktop.polling, 30, Millis(0), low), Millis(30000));
}

TEST(PollingWait, ValidRefusesNonsense) {
  PollingPolicy p;
  EXPECT_TRUE(valid(p));
  p.min_delay = Millis::seconds(120);
  EXPECT_FALSE(valid(p));
  p = PollingPolicy{};
  p.multiplier = 1;
  EXPECT_FALSE(valid(p));
  p = PollingPolicy{};
  p.initial_delay = Millis(0);
  EXPECT_FALSE(valid(p));
}

}  // namespace
}  // namespace stepback::transfer

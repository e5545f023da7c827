// The Operation follower against the local Memorystore for Redis over TLS: an instance
// created, waited for, read and deleted; every injected fault on the mutation and on the
// polls; each way an operation can end; fresh tokens on every attempt.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>

#include "tests/integration/memorystore/memorystore_fixture.hpp"

namespace stepback::memorystore {
namespace {

using integration::count_of;
using transfer::OperationEvent;
using transfer::OperationOutcome;
using transfer::OperationPhase;

constexpr char kInstance[] = R"({"tier":"BASIC","memorySizeGb":1,"labels":{"env":"test"}})";

class MemorystoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(integration::python_path(), "python3");
    STEPBACK_REQUIRE_TOOL(integration::openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(integration::bash_path(), "bash");
    ASSERT_NE(integration::pki(), nullptr);
    tls_ = integration::make_tls(integration::pki()->ca);
    ASSERT_NE(tls_, nullptr);
    tokens_.first = "ya29.first-token";
    tokens_.refreshed = "ya29.second-token";
  }

  ::testing::AssertionResult start(MemorystoreServer::Options options) {
    if (options.tokens.empty()) options.tokens = {tokens_.first, tokens_.refreshed};
    return server_.start(options);
  }

  OperationSetup create(const std::string& id = "cache") {
    OperationSetup s;
    s.url = server_.instances("?instanceId=" + id);
    s.body = kInstance;
    s.tls = tls_.get();
    s.tokens = &tokens_;
    return s;
  }

  // GETs `url` with the first token; the plain request's result.
  integration::RunResult get(const std::string& url) {
    integration::ClientSetup s;
    s.url = url;
    s.tls = tls_.get();
    s.headers = {{"Authorization", "Bearer " + tokens_.first}};
    return integration::run_client(s);
  }

  std::unique_ptr<https::TlsClientConfig> tls_;
  TokenSource tokens_;
  MemorystoreServer server_;
};

TEST_F(MemorystoreTest, CreatesWaitsForReadsAndDeletesAnInstance) {
  ASSERT_TRUE(start({}));
  const OperationRun created = run_operation(create());
  ASSERT_EQ(created.result.outcome, OperationOutcome::kSucceeded)
      << created.summary() << server_.output();
  EXPECT_EQ(created.result.polls, 2U);
  EXPECT_NE(created.response.find("\"state\": \"READY\""), std::string::npos) << created.response;
  EXPECT_NE(created.response.find("google.cloud.redis.v1.Instance"), std::string::npos);
  EXPECT_EQ(created.name.rfind("projects/p/locations/us-central1/operations/operation-", 0), 0U);
  ASSERT_EQ(created.count(OperationEvent::Kind::kOperation), 1U);
  EXPECT_EQ(created.events[0].verb, "create");
  EXPECT_EQ(created.events[0].detail, "Creating instance");
  // The Client keeps its connection from one request to the next (the server allows
  // keep-alive): the create and both polls share one connection and one handshake.
  EXPECT_EQ(created.connections, 1U);
  EXPECT_FALSE(created.resumed);

  const integration::RunResult read = get(server_.instances("/cache"));
  EXPECT_EQ(read.result.status, 200);
  EXPECT_NE(read.body.find("\"state\": \"READY\""), std::string::npos) << read.body;

  OperationSetup patch = create();
  patch.url = server_.instances("/cache?updateMask=labels");
  patch.method = "PATCH";
  patch.body = R"({"labels":{"env":"prod"}})";
  const OperationRun patched = run_operation(patch);
  ASSERT_EQ(patched.result.outcome, OperationOutcome::kSucceeded) << patched.summary();
  EXPECT_NE(patched.response.find("\"prod\""), std::string::npos);

  OperationSetup remove = create();
  remove.url = server_.instances("/cache");
  remove.method = "DELETE";
  remove.body = "";
  const OperationRun deleted = run_operation(remove);
  ASSERT_EQ(deleted.result.outcome, OperationOutcome::kSucceeded) << deleted.summary();
  EXPECT_NE(deleted.response.find("google.protobuf.Empty"), std::string::npos);
  EXPECT_EQ(get(server_.instances("/cache")).result.status, 404);
  EXPECT_EQ(tokens_.refreshes, 0);
}

// One injected fault, where it strikes, and what the log calls it.
struct Fault {
  const char* name;
  const char* kind;    // "create" (the mutation) or "operation" (a poll).
  const char* rule;    // The action fields of the rule.
  const char* action;  // The server log's action=.
};

std::string name_of(const Fault& f) { return std::string(f.name) + "_on_" + f.kind; }
void PrintTo(const Fault& f, std::ostream* os) { *os << name_of(f); }

class FaultTest : public MemorystoreTest, public ::testing::WithParamInterface<Fault> {};

TEST_P(FaultTest, TheOperationEndsWellThroughIt) {
  const Fault& f = GetParam();
  MemorystoreServer::Options options;
  options.faults = std::string("[{\"match\":{\"kind\":\"") + f.kind + "\"}," + f.rule + "}]";
  ASSERT_TRUE(start(options));
  OperationSetup setup = create();
  setup.timeouts.read = Millis(700);  // The stall outlasts it.
  const OperationRun run = run_operation(setup);
  ASSERT_EQ(run.result.outcome, OperationOutcome::kSucceeded) << run.summary() << "\n"
                                                              << server_.log();
  EXPECT_NE(run.response.find("\"state\": \"READY\""), std::string::npos);
  const std::string log = server_.log();
  EXPECT_EQ(count_of(log, std::string("kind=") + f.kind + " auth=ok action=" + f.action), 1) << log;
  const std::string action = f.action;
  int retry_info_waits = 0;
  int waits = 0;
  for (const integration::Event& e : run.client_events) {
    if (e.kind != https::ClientEvent::Kind::kWait) continue;
    ++waits;
    if (e.wait_reason == WaitReason::kRetryInfo) {
      ++retry_info_waits;
      EXPECT_GE(e.wait.count(), 300U);  // The server's 0.3 s, never shortened.
    }
  }
  if (action == "status") {
    EXPECT_EQ(retry_info_waits, 1) << run.summary();
  }
  const bool on_poll = std::string(f.kind) == "operation";
  if (action == "expire_token") {
    EXPECT_EQ(tokens_.refreshes, 1);
    EXPECT_EQ(waits, 0) << "a refreshed token is sent at once";
  } else if (action == "reset" && on_poll) {
    // A poll goes on the connection the create left open; a reset before any answer there
    // looks like a kept connection the server had closed, so the poll goes again at once on
    // a new one (as curl does), without a wait.
    EXPECT_EQ(tokens_.refreshes, 0);
    EXPECT_EQ(waits, 0) << run.summary();
  } else {
    EXPECT_EQ(tokens_.refreshes, 0);
    EXPECT_EQ(waits, 1) << run.summary();
  }
  // A fault on the create makes the client send it twice; it landed once (no 409).
  EXPECT_EQ(count_of(log, "kind=create"), on_poll ? 1 : 2) << log;
}

const Fault kFaults[] = {
    {"unavailable", "create", R"("status":503,"retry_delay":0.3)", "status"},
    {"unavailable", "operation", R"("status":503,"retry_delay":0.3)", "status"},
    {"rate_limited", "create", R"("status":429,"retry_delay":0.3)", "status"},
    {"rate_limited", "operation", R"("status":429,"retry_delay":0.3)", "status"},
    {"reset", "create", R"("reset":true)", "reset"},
    {"reset", "operation", R"("reset":true)", "reset"},
    {"stall", "create", R"("stall":1.5)", "stall"},
    {"stall", "operation", R"("stall":1.5)", "stall"},
    {"expired_token", "create", R"("expire_token":true)", "expire_token"},
    {"expired_token", "operation", R"("expire_token":true)", "expire_token"},
};

INSTANTIATE_TEST_SUITE_P(EveryFault, FaultTest, ::testing::ValuesIn(kFaults),
                         [](const ::testing::TestParamInfo<Fault>& param) {
                           return name_of(param.param);
                         });

TEST_F(MemorystoreTest, ACreateWhoseAnswerWasLostIsMetBy409AlreadyExists) {
  MemorystoreServer::Options options;
  options.faults = R"([{"match":{"kind":"create"},"lose_response":true}])";
  ASSERT_TRUE(start(options));
  const OperationRun run = run_operation(create());
  ASSERT_EQ(run.result.outcome, OperationOutcome::kAlreadyExists) << run.summary();
  EXPECT_TRUE(run.result.resent);
  EXPECT_EQ(run.result.request.status, 409);
  EXPECT_EQ(run.error_status, "ALREADY_EXISTS");
  EXPECT_NE(run.message.find("already exists"), std::string::npos);
  EXPECT_NE(run.error_message.find("already exists"), std::string::npos);
  EXPECT_EQ(count_of(server_.log(), "kind=create"), 2);
  // The first attempt made it: the caller gets the instance.
  EXPECT_EQ(get(server_.instances("/cache")).result.status, 200);
}

TEST_F(MemorystoreTest, ALostAnswerToACreateNotDeclaredIdempotentIsNotResent) {
  MemorystoreServer::Options options;
  options.faults = R"([{"match":{"kind":"create"},"lose_response":true}])";
  ASSERT_TRUE(start(options));
  OperationSetup setup = create();
  setup.idempotency = https::RequestSpec::Idempotency::kByMethod;
  const OperationRun run = run_operation(setup);
  EXPECT_EQ(run.result.outcome, OperationOutcome::kRequestFailed) << run.summary();
  EXPECT_EQ(run.result.request.outcome, Outcome::kNotIdempotent);
  EXPECT_EQ(count_of(server_.log(), "kind=create"), 1);
}

TEST_F(MemorystoreTest, AnOperationThatEndsInErrorIsReportedWithItsCodeName) {
  MemorystoreServer::Options options;
  options.faults =
      R"([{"match":{"kind":"create"},"operation_error":{"code":9,"message":"Zone us-central1-a has no capacity for the tier","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"ZONE_RESOURCE_POOL_EXHAUSTED"}]}}])";
  ASSERT_TRUE(start(options));
  const OperationRun run = run_operation(create());
  ASSERT_EQ(run.result.outcome, OperationOutcome::kFailed) << run.summary();
  EXPECT_EQ(run.result.error.code, 9);
  EXPECT_EQ(run.code_name, "FAILED_PRECONDITION");
  EXPECT_EQ(run.error_message, "Zone us-central1-a has no capacity for the tier");
  EXPECT_NE(run.error_details.find("ZONE_RESOURCE_POOL_EXHAUSTED"), std::string::npos);
  EXPECT_EQ(run.response, "");
  EXPECT_EQ(get(server_.instances("/cache")).result.status, 404);  // The create was undone.
}

TEST_F(MemorystoreTest, GivesUpPollingAtThePollingDeadline) {
  MemorystoreServer::Options options;
  options.op_polls = 0;  // Never done.
  ASSERT_TRUE(start(options));
  OperationSetup setup = create();
  setup.polling.total_deadline = Millis(1500);
  const OperationRun run = run_operation(setup);
  ASSERT_EQ(run.result.outcome, OperationOutcome::kPollingDeadline) << run.summary();
  EXPECT_GE(run.result.polls, 3U);
  EXPECT_LT(run.elapsed.count(), 5000U);
  EXPECT_NE(run.message.find("gave up polling"), std::string::npos);
}

TEST_F(MemorystoreTest, APollThatKeepsFailingGivesUpRetrying) {
  MemorystoreServer::Options options;
  options.faults = R"([{"match":{"kind":"operation"},"status":503,"times":-1}])";
  ASSERT_TRUE(start(options));
  OperationSetup setup = create();
  setup.policy.max_retries = 2;
  const OperationRun run = run_operation(setup);
  ASSERT_EQ(run.result.outcome, OperationOutcome::kGaveUpRetrying) << run.summary();
  EXPECT_EQ(run.result.phase, OperationPhase::kPoll);
  EXPECT_EQ(run.result.request.outcome, Outcome::kRetriesExhausted);
  EXPECT_EQ(run.result.request.attempts, 3U);
  EXPECT_EQ(run.result.polls, 1U);
}

TEST_F(MemorystoreTest, AMutationThatKeepsFailingGivesUpRetrying) {
  MemorystoreServer::Options options;
  options.faults = R"([{"match":{"kind":"create"},"status":503,"retry_delay":0.1,"times":-1}])";
  ASSERT_TRUE(start(options));
  OperationSetup setup = create();
  setup.policy.max_retries = 2;
  const OperationRun run = run_operation(setup);
  ASSERT_EQ(run.result.outcome, OperationOutcome::kGaveUpRetrying) << run.summary();
  EXPECT_EQ(run.result.phase, OperationPhase::kMutation);
  EXPECT_EQ(run.result.polls, 0U);
}

TEST_F(MemorystoreTest, AnExpiredTokenIsRefreshedOnceAndKeptForTheRestOfTheRun) {
  MemorystoreServer::Options options;
  options.tokens = {"ya29.second-token"};  // The first one has expired.
  ASSERT_TRUE(start(options));
  const OperationRun run = run_operation(create());
  ASSERT_EQ(run.result.outcome, OperationOutcome::kSucceeded) << run.summary();
  EXPECT_EQ(tokens_.refreshes, 1);
  // Mutation (twice: the expired token, then the fresh one) and two polls.
  EXPECT_EQ(tokens_.asked, 4);
  const std::string log = server_.log();
  EXPECT_EQ(count_of(log, "auth=invalid"), 1) << log;
  EXPECT_EQ(count_of(log, "auth=ok"), 3) << log;
}

TEST_F(MemorystoreTest, ASecondRejectedTokenInARowEndsTheOperation) {
  MemorystoreServer::Options options;
  options.faults = R"([{"match":{"kind":"operation"},"expire_token":true,"times":2}])";
  ASSERT_TRUE(start(options));
  const OperationRun run = run_operation(create());
  ASSERT_EQ(run.result.outcome, OperationOutcome::kRequestFailed) << run.summary();
  EXPECT_EQ(run.result.phase, OperationPhase::kPoll);
  EXPECT_EQ(run.result.request.outcome, Outcome::kTerminalStatus);
  EXPECT_EQ(run.result.request.status, 401);
  EXPECT_EQ(run.error_status, "UNAUTHENTICATED");
  EXPECT_EQ(tokens_.refreshes, 1);
}

TEST_F(MemorystoreTest, TokensAppearInNoEventOrMessage) {
  MemorystoreServer::Options options;
  options.tokens = {"ya29.second-token"};
  options.faults = R"([{"match":{"kind":"operation"},"status":503,"retry_delay":0.1}])";
  ASSERT_TRUE(start(options));
  const OperationRun run = run_operation(create());
  ASSERT_EQ(run.result.outcome, OperationOutcome::kSucceeded) << run.summary();
  const std::string text = run.summary() + run.response + run.error_message + server_.log();
  EXPECT_EQ(text.find("ya29"), std::string::npos) << text;
}

}  // namespace
}  // namespace stepback::memorystore

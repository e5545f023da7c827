// A TLS session kept on disk (https/tls/tls_session_record.hpp), against nginx on loopback: a
// download's connection saves its session as a record; everything is then made anew as after
// a restart (a new TLS configuration object, a new connector) and the record imported, and
// the next connection resumes: the connector says so and nginx logs tls_reused=r. With the
// record refused (another server, other trust anchors) the next connection shakes hands in
// full (tls_reused=.). And DownloadFiles, asked to keep the session, writes FILE.tls-session
// (mode 0600) at a checkpoint, loads it in the next run and removes it when the download ends.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "integration_support.hpp"
#include "stepback/app/files.hpp"
#include "stepback/core/random.hpp"
#include "stepback/https/client.hpp"
#include "stepback/https/dns/resolver.hpp"
#include "stepback/https/poll_wait.hpp"
#include "stepback/https/tcp_tls_connector.hpp"
#include "stepback/https/tls/tls_session_record.hpp"
#include "stepback/platform/clock.hpp"

namespace stepback::integration {
namespace {

using https::TlsSessionRecordError;

// One GET of `url` through `connector` to its end; the body goes to `sink` (or is dropped).
// `stop` (when given) is asked after each step, and a true answer cancels the request.
https::ClientResult get(https::Connector& connector, const std::string& url,
                        https::ResponseSink sink = {}, const std::function<bool()>& stop = {}) {
  std::vector<std::uint8_t> request(4096), head(8192), io(16384), error_body(1024);
  https::Url parsed;
  EXPECT_EQ(https::parse_url(url, &parsed), https::Status::kOk);
  https::RequestSpec spec;
  spec.head.method = "GET";
  spec.head.url = parsed;
  spec.head.user_agent = "stepback-integration";
  Xoshiro128 random(7);
  const RetryContext context{test_policy(), random, nullptr};
  https::ClientOptions options;
  options.timeouts = test_timeouts();
  options.buffers = https::ClientBuffers{{request.data(), request.size()},
                                         {head.data(), head.size()},
                                         {io.data(), io.size()},
                                         {error_body.data(), error_body.size()}};
  options.body = sink;
  options.wall_now = &platform::wall_now;
  https::Client client(connector, context, options);
  if (client.start(spec) != https::Status::kOk) return client.result();
  const Millis limit = platform::monotonic_now() + Millis(kRunWallLimitMs);
  https::ClientNext next = client.step(platform::monotonic_now());
  while (next.kind != https::ClientNext::Kind::kDone && platform::monotonic_now() < limit) {
    if (stop && stop()) {
      client.cancel();
      break;
    }
    https::poll_wait(next, platform::monotonic_now(), Millis(1000));
    next = client.step(platform::monotonic_now());
  }
  return client.result();
}

bool drop(void*, std::uint64_t, https::ConstBytes) { return true; }
bool drop_restart(void*) { return true; }

class TlsSessionRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(nginx_path(), "nginx");
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
    ASSERT_TRUE(server_.start());
    write_file(server_.www() + "/file.bin", std::string(64 * 1024, 'x'));
    url_ = server_.url("/file.bin");
  }

  // The reuse flags nginx logged, in order ("r" or "."), once `count` requests are logged.
  std::vector<std::string> reused(std::size_t count) const {
    std::vector<std::string> flags;
    wait_for([&] { return count_of(server_.access_log(), "tls_reused=") >= int(count); }, 3000);
    const std::string log = server_.access_log();
    for (std::size_t at = log.find("tls_reused="); at != std::string::npos;
         at = log.find("tls_reused=", at + 1)) {
      flags.push_back(log.substr(at + 11, 1));
    }
    return flags;
  }

  // A first run: a fresh configuration and connector, one download, the session as a record.
  std::vector<std::uint8_t> first_run() {
    auto tls = make_tls(pki()->ca);
    EXPECT_NE(tls, nullptr);
    https::TcpTlsConnector connector(*tls, no_names_);
    const https::ClientResult result = get(connector, url_, {&drop, &drop_restart, nullptr});
    EXPECT_EQ(result.outcome, Outcome::kSuccess);
    EXPECT_FALSE(connector.resumed());
    std::vector<std::uint8_t> record(https::kTlsSessionRecordMaxBytes);
    std::size_t size = 0;
    EXPECT_EQ(connector.export_session(platform::wall_now(),
                                       https::MutableBytes{record.data(), record.size()}, &size),
              TlsSessionRecordError::kNone);
    record.resize(size);
    return record;
  }

  https::FixedResolver no_names_;
  NginxServer server_;
  std::string url_;
};

TEST_F(TlsSessionRecordTest, ARestartedClientResumesFromTheRecord) {
  const std::vector<std::uint8_t> record = first_run();
  ASSERT_FALSE(record.empty());
  // As after a restart: nothing of the first run is left but the record's bytes.
  auto tls = make_tls(pki()->ca);
  ASSERT_NE(tls, nullptr);
  https::TcpTlsConnector connector(*tls, no_names_);
  ASSERT_EQ(connector.import_session(https::ConstBytes{record.data(), record.size()}, "127.0.0.1",
                                     server_.port(), platform::wall_now()),
            TlsSessionRecordError::kNone);
  const https::ClientResult result = get(connector, url_, {&drop, &drop_restart, nullptr});
  ASSERT_EQ(result.outcome, Outcome::kSuccess) << server_.error_log();
  EXPECT_TRUE(connector.resumed());
  EXPECT_EQ(reused(2), (std::vector<std::string>{".", "r"})) << server_.access_log();
}

TEST_F(TlsSessionRecordTest, ARecordForAnotherServerIsRefusedAndTheHandshakeIsFull) {
  const std::vector<std::uint8_t> record = first_run();
  auto tls = make_tls(pki()->ca);
  ASSERT_NE(tls, nullptr);
  https::TcpTlsConnector connector(*tls, no_names_);
  const https::ConstBytes bytes{record.data(), record.size()};
  EXPECT_EQ(connector.import_session(bytes, "127.0.0.2", server_.port(), platform::wall_now()),
            TlsSessionRecordError::kOtherServer);
  EXPECT_EQ(
      connector.import_session(bytes, "127.0.0.1", static_cast<std::uint16_t>(server_.port() + 1),
                               platform::wall_now()),
      TlsSessionRecordError::kOtherServer);
  ASSERT_EQ(get(connector, url_, {&drop, &drop_restart, nullptr}).outcome, Outcome::kSuccess);
  EXPECT_FALSE(connector.resumed());
  EXPECT_EQ(reused(2), (std::vector<std::string>{".", "."})) << server_.access_log();
}

TEST_F(TlsSessionRecordTest, OtherTrustAnchorsRefuseTheRecordAndTheHandshakeIsFull) {
  const std::vector<std::uint8_t> record = first_run();
  auto tls = make_tls(pki()->ca);
  ASSERT_NE(tls, nullptr);
  ASSERT_EQ(tls->add_ca_file(pki()->other_ca.c_str()), https::Status::kOk);
  https::TcpTlsConnector connector(*tls, no_names_);
  EXPECT_EQ(connector.import_session(https::ConstBytes{record.data(), record.size()}, "127.0.0.1",
                                     server_.port(), platform::wall_now()),
            TlsSessionRecordError::kOtherVerification);
  ASSERT_EQ(get(connector, url_, {&drop, &drop_restart, nullptr}).outcome, Outcome::kSuccess);
  EXPECT_FALSE(connector.resumed());
  EXPECT_EQ(reused(2), (std::vector<std::string>{".", "."})) << server_.access_log();
}

TEST_F(TlsSessionRecordTest, DownloadFilesKeepsTheSessionWhenAskedAndRemovesItAtTheEnd) {
  TempDir dir;
  const std::string out = dir.file("file.bin");
  const std::string session_path = out + ".tls-session";
  {
    auto tls = make_tls(pki()->ca);
    ASSERT_NE(tls, nullptr);
    https::TcpTlsConnector connector(*tls, no_names_);
    auto files = std::make_unique<app::DownloadFiles>();
    files->keep_tls_session(&connector);
    ASSERT_EQ(files->open(out.c_str(), url_), app::DownloadFiles::Open::kFresh) << files->message();
    EXPECT_EQ(files->tls_session_load(), app::TlsSessionFile::Load::kAbsent);
    ASSERT_EQ(get(connector, url_, files->sink()).outcome, Outcome::kSuccess);
    // A checkpoint stores the record and, beside it, the session; the run then stops.
    transfer::TransferState state;
    state.kind = transfer::TransferKind::kDownload;
    ASSERT_TRUE(state.set_url(url_));
    state.delivered = 0;
    ASSERT_TRUE(files->checkpoints().save(files->checkpoints().context, state));
    struct stat st {};
    ASSERT_EQ(::stat(session_path.c_str(), &st), 0) << files->tls_session().message();
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_TRUE(files->keep());
  }
  auto tls = make_tls(pki()->ca);
  ASSERT_NE(tls, nullptr);
  https::TcpTlsConnector connector(*tls, no_names_);
  auto files = std::make_unique<app::DownloadFiles>();
  files->keep_tls_session(&connector);
  ASSERT_NE(files->open(out.c_str(), url_), app::DownloadFiles::Open::kRefused) << files->message();
  ASSERT_EQ(files->tls_session_load(), app::TlsSessionFile::Load::kLoaded)
      << files->tls_session().message();
  ASSERT_EQ(get(connector, url_, files->sink()).outcome, Outcome::kSuccess);
  EXPECT_TRUE(connector.resumed());
  EXPECT_EQ(reused(2), (std::vector<std::string>{".", "r"})) << server_.access_log();
  ASSERT_TRUE(files->finish(true)) << files->message();
  struct stat st {};
  EXPECT_NE(::stat(session_path.c_str(), &st), 0);
}

// The body's bytes counted on their way to the files' sink.
struct Counted {
  https::ResponseSink to;
  std::uint64_t bytes = 0;
  static bool write(void* self, std::uint64_t offset, https::ConstBytes data) {
    auto* c = static_cast<Counted*>(self);
    c->bytes += data.size;
    return c->to.write(c->to.context, offset, data);
  }
  static bool restart(void* self) {
    auto* c = static_cast<Counted*>(self);
    return c->to.restart(c->to.context);
  }
};

// A download stopped in its first exchange (killed, cancelled: the exchange never ended)
// keeps the session too. Under TLS 1.3 the session is the ticket the server sends after the
// handshake, read with the body; it was once saved only at the exchange's end, so the first
// checkpoints, and a kill before the end, had none to keep.
TEST_F(TlsSessionRecordTest, ADownloadStoppedInItsFirstExchangeKeepsTheSession) {
  write_file(server_.www() + "/big.bin", std::string(4 << 20, 'y'));
  const std::string url = server_.url("/big.bin");
  TempDir dir;
  const std::string out = dir.file("big.bin");
  {
    auto tls = make_tls(pki()->ca);
    ASSERT_NE(tls, nullptr);
    https::TcpTlsConnector connector(*tls, no_names_);
    auto files = std::make_unique<app::DownloadFiles>();
    files->keep_tls_session(&connector);
    ASSERT_EQ(files->open(out.c_str(), url), app::DownloadFiles::Open::kFresh) << files->message();
    Counted counted{files->sink()};
    // A checkpoint in the middle of the body, then the process "dies" (the files kept).
    bool checkpointed = false;
    const auto checkpoint_midway = [&] {
      if (counted.bytes < (256U << 10)) return false;
      transfer::TransferState state;
      state.kind = transfer::TransferKind::kDownload;
      EXPECT_TRUE(state.set_url(url));
      checkpointed = files->checkpoints().save(files->checkpoints().context, state);
      return true;
    };
    (void)get(connector, url, {&Counted::write, &Counted::restart, &counted}, checkpoint_midway);
    ASSERT_TRUE(checkpointed);
    ASSERT_LT(counted.bytes, 4U << 20) << "the body ended before the stop";
    struct stat st {};
    ASSERT_EQ(::stat((out + ".tls-session").c_str(), &st), 0) << files->tls_session().message();
    ASSERT_TRUE(files->keep());
  }
  auto tls = make_tls(pki()->ca);
  ASSERT_NE(tls, nullptr);
  https::TcpTlsConnector connector(*tls, no_names_);
  auto files = std::make_unique<app::DownloadFiles>();
  files->keep_tls_session(&connector);
  ASSERT_NE(files->open(out.c_str(), url), app::DownloadFiles::Open::kRefused) << files->message();
  ASSERT_EQ(files->tls_session_load(), app::TlsSessionFile::Load::kLoaded)
      << files->tls_session().message();
  ASSERT_EQ(get(connector, url_, {&drop, &drop_restart, nullptr}).outcome, Outcome::kSuccess);
  EXPECT_TRUE(connector.resumed());
  files->discard();
}

// A download stores at every checkpoint; the session file is written again only when the
// connector's session changed (a new handshake or ticket), not once per checkpoint.
TEST_F(TlsSessionRecordTest, ACheckpointRewritesTheSessionFileOnlyWhenTheSessionChanged) {
  TempDir dir;
  const std::string out = dir.file("file.bin");
  const std::string session_path = out + ".tls-session";
  auto tls = make_tls(pki()->ca);
  ASSERT_NE(tls, nullptr);
  https::TcpTlsConnector connector(*tls, no_names_);
  auto files = std::make_unique<app::DownloadFiles>();
  files->keep_tls_session(&connector);
  ASSERT_EQ(files->open(out.c_str(), url_), app::DownloadFiles::Open::kFresh) << files->message();
  ASSERT_EQ(get(connector, url_, files->sink()).outcome, Outcome::kSuccess);
  transfer::TransferState state;
  state.kind = transfer::TransferKind::kDownload;
  ASSERT_TRUE(state.set_url(url_));
  const auto checkpoint_inode = [&] {
    EXPECT_TRUE(files->checkpoints().save(files->checkpoints().context, state));
    struct stat st {};
    EXPECT_EQ(::stat(session_path.c_str(), &st), 0) << files->tls_session().message();
    return st.st_ino;  // Each write is a new file renamed over the old one.
  };
  const ino_t first = checkpoint_inode();
  const std::uint32_t generation = connector.session_generation();
  EXPECT_EQ(checkpoint_inode(), first);  // The same session: not written again.
  EXPECT_EQ(checkpoint_inode(), first);
  // A new connection resumes and gets a new ticket: the next checkpoint writes it.
  connector.close();
  ASSERT_EQ(get(connector, url_, files->sink()).outcome, Outcome::kSuccess);
  EXPECT_TRUE(connector.resumed());
  EXPECT_NE(connector.session_generation(), generation);
  EXPECT_NE(checkpoint_inode(), first);
  ASSERT_TRUE(files->finish(true)) << files->message();
}

}  // namespace
}  // namespace stepback::integration

// One upload's files (app/upload_files.hpp) against real files in a temporary folder: the
// body read from the file, a record refused when it is of another file size, another URL or
// not an upload's, a resumed spec filled from the record, and an upload run over scripted
// connections with the record saved as it goes and removed or kept at the end.
#include "stepback/app/upload_files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "stepback/app/defaults.hpp"
#include "stepback/platform/clock.hpp"
#include "tests/support/scripted_connector.hpp"

namespace stepback::app {
namespace {

constexpr char kUrl[] = "https://upload.test/upload/o?uploadType=resumable&name=o";
constexpr char kSession[] = "https://upload.test/s?upload_id=7";
constexpr std::uint64_t kChunk = 256 * 1024;
constexpr std::uint64_t kSize = kChunk + 1000;

Buffers g_buffers;
UploadFiles g_files;  // Tens of KiB, as an app keeps it.

std::string body() {
  std::string b;
  for (std::uint64_t i = 0; i < kSize; ++i) b.push_back(static_cast<char>(i * 7 + i / 251));
  return b;
}

std::string created() {
  return std::string("HTTP/1.1 200 OK\r\nLocation: ") + kSession +
         "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
}
std::string held(std::uint64_t n) {
  return "HTTP/1.1 308 Resume Incomplete\r\nRange: bytes=0-" + std::to_string(n - 1) +
         "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
}
std::string status(int code) {
  return "HTTP/1.1 " + std::to_string(code) +
         " Status\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
}

void forward(void* context, const transfer::UploadEvent& e) {
  static_cast<std::vector<transfer::UploadEvent::Kind>*>(context)->push_back(e.kind);
}

class AppUploadFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/stepback_app_upload_files_XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    file_ = dir_ + "/photo.jpg";
    std::ofstream(file_, std::ios::binary) << body();
    state_ = file_ + ".upload.state";
    policy_.jitter = Jitter::kNone;
    policy_.initial_delay = Millis(100);
    policy_.max_backoff = Millis(400);
    policy_.max_retries = 3;
    ASSERT_EQ(https::parse_url(kUrl, &spec_.url), https::Status::kOk);
    spec_.chunk_size = kChunk;
  }
  void TearDown() override {
    const std::string command = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  static bool exists(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0;
  }
  // Writes an upload's record at state_ as an earlier run would have.
  void write_record(std::uint64_t size, const char* url,
                    transfer::TransferKind kind = transfer::TransferKind::kUpload) {
    transfer::TransferState s;
    s.kind = kind;
    s.total_size = size;
    s.committed = kind == transfer::TransferKind::kUpload ? kChunk : 0;
    s.chunk_size = kChunk;
    s.crc32c = 0x12345678;
    s.retries = 2;
    s.saved_wall_ms = static_cast<std::int64_t>(platform::wall_now().count());
    s.wait_remaining = Millis(5000);
    s.release_wall_ms = s.saved_wall_ms + 5000;
    ASSERT_TRUE(s.set_url(url));
    ASSERT_TRUE(s.set_session_uri(kSession));
    StateFile file;
    ASSERT_TRUE(file.set_path(state_.c_str()));
    ASSERT_TRUE(file.store(s)) << file.message();
  }
  // Starts an upload with g_files' body, events and spec over the scripted connections and
  // steps it to its end (the clock jumps to each wait's end), calling after_step() each turn.
  // Stops early (paused) after `pause_after` steps when that is positive.
  void run(int pause_after = 0) {
    transfer::UploadOptions options = upload_options(g_buffers);
    options.events = g_files.events(transfer::UploadEventSink{&forward, &seen_});
    upload_ = std::make_unique<transfer::Upload>(connector_, context_, options);
    g_files.apply(&spec_);
    ASSERT_EQ(upload_->start(spec_), https::Status::kOk);
    for (int i = 0; i < 10000; ++i) {
      const transfer::UploadNext next = upload_->step(now_);
      if (next.kind == transfer::UploadNext::Kind::kDone) return;
      if (pause_after > 0 && i + 1 == pause_after) upload_->pause(now_);
      EXPECT_TRUE(g_files.after_step(*upload_, now_)) << g_files.message();
      if (upload_->paused()) return;
      if (next.kind == transfer::UploadNext::Kind::kWaitUntil && next.at > now_) now_ = next.at;
    }
    FAIL() << "the upload did not end";
  }

  std::string dir_;
  std::string file_;
  std::string state_;
  Policy policy_;
  Xoshiro128 random_{7};
  RetryContext context_{policy_, random_, nullptr};
  testing::ScriptedConnector connector_;
  transfer::UploadSpec spec_;
  std::unique_ptr<transfer::Upload> upload_;
  std::vector<transfer::UploadEvent::Kind> seen_;
  Millis now_{1000};
};

TEST_F(AppUploadFiles, WithoutARecordTheBodyIsTheFileAndNoSessionIsSet) {
  ASSERT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kFresh) << g_files.message();
  EXPECT_EQ(g_files.state_path(), state_);  // FILE.upload.state by default.
  EXPECT_EQ(g_files.size(), kSize);
  EXPECT_EQ(g_files.resumed(), nullptr);
  g_files.apply(&spec_);
  EXPECT_TRUE(spec_.session.empty());
  EXPECT_EQ(spec_.resume.retries, 0U);
  ASSERT_EQ(spec_.body.size, kSize);
  std::string read(1000, '\0');
  const std::uint64_t at = kChunk;
  ASSERT_EQ(spec_.body.read(spec_.body.context, at,
                            https::MutableBytes{reinterpret_cast<std::uint8_t*>(&read[0]), 1000}),
            1000U);
  EXPECT_EQ(read, body().substr(at, 1000));
  EXPECT_FALSE(g_files.read_failed());
}

TEST_F(AppUploadFiles, ARecordOfAnotherSizeUrlOrKindIsRefusedAndKept) {
  write_record(kSize - 1, kUrl);
  EXPECT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kRefused);
  EXPECT_NE(std::string(g_files.message()).find("is for a body of 263143 bytes"), std::string::npos)
      << g_files.message();
  write_record(kSize, "https://upload.test/upload/o?uploadType=resumable&name=other");
  EXPECT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kRefused);
  EXPECT_NE(std::string(g_files.message()).find("another upload URL"), std::string::npos)
      << g_files.message();
  write_record(kSize, kUrl, transfer::TransferKind::kDownload);
  EXPECT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kRefused);
  EXPECT_NE(std::string(g_files.message()).find("not an upload's"), std::string::npos)
      << g_files.message();
  EXPECT_TRUE(exists(state_));
}

TEST_F(AppUploadFiles, AFileThatCannotBeReadOrAFirstRunWithoutUrlIsRefused) {
  EXPECT_EQ(g_files.open((dir_ + "/missing").c_str(), kUrl), UploadFiles::Open::kRefused);
  EXPECT_NE(std::string(g_files.message()).find("cannot read"), std::string::npos);
  EXPECT_EQ(g_files.open(dir_.c_str(), kUrl), UploadFiles::Open::kRefused);
  EXPECT_NE(std::string(g_files.message()).find("not a regular file"), std::string::npos);
  EXPECT_EQ(g_files.open(file_.c_str(), ""), UploadFiles::Open::kRefused);
  EXPECT_NE(std::string(g_files.message()).find("needs the URL"), std::string::npos);
}

TEST_F(AppUploadFiles, ARecordOfThisUploadFillsTheSessionAndRetryState) {
  const std::string state = dir_ + "/elsewhere.state";
  state_ = state;
  write_record(kSize, kUrl);
  ASSERT_EQ(g_files.open(file_.c_str(), kUrl, state.c_str()), UploadFiles::Open::kResumed)
      << g_files.message();
  ASSERT_NE(g_files.resumed(), nullptr);
  EXPECT_EQ(g_files.resumed()->committed, kChunk);
  g_files.apply(&spec_);
  EXPECT_EQ(spec_.session, kSession);
  EXPECT_EQ(spec_.resume.retries, 2U);
  EXPECT_GT(spec_.resume.wait, Millis(0));
  EXPECT_LE(spec_.resume.wait, Millis(5000));
  ASSERT_TRUE(spec_.resume.crc32c.has_value());
  EXPECT_EQ(*spec_.resume.crc32c, 0x12345678U);
  EXPECT_EQ(spec_.resume.crc32c_length, kChunk);
  // An empty URL takes the record's.
  ASSERT_EQ(g_files.open(file_.c_str(), "", state.c_str()), UploadFiles::Open::kResumed);
  EXPECT_EQ(g_files.url(), kUrl);
}

TEST_F(AppUploadFiles, SavesAsItGoesCountsWaitsAndRemovesTheRecordOnSuccess) {
  ASSERT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kFresh);
  connector_.add().recv_data(created());
  connector_.add(600 * 1024).recv_data(status(503));  // The first chunk: a wait, a query.
  connector_.add().recv_data(held(kChunk));
  connector_.add(600 * 1024)
      .recv_data("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}");
  run();
  EXPECT_EQ(upload_->result().outcome, Outcome::kSuccess) << upload_->result().message;
  EXPECT_EQ(g_files.waits(), 1U);
  // The session, the wait, the committed chunk: each saved once.
  EXPECT_EQ(g_files.writes(), 3U);
  EXPECT_TRUE(exists(state_));
  EXPECT_EQ(seen_.back(), transfer::UploadEvent::Kind::kDone);  // Forwarded to the app.
  EXPECT_TRUE(g_files.finish(*upload_, now_)) << g_files.message();
  EXPECT_FALSE(exists(state_));
}

TEST_F(AppUploadFiles, AFailureKeepsTheSessionForTheNextRunWithoutTheRetryLoop) {
  ASSERT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kFresh);
  connector_.add().recv_data(created());
  connector_.add(600 * 1024).recv_data(held(kChunk));
  connector_.add(600 * 1024).recv_data(status(403));  // Terminal.
  run();
  EXPECT_EQ(upload_->result().outcome, Outcome::kTerminalStatus);
  EXPECT_TRUE(g_files.finish(*upload_, now_)) << g_files.message();
  ASSERT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kResumed) << g_files.message();
  EXPECT_EQ(g_files.resumed()->session_uri(), kSession);
  EXPECT_EQ(g_files.resumed()->committed, kChunk);
  EXPECT_EQ(g_files.resumed()->retries, 0U);
}

TEST_F(AppUploadFiles, AnExpiredSessionRemovesTheRecord) {
  write_record(kSize, kUrl);
  ASSERT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kResumed);
  spec_.session_restarts = 0;
  connector_.add().recv_data(status(404));
  run();
  EXPECT_TRUE(upload_->result().session_expired);
  EXPECT_TRUE(g_files.finish(*upload_, now_));
  EXPECT_FALSE(exists(state_));
}

TEST_F(AppUploadFiles, APausedUploadIsSavedOnceAsItStood) {
  ASSERT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kFresh);
  connector_.add().recv_data(created());
  connector_.add(600 * 1024);  // The chunk goes; no answer comes before the pause.
  run(30);
  ASSERT_TRUE(upload_->paused());
  ASSERT_FALSE(upload_->session_uri().empty());
  const std::uint32_t writes = g_files.writes();
  EXPECT_TRUE(g_files.after_step(*upload_, now_));
  EXPECT_EQ(g_files.writes(), writes);  // Already saved when the pause was seen.
  EXPECT_TRUE(g_files.finish(*upload_, now_));
  ASSERT_EQ(g_files.open(file_.c_str(), kUrl), UploadFiles::Open::kResumed) << g_files.message();
  EXPECT_EQ(g_files.resumed()->session_uri(), kSession);
}

}  // namespace
}  // namespace stepback::app

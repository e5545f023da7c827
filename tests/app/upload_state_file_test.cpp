// An upload's state file (app/upload_state_file.hpp) against real files: what it saves of an
// Upload and when, read back by a later object as a restarted app would.
#include "stepback/app/upload_state_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "stepback/app/defaults.hpp"
#include "tests/support/scripted_connector.hpp"

namespace stepback::app {
namespace {

constexpr char kUrl[] = "https://upload.test/upload/o?uploadType=resumable&name=o";
constexpr char kSession[] = "https://upload.test/s?upload_id=7";

Buffers g_buffers;

std::size_t zeros(void*, std::uint64_t, https::MutableBytes out) {
  for (std::size_t i = 0; i < out.size; ++i) out.data[i] = 0;
  return out.size;
}

class AppUploadStateFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/stepback_app_upload_XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    path_ = std::string(dir) + "/photo.state";
    spec_.session = kSession;
    spec_.body = https::BodySource{&zeros, nullptr, 1024 * 1024};
    spec_.chunk_size = 256 * 1024;
    upload_ =
        std::make_unique<transfer::Upload>(connector_, retry_.context(), upload_options(g_buffers));
    ASSERT_EQ(upload_->start(spec_), https::Status::kOk);
  }
  void TearDown() override {
    const std::string command = "rm -rf '" + path_.substr(0, path_.rfind('/')) + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  bool exists() const {
    struct stat st {};
    return ::stat(path_.c_str(), &st) == 0;
  }

  std::string path_;
  testing::ScriptedConnector connector_;
  RetrySetup retry_;
  transfer::UploadSpec spec_;
  std::unique_ptr<transfer::Upload> upload_;
};

TEST_F(AppUploadStateFile, SavesTheSessionWithTheUrlAndALaterRunReadsItBack) {
  UploadStateFile state(path_.c_str(), kUrl);
  ASSERT_TRUE(state.valid()) << state.message();
  transfer::TransferState restored;
  EXPECT_EQ(state.load(&restored), StateFile::Load::kAbsent);
  ASSERT_TRUE(state.save_now(*upload_, Millis(1000))) << state.message();
  EXPECT_EQ(state.writes(), 1U);

  UploadStateFile later(path_.c_str(), "");  // A later run that names no URL takes the record's.
  ASSERT_EQ(later.load(&restored), StateFile::Load::kLoaded) << later.message();
  EXPECT_EQ(restored.kind, transfer::TransferKind::kUpload);
  EXPECT_EQ(restored.session_uri(), kSession);
  EXPECT_EQ(restored.url(), kUrl);
  EXPECT_EQ(restored.total_size, 1024U * 1024U);
  EXPECT_EQ(later.url(), kUrl);
  EXPECT_TRUE(later.remove());
  EXPECT_FALSE(exists());
}

TEST_F(AppUploadStateFile, SavesOnlyWhenTheSessionOffsetOrWaitsChanged) {
  UploadStateFile state(path_.c_str(), kUrl);
  ASSERT_TRUE(state.maybe_save(*upload_, Millis(1000), 0));
  EXPECT_EQ(state.writes(), 1U);
  ASSERT_TRUE(state.maybe_save(*upload_, Millis(2000), 0));
  EXPECT_EQ(state.writes(), 1U);  // Nothing changed: no write.
  ASSERT_TRUE(state.maybe_save(*upload_, Millis(3000), 1));
  EXPECT_EQ(state.writes(), 2U);  // A wait began.
  // A record on disk counts as saved: a new object over it writes nothing either.
  UploadStateFile again(path_.c_str(), kUrl);
  transfer::TransferState restored;
  ASSERT_EQ(again.load(&restored), StateFile::Load::kLoaded);
  ASSERT_TRUE(again.maybe_save(*upload_, Millis(4000), 0));
  EXPECT_EQ(again.writes(), 0U);
}

TEST_F(AppUploadStateFile, AFinalSaveKeepsTheSessionWithoutTheRetryLoop) {
  UploadStateFile state(path_.c_str(), kUrl);
  ASSERT_TRUE(state.save_final(*upload_, Millis(1000)));
  transfer::TransferState restored;
  ASSERT_EQ(state.load(&restored), StateFile::Load::kLoaded);
  EXPECT_EQ(restored.session_uri(), kSession);
  EXPECT_EQ(restored.retries, 0U);
  EXPECT_EQ(restored.wait_remaining, Millis(0));
  EXPECT_EQ(restored.release_wall_ms, restored.saved_wall_ms);
}

TEST_F(AppUploadStateFile, APathOrUrlTooLongIsSaidAndNothingIsWritten) {
  UploadStateFile long_path(std::string(kMaxPath, 'x').c_str(), kUrl);
  EXPECT_FALSE(long_path.valid());
  EXPECT_NE(std::string(long_path.message()).find("too long"), std::string::npos);
  const std::string url = "https://upload.test/" + std::string(transfer::kMaxStateUrl, 'u');
  UploadStateFile long_url(path_.c_str(), url);
  EXPECT_FALSE(long_url.valid());
  EXPECT_NE(std::string(long_url.message()).find("URL"), std::string::npos);
  EXPECT_FALSE(long_url.save_now(*upload_, Millis(1000)));
  EXPECT_NE(std::string(long_url.message()).find("URL"), std::string::npos);
  EXPECT_FALSE(exists());
}

TEST_F(AppUploadStateFile, AFolderThatCannotBeWrittenIsSaid) {
  const std::string bad = path_ + ".missing/photo.state";
  UploadStateFile state(bad.c_str(), kUrl);
  ASSERT_TRUE(state.valid());
  EXPECT_FALSE(state.save_now(*upload_, Millis(1000)));
  EXPECT_NE(std::string(state.message()).find("cannot write the state file"), std::string::npos)
      << state.message();
}

}  // namespace
}  // namespace stepback::app

// The C API's opt-in TLS session kept on disk (stepback_download_keep_tls_session), against
// nginx over TLS 1.3: a download cancelled in the middle of its body keeps PATH.tls-session
// beside its record; the next "process" (a new stack and download) goes on with the download
// on a resumed session (nginx logs $ssl_session_reused "r"), and the file goes with the record
// when the download succeeds. Without the call no file is written. And a stack's storage
// takes a new stack after stepback_stack_destroy, as the header says.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "integration_support.hpp"
#include "stepback/stepback.h"

namespace stepback::integration {
namespace {

// Static, as the header says an app keeps them.
stepback_stack g_stack;
stepback_download g_download;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::uint64_t size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

class CapiTlsSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    STEPBACK_REQUIRE_TOOL(nginx_path(), "nginx");
    STEPBACK_REQUIRE_TOOL(openssl_path(), "openssl");
    STEPBACK_REQUIRE_TOOL(bash_path(), "bash");
    ASSERT_NE(pki(), nullptr);
    ASSERT_TRUE(server_.start());
    write_file(server_.www() + "/big.bin", std::string(2 << 20, 'z'));
    url_ = server_.url("/big.bin");
    out_ = dir_.file("big.bin");
  }

  // A new stack and download (as a new process makes), keeping the session when `keep`; steps
  // until done, or cancels once the part file holds `stop_at` bytes. The outcome.
  stepback_outcome run(bool keep, std::uint64_t stop_at) {
    EXPECT_EQ(stepback_stack_init(&g_stack, sizeof g_stack, pki()->ca.c_str()), STEPBACK_OK)
        << stepback_stack_message(&g_stack);
    EXPECT_EQ(stepback_download_init(&g_download, sizeof g_download, &g_stack, nullptr),
              STEPBACK_OK);
    if (keep) {
      EXPECT_EQ(stepback_download_keep_tls_session(&g_download), STEPBACK_OK);
    }
    EXPECT_EQ(stepback_download_start_file(&g_download, url_.c_str(), out_.c_str(), nullptr),
              STEPBACK_OK)
        << stepback_download_message(&g_download);
    EXPECT_EQ(stepback_download_keep_tls_session(&g_download), STEPBACK_E_STATE);
    const std::int64_t limit = stepback_monotonic_ms() + kRunWallLimitMs;
    stepback_next next;
    std::int64_t now = stepback_monotonic_ms();
    bool cancelled = false;
    while (stepback_download_step(&g_download, now, &next) != STEPBACK_NEXT_DONE) {
      if (now >= limit || (!cancelled && size_of(out_ + ".part") >= stop_at)) {
        stepback_download_cancel(&g_download, now);
        cancelled = true;
      }
      (void)stepback_poll_wait(&next, now);
      now = stepback_monotonic_ms();
    }
    stepback_result result;
    stepback_download_result(&g_download, &result);
    stepback_download_destroy(&g_download);
    stepback_stack_destroy(&g_stack);
    return result.outcome;
  }

  // The reuse flags nginx logged for big.bin, in order ("r" or "."), once `count` are logged.
  std::string reused(int count) const {
    wait_for([&] { return count_of(server_.access_log(), "tls_reused=") >= count; }, 3000);
    std::string flags;
    const std::string log = server_.access_log();
    for (std::size_t at = log.find("tls_reused="); at != std::string::npos;
         at = log.find("tls_reused=", at + 1)) {
      flags += log.substr(at + 11, 1);
    }
    return flags;
  }

  NginxServer server_;
  TempDir dir_;
  std::string url_;
  std::string out_;
};

TEST_F(CapiTlsSessionTest, ACancelledDownloadKeepsItsSessionAndTheNextGoesOnResumed) {
  ASSERT_EQ(run(true, 512U << 10), STEPBACK_OUTCOME_CANCELLED);
  ASSERT_TRUE(exists(out_ + ".part.state"));
  ASSERT_TRUE(exists(out_ + ".tls-session"));
  struct stat st {};
  ASSERT_EQ(::stat((out_ + ".tls-session").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  ASSERT_EQ(run(true, ~std::uint64_t{0}), STEPBACK_OUTCOME_SUCCESS);
  EXPECT_EQ(reused(2), ".r") << server_.access_log();
  EXPECT_EQ(size_of(out_), 2U << 20);
  EXPECT_FALSE(exists(out_ + ".tls-session"));  // Gone with the record.
  EXPECT_FALSE(exists(out_ + ".part.state"));
}

TEST_F(CapiTlsSessionTest, WithoutTheCallNoSessionIsKept) {
  ASSERT_EQ(run(false, 512U << 10), STEPBACK_OUTCOME_CANCELLED);
  ASSERT_TRUE(exists(out_ + ".part.state"));
  EXPECT_FALSE(exists(out_ + ".tls-session"));
  ASSERT_EQ(run(false, ~std::uint64_t{0}), STEPBACK_OUTCOME_SUCCESS);
  EXPECT_EQ(reused(2), "..") << server_.access_log();
}

// The header promises that the storage of a destroyed stack may be given to init again. It
// could not: the new stack's construction zeroed the arena the old one had installed, which
// PSA's global state still lived in, and init failed ("entropy or crypto initialization
// failed"). Each stack now gives back the arena it installed.
TEST_F(CapiTlsSessionTest, ADestroyedStacksStorageTakesANewStack) {
  for (int i = 0; i < 3; ++i) {
    (void)std::remove(out_.c_str());
    ASSERT_EQ(run(false, ~std::uint64_t{0}), STEPBACK_OUTCOME_SUCCESS) << "stack " << i;
    EXPECT_EQ(size_of(out_), 2U << 20);
  }
}

}  // namespace
}  // namespace stepback::integration

// The files of a resumable transfer (app/files.hpp) against real files in a temporary
// folder: the record written atomically and read back, refused when damaged or foreign, and a
// download's part file cut back to its checkpoint, checked against it, renamed on success.
#include "stepback/app/files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "stepback/https/integrity/crc32c.hpp"
#include "stepback/https/integrity/digest.hpp"

namespace stepback::app {
namespace {

constexpr char kUrl[] = "https://example.test/fw.bin";

class AppFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/stepback_app_files_XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    const std::string command = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  std::string path(const char* name) const { return dir_ + "/" + name; }

  std::string dir_;
};

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::uint32_t crc_of(const std::string& s, std::size_t n) {
  return https::crc32c(https::ConstBytes{reinterpret_cast<const std::uint8_t*>(s.data()), n});
}

// The body of the tests' download: 300 bytes that differ from one offset to the next.
std::string body() {
  std::string b;
  for (int i = 0; i < 300; ++i) b.push_back(static_cast<char>('a' + i * 7 % 26));
  return b;
}

// A download's record counting the first `delivered` bytes of body(), with the whole body's
// CRC-32C announced, as a Download checkpoints it.
transfer::TransferState record(std::uint64_t delivered, const char* url = kUrl) {
  transfer::TransferState s;
  s.kind = transfer::TransferKind::kDownload;
  EXPECT_TRUE(s.set_url(url));
  EXPECT_TRUE(s.set_validator("\"v1\""));
  s.validator_is_etag = true;
  s.total_size = body().size();
  s.delivered = delivered;
  s.integrity.size = delivered;
  s.integrity.crc32c = crc_of(body(), static_cast<std::size_t>(delivered));
  s.integrity.expected_crc32c = https::Digest::crc32c(crc_of(body(), body().size()));
  s.crc32c = s.integrity.crc32c;
  return s;
}

bool write_through(DownloadFiles& files, std::uint64_t from, std::uint64_t to) {
  const std::string b = body();
  const https::ResponseSink sink = files.sink();
  return sink.write(sink.context, from,
                    https::ConstBytes{reinterpret_cast<const std::uint8_t*>(b.data()) + from,
                                      static_cast<std::size_t>(to - from)});
}

TEST_F(AppFiles, ARecordIsWrittenAtomicallyAndReadBack) {
  static StateFile file;
  ASSERT_TRUE(file.set_path(path("x.state").c_str()));
  transfer::TransferState out;
  EXPECT_EQ(file.load(&out), StateFile::Load::kAbsent);
  ASSERT_TRUE(file.store(record(120))) << file.message();
  EXPECT_FALSE(exists(path("x.state.tmp")));
  ASSERT_EQ(file.load(&out), StateFile::Load::kLoaded) << file.message();
  EXPECT_EQ(out.kind, transfer::TransferKind::kDownload);
  EXPECT_EQ(out.url(), kUrl);
  EXPECT_EQ(out.delivered, 120U);
  EXPECT_EQ(out.validator(), "\"v1\"");
  EXPECT_EQ(out.crc32c, crc_of(body(), 120));
  EXPECT_EQ(file.writes(), 1U);
  // A second store replaces the first.
  ASSERT_TRUE(file.store(record(200)));
  ASSERT_EQ(file.load(&out), StateFile::Load::kLoaded);
  EXPECT_EQ(out.delivered, 200U);
  EXPECT_TRUE(file.remove());
  EXPECT_FALSE(exists(path("x.state")));
  EXPECT_EQ(file.load(&out), StateFile::Load::kAbsent);
}

TEST_F(AppFiles, ACorruptOrForeignRecordIsRefusedInWords) {
  static StateFile file;
  ASSERT_TRUE(file.set_path(path("x.state").c_str()));
  ASSERT_TRUE(file.store(record(120)));
  std::string bytes = read_file(path("x.state"));
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
  write_file(path("x.state"), bytes);
  transfer::TransferState out;
  out.delivered = 7;
  EXPECT_EQ(file.load(&out), StateFile::Load::kRefused);
  EXPECT_EQ(out.delivered, 7U);  // Untouched.
  const std::string corrupt = file.message();
  EXPECT_NE(corrupt.find("refusing the state file '" + path("x.state") + "'"), std::string::npos)
      << corrupt;
  EXPECT_NE(corrupt.find(transfer::describe(transfer::StateStatus::kCorrupt)), std::string::npos)
      << corrupt;
  write_file(path("x.state"), "{\"offset\": 12}\n");
  EXPECT_EQ(file.load(&out), StateFile::Load::kRefused);
  EXPECT_NE(std::string(file.message()).find(transfer::describe(transfer::StateStatus::kForeign)),
            std::string::npos)
      << file.message();
  EXPECT_FALSE(file.set_path(std::string(kMaxPath, 'x').c_str()));
  EXPECT_NE(std::string(file.message()).find("too long"), std::string::npos);
}

TEST_F(AppFiles, AFreshDownloadGoesToThePartAndIsRenamedOnSuccess) {
  static DownloadFiles files;
  const std::string out = path("fw.bin");
  ASSERT_EQ(files.open(out.c_str(), kUrl), DownloadFiles::Open::kFresh) << files.message();
  EXPECT_EQ(files.resume(), nullptr);
  EXPECT_EQ(std::string(files.part_path()), out + ".part");
  EXPECT_EQ(std::string(files.state_path()), out + ".part.state");
  ASSERT_TRUE(write_through(files, 0, 100));
  const transfer::CheckpointSink checkpoints = files.checkpoints();
  ASSERT_TRUE(checkpoints.save(checkpoints.context, record(100)));
  EXPECT_TRUE(exists(out + ".part.state"));
  EXPECT_EQ(files.stored_delivered(), 100U);
  ASSERT_TRUE(write_through(files, 100, 300));
  EXPECT_FALSE(exists(out));
  ASSERT_TRUE(files.finish(true)) << files.message();
  EXPECT_EQ(read_file(out), body());
  EXPECT_FALSE(exists(out + ".part"));
  EXPECT_FALSE(exists(out + ".part.state"));
}

TEST_F(AppFiles, APartLongerThanItsCheckpointIsCutBackAndGoesOn) {
  const std::string out = path("fw.bin");
  write_file(out + ".part", body().substr(0, 250));
  static StateFile state;
  ASSERT_TRUE(state.set_path((out + ".part.state").c_str()));
  ASSERT_TRUE(state.store(record(180)));
  static DownloadFiles files;
  ASSERT_EQ(files.open(out.c_str(), kUrl), DownloadFiles::Open::kResumed) << files.message();
  ASSERT_NE(files.resume(), nullptr);
  EXPECT_EQ(files.resume()->delivered, 180U);
  EXPECT_EQ(read_file(out + ".part"), body().substr(0, 180));
  ASSERT_TRUE(write_through(files, 180, 300));
  ASSERT_TRUE(files.finish(true));
  EXPECT_EQ(read_file(out), body());
}

TEST_F(AppFiles, ADamagedKeptByteStartsOver) {
  const std::string out = path("fw.bin");
  std::string part = body().substr(0, 180);
  part[42] = static_cast<char>(part[42] ^ 1);
  write_file(out + ".part", part);
  static StateFile state;
  ASSERT_TRUE(state.set_path((out + ".part.state").c_str()));
  ASSERT_TRUE(state.store(record(180)));
  static DownloadFiles files;
  ASSERT_EQ(files.open(out.c_str(), kUrl), DownloadFiles::Open::kStartOver);
  EXPECT_NE(std::string(files.message()).find("no longer holds"), std::string::npos)
      << files.message();
  EXPECT_EQ(files.resume(), nullptr);
  EXPECT_EQ(read_file(out + ".part"), "");  // Emptied: the download starts at byte 0.
}

TEST_F(AppFiles, APartShorterThanItsCheckpointStartsOver) {
  const std::string out = path("fw.bin");
  write_file(out + ".part", body().substr(0, 50));
  static StateFile state;
  ASSERT_TRUE(state.set_path((out + ".part.state").c_str()));
  ASSERT_TRUE(state.store(record(180)));
  static DownloadFiles files;
  ASSERT_EQ(files.open(out.c_str(), kUrl), DownloadFiles::Open::kStartOver);
  EXPECT_NE(std::string(files.message()).find("holds fewer bytes"), std::string::npos)
      << files.message();
}

TEST_F(AppFiles, ARecordOfAnotherUrlOrAnUploadIsRefusedAndNothingChanges) {
  const std::string out = path("fw.bin");
  write_file(out + ".part", body().substr(0, 180));
  static StateFile state;
  ASSERT_TRUE(state.set_path(path("other.state").c_str()));
  ASSERT_TRUE(state.store(record(180, "https://example.test/other.bin")));
  static DownloadFiles files;
  ASSERT_EQ(files.open(out.c_str(), kUrl, path("other.state").c_str()),
            DownloadFiles::Open::kRefused);
  EXPECT_NE(std::string(files.message()).find("for another URL (https://example.test/other.bin)"),
            std::string::npos)
      << files.message();
  EXPECT_EQ(read_file(out + ".part"), body().substr(0, 180));
  // A pre-signed URL signed again: the record of another URL is taken up.
  EXPECT_EQ(files.open(out.c_str(), kUrl, path("other.state").c_str(), true),
            DownloadFiles::Open::kResumed)
      << files.message();
  files.keep();
  transfer::TransferState upload;
  upload.kind = transfer::TransferKind::kUpload;
  ASSERT_TRUE(upload.set_url(kUrl));
  ASSERT_TRUE(upload.set_session_uri("https://example.test/upload?upload_id=1"));
  upload.chunk_size = 256 * 1024;
  upload.total_size = 1024 * 1024;
  ASSERT_TRUE(state.store(upload));
  ASSERT_EQ(files.open(out.c_str(), kUrl, path("other.state").c_str()),
            DownloadFiles::Open::kRefused);
  EXPECT_NE(std::string(files.message()).find("not a download's"), std::string::npos)
      << files.message();
}

// A process killed after writing bytes past its checkpoint and before the next record: the
// next one goes on from the record, with the unrecorded bytes cut off, and ends whole.
TEST_F(AppFiles, AKillBetweenDataAndRecordLeavesAUsableState) {
  const std::string out = path("fw.bin");
  {
    static DownloadFiles first;
    ASSERT_EQ(first.open(out.c_str(), kUrl), DownloadFiles::Open::kFresh);
    ASSERT_TRUE(write_through(first, 0, 120));
    const transfer::CheckpointSink checkpoints = first.checkpoints();
    ASSERT_TRUE(checkpoints.save(checkpoints.context, record(120)));
    ASSERT_TRUE(write_through(first, 120, 170));  // The data, then the kill: no record.
    // What a killed process leaves: nothing closed or renamed by the library.
  }
  EXPECT_EQ(read_file(out + ".part").size(), 170U);
  static DownloadFiles second;
  ASSERT_EQ(second.open(out.c_str(), kUrl), DownloadFiles::Open::kResumed) << second.message();
  EXPECT_EQ(second.resume()->delivered, 120U);
  EXPECT_EQ(read_file(out + ".part"), body().substr(0, 120));
  ASSERT_TRUE(write_through(second, 120, 300));
  ASSERT_TRUE(second.finish(true));
  EXPECT_EQ(read_file(out), body());
}

TEST_F(AppFiles, AFailedDownloadKeepsACheckpointedPartAndDropsAnEmptyOne) {
  const std::string out = path("fw.bin");
  static DownloadFiles files;
  ASSERT_EQ(files.open(out.c_str(), kUrl), DownloadFiles::Open::kFresh);
  ASSERT_TRUE(write_through(files, 0, 60));
  ASSERT_TRUE(files.finish(false));  // No checkpoint: nothing to go on from.
  EXPECT_FALSE(exists(out + ".part"));
  ASSERT_EQ(files.open(out.c_str(), kUrl), DownloadFiles::Open::kFresh);
  ASSERT_TRUE(write_through(files, 0, 60));
  const transfer::CheckpointSink checkpoints = files.checkpoints();
  ASSERT_TRUE(checkpoints.save(checkpoints.context, record(60)));
  ASSERT_TRUE(files.finish(false));
  EXPECT_TRUE(exists(out + ".part"));
  EXPECT_TRUE(exists(out + ".part.state"));
  EXPECT_FALSE(exists(out));
}

TEST_F(AppFiles, ARestartEmptiesThePart) {
  const std::string out = path("fw.bin");
  static DownloadFiles files;
  ASSERT_EQ(files.open(out.c_str(), kUrl), DownloadFiles::Open::kFresh);
  ASSERT_TRUE(write_through(files, 0, 60));
  const https::ResponseSink sink = files.sink();
  ASSERT_TRUE(sink.restart(sink.context));
  EXPECT_EQ(read_file(out + ".part"), "");
  files.discard();
  EXPECT_FALSE(exists(out + ".part"));
}

}  // namespace
}  // namespace stepback::app

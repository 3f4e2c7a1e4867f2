// The file domain without HTTP: real stores (SQLite in a temporary directory) and blobs.
#include "files/file_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "fetch/fetcher.h"
#include "store/stores.h"
#include "util/base64.h"
#include "util/random.h"

namespace imago::files {
namespace {

// A 1x1 PNG.
const std::string& png() {
  static const std::string b = *base64_decode(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==");
  return b;
}

class FileServiceTest : public ::testing::Test {
 protected:
  FileServiceTest() : fetcher_(false) {
    char tmpl[] = "/tmp/imago-files-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto st = open_stores("sqlite:" + dir_ + "/db", clock_);
    EXPECT_TRUE(st.ok()) << st.status().message();
    stores_ = std::move(st).value();
    auto b = make_fs_blob_store(dir_ + "/blobs");
    EXPECT_TRUE(b.ok());
    blobs_ = std::move(b).value();
    service_ = std::make_unique<FileService>(
        FileServiceDeps{blobs_.get(), stores_.files.get(), stores_.jobs.get(), &fetcher_, &clock_});
    KeyMaterial km{"svc-" + random_base62(12), "imago_sk_x", "abcd"};
    account_ = stores_.accounts->create_account("a", Plan::kFree, 0, "default", km)->first.id;
  }
  ~FileServiceTest() override {
    service_.reset();
    stores_ = Stores();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Reads nothing of the request until called; counts the calls.
  std::function<Result<UploadInput>()> bytes_input(std::string bytes) {
    return [this, bytes]() -> Result<UploadInput> {
      ++reads_;
      UploadInput in;
      in.owned = bytes;
      return in;
    };
  }

  bool blob_exists(const std::string& key) { return *blobs_->exists(key); }

  std::string dir_;
  ManualClock clock_;
  fetch::Fetcher fetcher_;
  Stores stores_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<FileService> service_;
  std::string account_;
  int reads_ = 0;
};

TEST_F(FileServiceTest, WriteFileRecordsTheBytesWritten) {
  FileRecord f;
  f.id = new_id("file");
  f.account_id = account_;
  f.purpose = "upload";
  f.kind = "image";
  f.mime = "image/png";
  f.ext = "png";
  f.blob_key = "uploads/" + account_ + "/" + f.id + ".png";
  ASSERT_TRUE(write_file(*blobs_, *stores_.files, f, blob_source_of(png())).ok());
  EXPECT_EQ(f.size, static_cast<int64_t>(png().size()));
  auto stored = stores_.files->get(account_, f.id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->size, f.size);
  EXPECT_EQ(*blobs_->get(f.blob_key), png());
}

TEST_F(FileServiceTest, AFailedRecordLeavesNoBlob) {
  FileRecord f;
  f.id = new_id("file");
  f.account_id = account_;
  f.blob_key = "uploads/" + account_ + "/" + f.id + ".png";
  int recorded = 0;
  Status st = write_file(*blobs_, *stores_.files, f, blob_source_of(png()), [&](const FileRecord& written) {
    ++recorded;
    EXPECT_TRUE(blob_exists(written.blob_key));  // the blob is whole before the record is made
    return Status::Conflict("the record could not be made");
  });
  EXPECT_EQ(st.code(), Code::kConflict);
  EXPECT_EQ(recorded, 1);
  EXPECT_FALSE(blob_exists(f.blob_key));
  EXPECT_EQ(stores_.files->get(account_, f.id).status().code(), Code::kNotFound);
}

TEST_F(FileServiceTest, AFailedBlobWriteRecordsNothing) {
  FileRecord f;
  f.id = new_id("file");
  f.account_id = account_;
  f.blob_key = "uploads/" + account_ + "/" + f.id + ".png";
  int recorded = 0;
  Status st = write_file(
      *blobs_, *stores_.files, f,
      [](char*, size_t) -> Result<size_t> { return Status::Internal("source failed"); },
      [&](const FileRecord&) {
        ++recorded;
        return Status::Ok();
      });
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(recorded, 0);
  EXPECT_FALSE(blob_exists(f.blob_key));
}

// A spooled upload (a range of the request's spool file, as a multipart part is) is typed from
// its first bytes and copied into the store piece by piece: stored intact, the spool untouched.
TEST_F(FileServiceTest, UploadFromASpoolFileRangeIsStoredIntact) {
  std::string video(
      "\x00\x00\x00\x18"
      "ftypmp42",
      12);
  video.resize(static_cast<size_t>(kBlobChunkBytes) * 2 + 12345);
  for (size_t i = 12; i < video.size(); ++i) video[i] = static_cast<char>(i * 7919 % 251);
  auto spool = SpoolFile::create(dir_ + "/spool");
  ASSERT_TRUE(spool.ok()) << spool.status().message();
  std::shared_ptr<SpoolFile> file = std::move(spool).value();
  const std::string before = "--boundary and part headers\r\n\r\n";
  ASSERT_TRUE(file->append(before.data(), before.size()).ok());
  ASSERT_TRUE(file->append(video.data(), video.size()).ok());
  ASSERT_TRUE(file->append("\r\n--b--", 7).ok());
  auto f = service_->upload(account_, 0, [&]() -> Result<UploadInput> {
    UploadInput in;
    in.bytes = BodyBytes(file, static_cast<int64_t>(before.size()), static_cast<int64_t>(video.size()));
    return in;
  });
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->kind, "video");
  EXPECT_EQ(f->size, static_cast<int64_t>(video.size()));
  auto stored = blobs_->get(f->blob_key);
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(*stored == video);  // not EXPECT_EQ: a failure would print 2 MB
}

TEST_F(FileServiceTest, UploadSniffsStoresAndRecords) {
  auto f = service_->upload(account_, 0, [&]() -> Result<UploadInput> {
    UploadInput in;
    in.bytes = BodyBytes(png());  // as a multipart part would be: not copied
    in.name = "dot.png";
    return in;
  });
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->kind, "image");
  EXPECT_EQ(f->mime, "image/png");
  EXPECT_EQ(f->purpose, "upload");
  EXPECT_EQ(f->original_name, "dot.png");
  EXPECT_EQ(f->size, static_cast<int64_t>(png().size()));
  auto d = service_->open(account_, f->id);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(*d->reader->read(0, 1 << 20), png());
  // Another account sees nothing.
  EXPECT_EQ(service_->open("acct_other", f->id).status().code(), Code::kNotFound);
}

TEST_F(FileServiceTest, AFullAccountIsRefusedBeforeAnythingIsRead) {
  const int64_t quota = static_cast<int64_t>(png().size());
  ASSERT_TRUE(service_->upload(account_, quota, bytes_input(png())).ok());
  EXPECT_EQ(reads_, 1);
  auto again = service_->upload(account_, quota, bytes_input(png()));
  EXPECT_EQ(again.status().code(), Code::kQuotaExceeded) << again.status().message();
  EXPECT_EQ(reads_, 1);
}

TEST_F(FileServiceTest, UnsupportedOrMismatchedContentIsRefusedAndNothingStays) {
  auto text = service_->upload(account_, 0, bytes_input("just some text"));
  EXPECT_EQ(text.status().code(), Code::kUnsupportedMedia);
  auto mismatch = service_->upload(account_, 0, [&]() -> Result<UploadInput> {
    UploadInput in;
    in.owned = png();
    in.wanted_type = "video";
    return in;
  });
  EXPECT_EQ(mismatch.status().code(), Code::kUnsupportedMedia);
  EXPECT_NE(mismatch.status().message().find("file_type is video"), std::string::npos);
  EXPECT_EQ(*stores_.files->usage_bytes(account_), 0);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/blobs/uploads"));
}

TEST_F(FileServiceTest, AReadErrorIsTheUploadsError) {
  auto r =
      service_->upload(account_, 0, []() -> Result<UploadInput> { return Status::Invalid("bad field"); });
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "bad field");
}

TEST_F(FileServiceTest, UrlsGoThroughTheGuard) {
  auto r = service_->upload(account_, 0, []() -> Result<UploadInput> {
    UploadInput in;
    in.url = "http://127.0.0.1:1/x.png";
    return in;
  });
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message().rfind("file_url: refusing", 0), 0u) << r.status().message();
  auto bad = service_->upload(account_, 0, []() -> Result<UploadInput> {
    UploadInput in;
    in.url = "ftp://example.com/x.png";
    return in;
  });
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
}

TEST_F(FileServiceTest, RemoveUploadDeletesRecordAndBlobButNotAgentFiles) {
  auto f = service_->upload(account_, 0, bytes_input(png()));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(service_->remove_upload(account_, f->id).ok());
  EXPECT_FALSE(blob_exists(f->blob_key));
  EXPECT_EQ(stores_.files->get(account_, f->id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->remove_upload(account_, f->id).code(), Code::kNotFound);

  FileRecord model;
  model.id = new_id("file");
  model.account_id = account_;
  model.agent_code = "A12BCD3456";
  model.purpose = "model";
  model.blob_key = "agents/" + account_ + "/A12BCD3456/" + model.id + ".imx";
  ASSERT_TRUE(write_file(*blobs_, *stores_.files, model, blob_source_of("imx")).ok());
  Status st = service_->remove_upload(account_, model.id);
  EXPECT_EQ(st.code(), Code::kConflict);
  EXPECT_NE(st.message().find("delete the agent instead"), std::string::npos);
  EXPECT_TRUE(blob_exists(model.blob_key));
}

}  // namespace
}  // namespace imago::files

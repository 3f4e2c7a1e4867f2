#include "blobs/blob_store.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace imago {
namespace {

class FsBlobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/imago-blobs-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto s = make_fs_blob_store(dir_ + "/blobs");
    ASSERT_TRUE(s.ok());
    store_ = std::move(s).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  std::unique_ptr<BlobStore> store_;
};

TEST_F(FsBlobStoreTest, PutGetOverwriteDelete) {
  ASSERT_TRUE(store_->put("agents/A1/model.imx", std::string("a\0b", 3)).ok());
  EXPECT_EQ(*store_->get("agents/A1/model.imx"), std::string("a\0b", 3));
  EXPECT_EQ(*store_->size("agents/A1/model.imx"), 3);
  EXPECT_TRUE(*store_->exists("agents/A1/model.imx"));
  ASSERT_TRUE(store_->put("agents/A1/model.imx", "second").ok());
  EXPECT_EQ(*store_->get("agents/A1/model.imx"), "second");
  ASSERT_TRUE(store_->remove("agents/A1/model.imx").ok());
  EXPECT_FALSE(*store_->exists("agents/A1/model.imx"));
  EXPECT_EQ(store_->get("agents/A1/model.imx").status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->remove("agents/A1/model.imx").ok());  // idempotent
  // No temporary files are left behind.
  for (auto& e : std::filesystem::recursive_directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

TEST_F(FsBlobStoreTest, RejectsUnsafeKeys) {
  for (const char* k : {"", "/abs", "a/../b", "..", "a//b", "a/./b", "a b", "a/", "x\\y", "a/b\n"}) {
    EXPECT_FALSE(valid_blob_key(k)) << k;
    EXPECT_FALSE(store_->put(k, "x").ok()) << k;
  }
  EXPECT_TRUE(valid_blob_key("files/file_AbC123/content.png"));
}

}  // namespace
}  // namespace imago

#include "util/spool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace imago {
namespace {

std::string temp_dir() {
  return ::testing::TempDir() + "spool_util_" + std::to_string(::getpid());
}

std::shared_ptr<SpoolFile> spool_of(const std::string& data) {
  auto f = SpoolFile::create(temp_dir());
  EXPECT_TRUE(f.ok()) << f.status().message();
  std::shared_ptr<SpoolFile> file = std::move(f).value();
  EXPECT_TRUE(file->append(data.data(), data.size()).ok());
  return file;
}

TEST(Spool, FileIsNamelessAndCountedWhileOpen) {
  const int64_t before = SpoolFile::open_count();
  {
    auto f = spool_of("hello");
    EXPECT_EQ(SpoolFile::open_count(), before + 1);
    EXPECT_EQ(f->size(), 5);
    EXPECT_TRUE(std::filesystem::is_empty(temp_dir()));  // nothing to clean up, ever
  }
  EXPECT_EQ(SpoolFile::open_count(), before);
}

TEST(Spool, BodyBytesReadFindAndSliceAlikeInMemoryAndInAFile) {
  // A needle across the 256 KiB search window's seam, and one at the very end.
  std::string data(600 * 1024, 'a');
  data.replace(256 * 1024 - 3, 6, "NEEDLE");
  data.replace(data.size() - 4, 4, "TAIL");
  const BodyBytes mem(data);
  const BodyBytes file = BodyBytes::whole(spool_of(data));
  for (const BodyBytes* b : {&mem, &file}) {
    EXPECT_EQ(b->size(), static_cast<int64_t>(data.size()));
    EXPECT_EQ(*b->find("NEEDLE", 0), 256 * 1024 - 3);
    EXPECT_EQ(*b->find("NEEDLE", 256 * 1024), -1);
    EXPECT_EQ(*b->find("TAIL", 0), static_cast<int64_t>(data.size()) - 4);
    EXPECT_EQ(*b->find("absent", 0), -1);
    BodyBytes s = b->slice(256 * 1024 - 3, 6);
    EXPECT_EQ(*s.text(0, 100), "NEEDLE");
    EXPECT_EQ(*s.find("DLE", 0), 3);
    char buf[4];
    EXPECT_EQ(*s.read(4, buf, sizeof buf), 2u);  // only what the slice holds
    EXPECT_EQ(std::string(buf, 2), "LE");
    EXPECT_EQ(*s.read(6, buf, sizeof buf), 0u);
  }
  EXPECT_TRUE(mem.in_memory());
  EXPECT_FALSE(file.in_memory());
}

}  // namespace
}  // namespace imago

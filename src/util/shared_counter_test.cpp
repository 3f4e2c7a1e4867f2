#include "util/shared_counter.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace imago {
namespace {

std::string temp_path() {
  char tmpl[] = "/tmp/imago-counter-XXXXXX";
  int fd = mkstemp(tmpl);
  EXPECT_GE(fd, 0);
  close(fd);
  std::filesystem::remove(tmpl);  // open() creates it
  return tmpl;
}

TEST(SharedCounter, StartsAtZeroAndTwoMappingsSeeEachOther) {
  std::string path = temp_path();
  auto a = SharedCounter::open(path);
  auto b = SharedCounter::open(path);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->load(), 0u);
  (*a)->increment();
  (*a)->increment();
  EXPECT_EQ((*b)->load(), 2u);
  // Reopening never resets a counter that has moved.
  auto c = SharedCounter::open(path);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->load(), 2u);
  std::filesystem::remove(path);
}

TEST(SharedCounter, AnIncrementInAnotherProcessIsSeen) {
  std::string path = temp_path();
  auto mine = SharedCounter::open(path);
  ASSERT_TRUE(mine.ok());
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // the child opens its own mapping, as a second process would
    auto theirs = SharedCounter::open(path);
    if (!theirs.ok()) _exit(1);
    for (int i = 0; i < 1000; ++i) (*theirs)->increment();
    _exit(0);
  }
  for (int i = 0; i < 1000; ++i) (*mine)->increment();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ((*mine)->load(), 2000u);  // no increment lost between the processes
  std::filesystem::remove(path);
}

TEST(SharedCounter, ACreatedFileTakesThePermissionsOfItsDatabase) {
  std::string db = temp_path(), path = temp_path();
  { std::ofstream(db) << "x"; }
  ASSERT_EQ(chmod(db.c_str(), 0660), 0);
  auto c = SharedCounter::open(path, db);
  ASSERT_TRUE(c.ok());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  std::filesystem::remove(db);
  std::filesystem::remove(path);
}

TEST(SharedCounter, UnusablePathIsAStatus) {
  auto r = SharedCounter::open("/nonexistent-dir/counter");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace imago

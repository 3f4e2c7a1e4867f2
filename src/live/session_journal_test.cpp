// The node's notes of its running sessions: what a crash leaves is read back whole, with the last
// sign of life; closed sessions, interrupted writes and foreign or broken files are not.
#include "live/session_journal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <filesystem>
#include <fstream>

namespace imago::live {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/imago-journal-XXXXXX";
    path = mkdtemp(t);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

SessionRecord record(const std::string& id) {
  SessionRecord s;
  s.session_id = id;
  s.account_id = "acct_1";
  s.agent_code = "guide";
  s.room_id = "lobby";
  s.billing_type = "avatar";
  s.started_us = 1'700'000'000'000'000;
  return s;
}

TEST(SessionJournal, WhatACrashLeavesIsReadBackWithItsLastSignOfLife) {
  TempDir d;
  SessionJournal j(d.path + "/live-sessions");
  j.opened(record("sess_a"));
  j.opened(record("sess_b"));
  j.closed("sess_b");
  // Pretend the last touch was long ago, then touch: the time moves to now.
  const std::string file = d.path + "/live-sessions/sess_a.session.json";
  struct utimbuf old {
    1'000'000'000, 1'000'000'000
  };
  ASSERT_EQ(utime(file.c_str(), &old), 0);
  auto before = j.leftovers();
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].last_alive_us, int64_t{1'000'000'000} * 1'000'000);
  j.alive("sess_a");
  auto left = j.leftovers();
  ASSERT_EQ(left.size(), 1u);
  const auto& r = left[0].record;
  EXPECT_EQ(r.session_id, "sess_a");
  EXPECT_EQ(r.account_id, "acct_1");
  EXPECT_EQ(r.agent_code, "guide");
  EXPECT_EQ(r.room_id, "lobby");
  EXPECT_EQ(r.billing_type, "avatar");
  EXPECT_EQ(r.started_us, 1'700'000'000'000'000);
  EXPECT_GT(left[0].last_alive_us, int64_t{1'600'000'000} * 1'000'000);
  j.closed("sess_a");
  EXPECT_TRUE(j.leftovers().empty());
}

TEST(SessionJournal, BrokenInterruptedAndForeignFilesAreNotSessions) {
  TempDir d;
  SessionJournal j(d.path);
  std::ofstream(d.path + "/sess_x.session.json") << "{\"session_id\":";  // cut
  std::ofstream(d.path + "/sess_y.session.json.tmp") << "{}";            // interrupted
  std::ofstream(d.path + "/sess_z.session.json")
      << R"({"session_id":"other","account_id":"a"})";  // name differs
  std::ofstream(d.path + "/notes.txt") << "kept";
  EXPECT_TRUE(j.leftovers().empty());
  EXPECT_FALSE(fs::exists(d.path + "/sess_x.session.json"));
  EXPECT_FALSE(fs::exists(d.path + "/sess_y.session.json.tmp"));
  EXPECT_FALSE(fs::exists(d.path + "/sess_z.session.json"));
  EXPECT_TRUE(fs::exists(d.path + "/notes.txt"));
  // Ids that could name a path elsewhere are never written.
  j.opened(record("../escape"));
  EXPECT_FALSE(fs::exists(d.path + "/../escape.session.json"));
  EXPECT_TRUE(j.leftovers().empty());
}

TEST(SessionJournal, WithoutADirectoryItKeepsNothing) {
  SessionJournal j("");
  EXPECT_FALSE(j.enabled());
  j.opened(record("sess_a"));
  EXPECT_TRUE(j.leftovers().empty());
}

}  // namespace
}  // namespace imago::live

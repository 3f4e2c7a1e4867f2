#include "store/sqlite/db.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace imago::sqlite {
namespace {

using sql::Connection;

// A read that stops after the first row must not pin its snapshot: after another connection
// commits, a write transaction on the first connection has to succeed.
TEST(Db, StatementsLeftMidResultDoNotBlockLaterWrites) {
  char tmpl[] = "/tmp/imago-db-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  auto db = Db::open(dir + "/t.db", 2).value();
  ASSERT_TRUE(db->write([](Connection& c) -> Status {
                  c.exec("CREATE TABLE t(x INTEGER)");
                  c.exec("INSERT INTO t VALUES (1), (2), (3)");
                  return Status::Ok();
                }).ok());
  for (int round = 0; round < 5; ++round) {
    // Connection A reads only the first of several rows; while A is checked out, connection B
    // commits a write, so A's snapshot is now old. A goes back to the pool last, so the next
    // write runs on A.
    auto first = db->read([&](Connection& c) -> int64_t {
      auto q = c.prepare("SELECT x FROM t ORDER BY x");
      q.step();
      Status other = db->write([&](Connection& b) -> Status {
        b.prepare("INSERT INTO t VALUES (?)").bind(1, 100 + round).run();
        return Status::Ok();
      });
      EXPECT_TRUE(other.ok()) << other.message();
      return q.col_int(0);
    });
    ASSERT_TRUE(first.ok());
    Status w = db->write([&](Connection& c) -> Status {
      c.prepare("INSERT INTO t VALUES (?)").bind(1, round + 10).run();
      return Status::Ok();
    });
    ASSERT_TRUE(w.ok()) << "round " << round << ": " << w.message();
  }
  db.reset();
  std::filesystem::remove_all(dir);
}

TEST(Db, FailedStatusRollsBack) {
  char tmpl[] = "/tmp/imago-db-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  auto db = Db::open(dir + "/t.db", 2).value();
  ASSERT_TRUE(db->write([](Connection& c) -> Status {
                  c.exec("CREATE TABLE t(x INTEGER)");
                  return Status::Ok();
                }).ok());
  Status s = db->write([](Connection& c) -> Status {
    c.exec("INSERT INTO t VALUES (1)");
    return Status::Invalid("no");
  });
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  auto n = db->read([](Connection& c) -> int64_t {
    auto q = c.prepare("SELECT COUNT(*) FROM t");
    q.step();
    return q.col_int(0);
  });
  EXPECT_EQ(*n, 0);
  db.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace imago::sqlite

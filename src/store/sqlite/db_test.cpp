#include "store/sqlite/db.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "billing/operations.h"
#include "store/sql/schema.h"
#include "store/sql/sql_stores.h"

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

// Migration 205 (agent codes per account) keeps a database written before it working: its agents,
// their files with the old blob keys and their queued jobs are found by (account, code), and
// another account may now use the same code.
TEST(Migrations, AgentCodesPerAccountKeepExistingAgents) {
  char tmpl[] = "/tmp/imago-db-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  {
    auto db = Db::open(dir + "/t.db", 2).value();
    std::vector<sql::Migration> before;
    for (const auto& m : sql::migrations())
      if (m.version != 205) before.push_back(m);
    ASSERT_TRUE(sql::migrate(*db, before).ok());
    ASSERT_TRUE(
        db->write([](Connection& c) -> Status {
            for (const char* code : {"old-bot", "A12BCD3456"}) {
              c.prepare(
                   "INSERT INTO agents(code, account_id, name, status, system_prompt, model, aspect_ratio,"
                   " video_aspect_ratio, duration, created_at, updated_at, voice)"
                   " VALUES(?, 'acct_old', 'Old', 'processing', 'hi', 'essence', '16:9', '16:9', 10, 1, 1,"
                   " '{}')")
                  .bind(1, code)
                  .run();
            }
            c.exec(
                "INSERT INTO files(id, account_id, agent_code, purpose, blob_key, kind, mime, ext, size,"
                " created_at) VALUES('file_old', 'acct_old', 'old-bot', 'input', "
                "'agents/old-bot/file_old.png',"
                " 'image', 'image/png', 'png', 3, 1)");
            c.exec(
                "INSERT INTO jobs(id, kind, lane, account_id, subject, state, max_attempts, run_at,"
                " created_at, updated_at) VALUES('job_old', 'agent_generate', 'generate', 'acct_old',"
                " 'old-bot', 'queued', 3, 0, 0, 0)");
            return Status::Ok();
          }).ok());
  }
  auto db = Db::open(dir + "/t.db", 2).value();
  ASSERT_TRUE(sql::migrate(*db).ok());
  ManualClock clock;
  auto agents = sql::make_agent_store(*db, clock);
  auto jobs = sql::make_job_store(*db, clock);
  auto old = agents->get("acct_old", "old-bot");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->name, "Old");
  EXPECT_EQ(agents->list("acct_old", std::nullopt, 10, 0)->total, 2);
  EXPECT_EQ(agents->get("acct_new", "old-bot").status().code(), Code::kNotFound);
  EXPECT_FALSE(*agents->code_taken("acct_new", "old-bot"));

  // Another account takes the same code (it needs credits for the charge).
  ASSERT_TRUE(db->write([](Connection& c) -> Status {
                  c.exec(
                      "INSERT INTO accounts(id, name, plan, topup_credits, created_at)"
                      " VALUES('acct_new', 'New', 'free', 1000, 1)");
                  return Status::Ok();
                }).ok());
  AgentRecord a;
  a.code = "old-bot";
  a.account_id = "acct_new";
  a.name = "New";
  a.system_prompt = "hi";
  NewJob job;
  job.id = "job_new";
  job.kind = std::string(kJobAgentGenerate);
  job.account_id = "acct_new";
  job.subject = a.code;
  auto created = agents->create(a, {}, billing::agent_generation_charge("acct_new", job.id, a.code), job);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(agents->get("acct_old", "old-bot")->name, "Old");
  EXPECT_EQ(agents->get("acct_new", "old-bot")->name, "New");

  // Deleting the old agent cancels its old job and queues its old blob for deletion; the new
  // account's agent and job stay.
  ASSERT_TRUE(agents->remove("acct_old", "old-bot").ok());
  EXPECT_EQ(jobs->get("job_old")->state, "cancelled");
  EXPECT_EQ(jobs->get("job_new")->state, "queued");
  auto cleanup = jobs->list_by_subject("blobs:old-bot");
  ASSERT_EQ(cleanup->size(), 1u);
  EXPECT_NE((*cleanup)[0].payload.find("agents/old-bot/file_old.png"), std::string::npos);
  EXPECT_TRUE(agents->get("acct_new", "old-bot").ok());
  db.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace imago::sqlite

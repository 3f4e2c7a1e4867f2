// The PostgreSQL layer and what only a shared database has to prove: two "nodes" (two pools on one
// database) migrating at once, charging one account at once, claiming one queue at once.
#include "store/postgres/db.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "store/postgres/pg_stores.h"
#include "store/postgres/test_db.h"
#include "store/postgres/test_postgres.h"
#include "store/sql/schema.h"
#include "store/sql/sql_stores.h"

namespace imago::pg {
namespace {

using sql::Connection;
using sql::make_account_store;
using sql::make_job_store;
using sql::make_ledger_store;

std::unique_ptr<Db> open_node(const std::string& url) {
  auto db = Db::open(url, 8);
  EXPECT_TRUE(db.ok()) << db.status().message();
  return std::move(db).value();
}

TEST(PgPlaceholders, RewritesQuestionMarksOutsideQuotes) {
  int n = 0;
  EXPECT_EQ(rewrite_placeholders("SELECT ? , '?' , ?", &n), "SELECT $1 , '?' , $2");
  EXPECT_EQ(n, 2);
  EXPECT_EQ(rewrite_placeholders("WHERE a = ?2 AND b = ?1 AND c = ?2::bigint", &n),
            "WHERE a = $2 AND b = $1 AND c = $2::bigint");
  EXPECT_EQ(n, 2);
}

TEST(PgDb, MigratesOnceWhenNodesStartTogether) {
  TestDatabase database;
  std::vector<std::thread> nodes;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i) {
    nodes.emplace_back([&] {
      auto db = Db::open(database.url(), 2);
      if (!db.ok() || !sql::migrate(**db).ok()) ++failures;
    });
  }
  for (auto& t : nodes) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto db = open_node(database.url());
  auto applied = sql::applied_migrations(*db);
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(applied->size(), sql::migrations().size());
  EXPECT_TRUE(sql::migrate(*db).ok());  // nothing left to do
}

TEST(PgDb, FailedStatusRollsBackAndErrorsBecomeStatus) {
  TestDb t;
  Status s = t.db().write([](Connection& c) -> Status {
    c.prepare("INSERT INTO cluster_secrets(name, value, created_at) VALUES(?, ?, 0)")
        .bind(1, "a")
        .bind(2, "b")
        .run();
    return Status::Conflict("no");
  });
  EXPECT_EQ(s.code(), Code::kConflict);
  auto n = t.db().read([](Connection& c) {
    auto q = c.prepare("SELECT COUNT(*) FROM cluster_secrets");
    q.step();
    return q.col_int(0);
  });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  Status bad = t.db().write([](Connection& c) -> Status {
    c.prepare("SELECT no_such_column FROM cluster_secrets").run();
    return Status::Ok();
  });
  EXPECT_EQ(bad.code(), Code::kInternal);
  EXPECT_NE(bad.message().find("no_such_column"), std::string::npos);
}

TEST(PgDb, ReconnectsAfterTheServerDropsTheConnection) {
  TestDb t;
  auto pid = t.db().read([](Connection& c) {
    auto q = c.prepare("SELECT pg_backend_pid()");
    q.step();
    return q.col_int(0);
  });
  ASSERT_TRUE(pid.ok());
  // Another session terminates ours (what a database restart or failover looks like).
  auto killer = open_node(t.url());
  ASSERT_TRUE(killer
                  ->once([&](Connection& c) -> Status {
                    c.prepare("SELECT pg_terminate_backend(?::int)").bind(1, *pid).run();
                    return Status::Ok();
                  })
                  .ok());
  // The next transaction finds the connection broken before BEGIN is acknowledged and runs again
  // on a fresh one: nothing had been sent that could have committed.
  auto again = t.db().read([](Connection& c) {
    auto q = c.prepare("SELECT pg_backend_pid()");
    q.step();
    return q.col_int(0);
  });
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_NE(*again, *pid);
}

TEST(PgDb, BytesRoundTrip) {
  TestDb t;
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  auto back = t.db().write([&](Connection& c) {
    c.prepare("INSERT INTO blob_chunks(key, version, n, data) VALUES('k', 1, 0, ?)")
        .bind_blob(1, bytes)
        .run();
    auto q = c.prepare("SELECT data FROM blob_chunks WHERE key = 'k'");
    q.step();
    return q.col_blob(0);
  });
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, bytes);
}

// The money property across nodes: N threads on two pools charge one account at once; exactly the
// affordable number of charges succeed and the ledger adds up to the balance.
TEST(PgCluster, ConcurrentChargesOnTwoNodesNeverOverspend) {
  TestDb t;
  SystemClock& clock = SystemClock::instance();
  auto node_b = open_node(t.url());
  auto accounts = make_account_store(t.db(), clock);
  auto ledger_a = make_ledger_store(t.db(), clock);
  auto ledger_b = make_ledger_store(*node_b, clock);
  auto acct = accounts->create_account("a", Plan::kPro, 100, "k", KeyMaterial{"h1", "p", "l4"});
  ASSERT_TRUE(acct.ok()) << acct.status().message();
  const std::string id = acct->first.id;

  constexpr int kThreads = 8, kPerThread = 10, kCost = 7;  // 80 attempts of 7 on 100 credits: 14 fit
  std::atomic<int> ok{0}, short_funds{0}, other{0};
  std::vector<std::thread> threads;
  for (int t_i = 0; t_i < kThreads; ++t_i) {
    threads.emplace_back([&, t_i] {
      LedgerStore& ledger = (t_i % 2) ? *ledger_b : *ledger_a;
      for (int i = 0; i < kPerThread; ++i) {
        LedgerOp op;
        op.account_id = id;
        op.kind = LedgerKind::kCharge;
        op.amount = kCost;
        op.reason = "test";
        op.operation_key = "op-" + std::to_string(t_i) + "-" + std::to_string(i);
        auto r = ledger.apply(op);
        if (r.ok())
          ++ok;
        else if (r.status().code() == Code::kInsufficientFunds)
          ++short_funds;
        else
          ++other;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(ok.load(), 100 / kCost);
  EXPECT_EQ(short_funds.load(), kThreads * kPerThread - 100 / kCost);
  auto bal = ledger_a->balance(id);
  ASSERT_TRUE(bal.ok());
  EXPECT_EQ(bal->total(), 100 - (100 / kCost) * kCost);
  auto page = ledger_a->list(id, 1000, 0);
  ASSERT_TRUE(page.ok());
  int64_t sum = 0;
  for (const auto& e : page->entries) sum += e.amount;
  EXPECT_EQ(sum, bal->total());
}

// One operation key sent to both nodes at once charges once.
TEST(PgCluster, SameOperationKeyOnTwoNodesChargesOnce) {
  TestDb t;
  SystemClock& clock = SystemClock::instance();
  auto node_b = open_node(t.url());
  auto accounts = make_account_store(t.db(), clock);
  auto ledger_a = make_ledger_store(t.db(), clock);
  auto ledger_b = make_ledger_store(*node_b, clock);
  auto acct = accounts->create_account("a", Plan::kPro, 50, "k", KeyMaterial{"h2", "p", "l4"});
  ASSERT_TRUE(acct.ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      LedgerOp op{acct->first.id, LedgerKind::kCharge, 5, "test", "same-key", std::nullopt};
      if (((i % 2) ? *ledger_b : *ledger_a).apply(op).ok()) ++ok;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 6);  // every caller gets the one entry back
  EXPECT_EQ(ledger_a->balance(acct->first.id)->total(), 45);
  EXPECT_EQ(ledger_a->list(acct->first.id, 10, 0)->total, 2);  // initial top-up + one charge
}

// Workers on two nodes drain one queue: every job is claimed exactly once.
TEST(PgCluster, ClaimsUnderContentionAreExclusive) {
  TestDb t;
  SystemClock& clock = SystemClock::instance();
  auto node_b = open_node(t.url());
  auto jobs_a = make_job_store(t.db(), clock);
  auto jobs_b = make_job_store(*node_b, clock);
  constexpr int kJobs = 60;
  for (int i = 0; i < kJobs; ++i) {
    NewJob j;
    j.kind = std::string(kJobWebhookDelivery);
    j.account_id = "usr_" + std::to_string(i % 5);
    j.subject = "d" + std::to_string(i);
    ASSERT_TRUE(jobs_a->enqueue(j).ok());
  }
  std::mutex mu;
  std::multiset<std::string> claimed;
  std::atomic<int> errors{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 6; ++w) {
    workers.emplace_back([&, w] {
      JobStore& js = (w % 2) ? *jobs_b : *jobs_a;
      const std::string owner = "w" + std::to_string(w);
      while (true) {
        auto c = js.claim(kLaneLight, owner, 60'000'000);
        if (!c.ok()) {
          ++errors;
          return;
        }
        if (!c->has_value()) return;
        {
          std::lock_guard lock(mu);
          claimed.insert((*c)->id);
        }
        if (!*js.complete((*c)->id, owner)) ++errors;
      }
    });
  }
  for (auto& th : workers) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(claimed.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()).size(), static_cast<size_t>(kJobs));
}

TEST(PgCluster, ClaimPrefersAccountsWithFewerRunningJobs) {
  TestDb t;
  ManualClock clock;
  auto jobs = make_job_store(t.db(), clock);
  auto add = [&](const std::string& account) {
    NewJob j;
    j.kind = std::string(kJobWebhookDelivery);
    j.account_id = account;
    auto id = jobs->enqueue(j);
    clock.advance_us(1000);
    return *id;
  };
  add("usr_busy");
  add("usr_busy");
  add("usr_busy");
  std::string quiet = add("usr_quiet");
  ASSERT_TRUE(jobs->claim(kLaneLight, "w1", 60'000'000)->has_value());  // usr_busy's first
  auto next = jobs->claim(kLaneLight, "w2", 60'000'000);
  ASSERT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ((*next)->id, quiet);  // not usr_busy's second, though it is older
}

TEST(PgCluster, EnqueueWakesListenersOnOtherNodes) {
  TestDb t;
  std::mutex mu;
  std::condition_variable cv;
  int wakes = 0;
  Listener listener(t.url(), {kJobsChannel}, [&](const std::string&, const std::string& payload) {
    std::lock_guard lock(mu);
    if (payload == "light") ++wakes;
    cv.notify_all();
  });
  auto node_b = open_node(t.url());
  auto jobs = make_job_store(*node_b, SystemClock::instance());
  // The listener connects asynchronously: enqueue until one wake-up arrives (bounded).
  std::unique_lock lock(mu);
  for (int i = 0; i < 50 && wakes == 0; ++i) {
    lock.unlock();
    NewJob j;
    j.kind = std::string(kJobWebhookDelivery);
    j.account_id = "usr_a";
    ASSERT_TRUE(jobs->enqueue(j).ok());
    lock.lock();
    cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return wakes > 0; });
  }
  EXPECT_GT(wakes, 0);
}

}  // namespace
}  // namespace imago::pg

#include "store/postgres/pg_rate_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "store/postgres/test_db.h"
#include "store/sql/sql_stores.h"

namespace imago {
namespace {

TEST(PgRateLimiter, BucketStartsFullAndRefusesWhenEmpty) {
  pg::TestDb t;
  auto limiter = make_pg_rate_limiter(t.db());
  for (int i = 0; i < 5; ++i) {
    auto d = limiter->take("acct:a:read", 5);
    EXPECT_TRUE(d.allowed) << i;
    EXPECT_EQ(d.limit, 5);
    EXPECT_EQ(d.remaining, 4 - i);
  }
  auto d = limiter->take("acct:a:read", 5);
  EXPECT_FALSE(d.allowed);
  EXPECT_GE(d.retry_after_s, 1);
  EXPECT_LE(d.retry_after_s, 12);
  EXPECT_TRUE(limiter->take("acct:b:read", 5).allowed);  // buckets are per key
}

// Each decision carries the key-change counter read in the same statement (and so the same
// round trip); a revocation committed through another node's pool shows in the next decision.
TEST(PgRateLimiter, DecisionsCarryTheKeyChangeCounterOfTheirOwnStatement) {
  pg::TestDb t;
  auto db_b = pg::Db::open(t.url(), 2);
  ASSERT_TRUE(db_b.ok());
  auto limiter = make_pg_rate_limiter(t.db());
  ManualClock clock;
  auto accounts = sql::make_account_store(**db_b, clock);
  auto created = accounts->create_account("n", Plan::kFree, 0, "default", KeyMaterial{"h", "p", "l4"});
  ASSERT_TRUE(created.ok()) << created.status().message();
  const uint64_t before = accounts->key_changes().value();
  auto d = limiter->take("acct:k:read", 100);
  ASSERT_TRUE(d.key_changes.has_value());
  EXPECT_EQ(*d.key_changes, before);
  ASSERT_TRUE(accounts->revoke_key(std::nullopt, created->second.id).ok());
  d = limiter->take("acct:k:read", 100);
  ASSERT_TRUE(d.key_changes.has_value());
  EXPECT_EQ(*d.key_changes, before + 1);
}

// A take for a remembered key lookup counts only while the counter still equals its tag: after a
// key change the bucket is left alone (so a plan change does not spend the refill at the old rate).
TEST(PgRateLimiter, ATakeForAStaleTagLeavesTheBucketAlone) {
  pg::TestDb t;
  auto limiter = make_pg_rate_limiter(t.db());
  ManualClock clock;
  auto accounts = sql::make_account_store(t.db(), clock);
  auto created = accounts->create_account("n", Plan::kFree, 0, "default", KeyMaterial{"h", "p", "l4"});
  ASSERT_TRUE(created.ok()) << created.status().message();
  const uint64_t tag = accounts->key_changes().value();
  auto d = limiter->take_if_unchanged("acct:s:write", 2, tag);
  EXPECT_TRUE(d.taken && d.allowed);
  EXPECT_EQ(d.remaining, 1);
  ASSERT_TRUE(accounts->revoke_key(std::nullopt, created->second.id).ok());
  d = limiter->take_if_unchanged("acct:s:write", 2, tag);
  EXPECT_FALSE(d.taken);
  ASSERT_TRUE(d.key_changes.has_value());
  EXPECT_EQ(*d.key_changes, tag + 1);
  d = limiter->take("acct:s:write", 2);  // the one token left is still there
  EXPECT_TRUE(d.taken && d.allowed);
  EXPECT_EQ(d.remaining, 0);
}

// Two nodes hammering one key: together they admit at most capacity + rate x T.
TEST(PgRateLimiter, TwoNodesShareOneBucket) {
  pg::TestDb t;
  auto db_b = pg::Db::open(t.url(), 4);
  ASSERT_TRUE(db_b.ok());
  auto a = make_pg_rate_limiter(t.db());
  auto b = make_pg_rate_limiter(**db_b);
  constexpr int kPerMinute = 30;
  std::atomic<int> allowed{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      RateLimiter& l = (i % 2) ? *b : *a;
      for (int n = 0; n < 40; ++n) {
        if (l.take("acct:shared:write", kPerMinute).allowed) ++allowed;
      }
    });
  }
  for (auto& th : threads) th.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(allowed.load(), kPerMinute);
  EXPECT_LE(allowed.load(), kPerMinute + static_cast<int>(seconds * kPerMinute / 60.0) + 1);
}

TEST(PgRateLimiter, ACapacityChangeAppliesToTheNextRequest) {
  pg::TestDb t;
  auto limiter = make_pg_rate_limiter(t.db());
  EXPECT_TRUE(limiter->take("k", 3).allowed);  // 2 left of 3
  // Downgraded: the refill is capped at the new capacity.
  auto d = limiter->take("k", 1);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.remaining, 0);
  EXPECT_FALSE(limiter->take("k", 1).allowed);
}

TEST(PgWindowCounter, BlocksAfterTheLimitUntilTheWindowClears) {
  pg::TestDb t;
  auto db_b = pg::Db::open(t.url(), 2);
  ASSERT_TRUE(db_b.ok());
  auto a = make_pg_window_counter(t.db());
  auto b = make_pg_window_counter(**db_b);
  EXPECT_FALSE(a->peek("ip:1", 3, 60).blocked);
  EXPECT_FALSE(a->hit("ip:1", 3, 60).blocked);
  EXPECT_FALSE(b->hit("ip:1", 3, 60).blocked);
  EXPECT_FALSE(a->hit("ip:1", 3, 60).blocked);
  EXPECT_TRUE(b->peek("ip:1", 3, 60).blocked);  // the other node sees the same window
  auto d = b->hit("ip:1", 3, 60);
  EXPECT_TRUE(d.blocked);
  EXPECT_EQ(d.count, 4);
  EXPECT_GE(d.retry_after_s, 59);
  EXPECT_LE(d.retry_after_s, 60);
  // A one-second window clears by itself.
  EXPECT_FALSE(a->hit("ip:2", 1, 1).blocked);
  EXPECT_TRUE(a->hit("ip:2", 1, 1).blocked);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_FALSE(a->peek("ip:2", 1, 1).blocked);
  EXPECT_FALSE(a->hit("ip:2", 1, 1).blocked);
}

TEST(PgWindowCounter, ConcurrentHitsAdmitExactlyTheLimitAndReleaseGivesOneBack) {
  pg::TestDb t;
  auto w = make_pg_window_counter(t.db());
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 5; ++j) {
        if (!w->hit("email:a", 5, 900).blocked) ++admitted;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(admitted.load(), 5);
  EXPECT_EQ(w->peek("email:a", 5, 900).count, 40);
  for (int i = 0; i < 36; ++i) w->release("email:a", 900);
  EXPECT_FALSE(w->peek("email:a", 5, 900).blocked);
  EXPECT_FALSE(w->hit("email:a", 5, 900).blocked);
  EXPECT_TRUE(w->hit("email:a", 5, 900).blocked);
  for (int i = 0; i < 10; ++i) w->release("email:a", 900);  // never below zero
  EXPECT_EQ(w->peek("email:a", 5, 900).count, 0);
}

}  // namespace
}  // namespace imago

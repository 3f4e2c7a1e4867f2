#include "store/postgres/pg_stores.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "store/postgres/test_db.h"

namespace imago::pg {
namespace {

class LedgerTest : public ::testing::Test {
 protected:
  LedgerTest() : accounts_(make_account_store(tdb_.db(), clock_)), ledger_(make_ledger_store(tdb_.db(), clock_)) {}

  std::string new_account(int64_t credits) {
    static int n = 0;
    KeyMaterial km{"hash" + std::to_string(++n), "imago_sk_x", "abcd"};
    auto r = accounts_->create_account("acct", Plan::kFree, credits, "default", km);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r->first.id;
  }

  LedgerOp charge(const std::string& acct, int64_t amount, std::string key) {
    LedgerOp op;
    op.account_id = acct;
    op.kind = LedgerKind::kCharge;
    op.amount = amount;
    op.reason = "test";
    op.operation_key = std::move(key);
    return op;
  }

  ManualClock clock_;
  TestDb tdb_;
  std::unique_ptr<AccountStore> accounts_;
  std::unique_ptr<LedgerStore> ledger_;
};

TEST_F(LedgerTest, InitialCreditsAreATopupEntry) {
  auto acct = new_account(500);
  EXPECT_EQ(ledger_->balance(acct)->total(), 500);
  auto page = ledger_->list(acct, 10, 0);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->total, 1);
  EXPECT_EQ(page->entries[0].kind, LedgerKind::kTopup);
  EXPECT_EQ(page->entries[0].amount, 500);
}

TEST_F(LedgerTest, ChargeIsIdempotentByOperationKey) {
  auto acct = new_account(1000);
  auto a = ledger_->apply(charge(acct, 250, "gen:1"));
  auto b = ledger_->apply(charge(acct, 250, "gen:1"));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->id, b->id);
  EXPECT_EQ(ledger_->balance(acct)->total(), 750);
  // Reusing the key for a different operation is refused, not silently replayed.
  auto c = ledger_->apply(charge(acct, 100, "gen:1"));
  EXPECT_EQ(c.status().code(), Code::kConflict);
}

TEST_F(LedgerTest, NeverGoesNegative) {
  auto acct = new_account(100);
  auto r = ledger_->apply(charge(acct, 101, "big"));
  EXPECT_EQ(r.status().code(), Code::kInsufficientFunds);
  EXPECT_EQ(r.status().message(), "Insufficient credits");
  EXPECT_EQ(ledger_->balance(acct)->total(), 100);
  EXPECT_EQ(ledger_->list(acct, 10, 0)->total, 1);  // nothing recorded
}

TEST_F(LedgerTest, PlanCreditsAreSpentFirst) {
  auto acct = new_account(100);  // top-up bucket
  LedgerOp grant;
  grant.account_id = acct;
  grant.kind = LedgerKind::kGrant;
  grant.amount = 50;
  grant.reason = "plan";
  grant.operation_key = "grant:1";
  ASSERT_TRUE(ledger_->apply(grant).ok());
  ASSERT_TRUE(ledger_->apply(charge(acct, 70, "c")).ok());
  auto b = ledger_->balance(acct).value();
  EXPECT_EQ(b.plan_credits, 0);
  EXPECT_EQ(b.topup_credits, 80);
}

TEST_F(LedgerTest, ConcurrentChargesForTheLastCreditsAdmitExactlyTheAffordableNumber) {
  auto acct = new_account(1000);  // affords exactly 4 charges of 250
  std::atomic<int> ok{0}, short_{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      auto r = ledger_->apply(charge(acct, 250, "race:" + std::to_string(t)));
      if (r.ok()) ok++;
      else if (r.status().code() == Code::kInsufficientFunds) short_++;
      else other++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(short_.load(), 12);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(ledger_->balance(acct)->total(), 0);
}

TEST_F(LedgerTest, RejectsNonPositiveAmounts) {
  auto acct = new_account(10);
  EXPECT_EQ(ledger_->apply(charge(acct, 0, "z")).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ledger_->apply(charge(acct, -5, "n")).status().code(), Code::kInvalidArgument);
}

TEST_F(LedgerTest, ListsNewestFirstWithPaging) {
  auto acct = new_account(1000);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ledger_->apply(charge(acct, 1, "p" + std::to_string(i))).ok());
  auto page = ledger_->list(acct, 2, 1).value();
  EXPECT_EQ(page.total, 6);
  ASSERT_EQ(page.entries.size(), 2u);
  EXPECT_EQ(page.entries[0].operation_key, "p3");
  EXPECT_EQ(page.entries[1].operation_key, "p2");
}

}  // namespace
}  // namespace imago::pg

// Contract of LedgerStore (SPEC 8.6): an operation key applies once and replays its first entry, a
// charge never overdraws, plan credits are spent first, and concurrent writers (many threads, or
// many nodes on a shared database) admit exactly the affordable number of charges.
#include <atomic>
#include <thread>

#include "billing/operations.h"
#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

class LedgerStoreContract : public StoreContract {
 protected:
  LedgerOp charge(const std::string& acct, int64_t amount, std::string key) {
    LedgerOp op;
    op.account_id = acct;
    op.kind = LedgerKind::kCharge;
    op.amount = amount;
    op.reason = "test";
    op.operation_key = std::move(key);
    return op;
  }
};

TEST_P(LedgerStoreContract, InitialCreditsAreATopupEntry) {
  auto acct = new_account(500);
  EXPECT_EQ(ledger().balance(acct)->total(), 500);
  auto page = ledger().list(acct, 10, 0);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->total, 1);
  EXPECT_EQ(page->entries[0].kind, LedgerKind::kTopup);
  EXPECT_EQ(page->entries[0].amount, 500);
}

TEST_P(LedgerStoreContract, ChargeIsIdempotentByOperationKey) {
  auto acct = new_account(1000);
  auto a = ledger().apply(charge(acct, 250, "gen:1"));
  auto b = ledger().apply(charge(acct, 250, "gen:1"));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->id, b->id);
  EXPECT_EQ(ledger().balance(acct)->total(), 750);
  // Reusing the key for a different operation is refused, not silently replayed.
  auto c = ledger().apply(charge(acct, 100, "gen:1"));
  EXPECT_EQ(c.status().code(), Code::kConflict);
}

TEST_P(LedgerStoreContract, NeverGoesNegative) {
  auto acct = new_account(100);
  auto r = ledger().apply(charge(acct, 101, "big"));
  EXPECT_EQ(r.status().code(), Code::kInsufficientFunds);
  EXPECT_EQ(r.status().message(), "Insufficient credits");
  EXPECT_EQ(ledger().balance(acct)->total(), 100);
  EXPECT_EQ(ledger().list(acct, 10, 0)->total, 1);  // nothing recorded
}

TEST_P(LedgerStoreContract, PlanCreditsAreSpentFirst) {
  auto acct = new_account(100);  // top-up bucket
  LedgerOp grant;
  grant.account_id = acct;
  grant.kind = LedgerKind::kGrant;
  grant.amount = 50;
  grant.reason = "plan";
  grant.operation_key = "grant:1";
  ASSERT_TRUE(ledger().apply(grant).ok());
  ASSERT_TRUE(ledger().apply(charge(acct, 70, "c")).ok());
  auto b = ledger().balance(acct).value();
  EXPECT_EQ(b.plan_credits, 0);
  EXPECT_EQ(b.topup_credits, 80);
}

TEST_P(LedgerStoreContract, ConcurrentChargesForTheLastCreditsAdmitExactlyTheAffordableNumber) {
  auto acct = new_account(1000);  // affords exactly 4 charges of 250
  std::atomic<int> ok{0}, short_{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      auto r = ledger().apply(charge(acct, 250, "race:" + std::to_string(t)));
      if (r.ok())
        ok++;
      else if (r.status().code() == Code::kInsufficientFunds)
        short_++;
      else
        other++;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 4);
  EXPECT_EQ(short_.load(), 12);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(ledger().balance(acct)->total(), 0);
}

TEST_P(LedgerStoreContract, RejectsNonPositiveAmounts) {
  auto acct = new_account(10);
  EXPECT_EQ(ledger().apply(charge(acct, 0, "z")).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ledger().apply(charge(acct, -5, "n")).status().code(), Code::kInvalidArgument);
}

TEST_P(LedgerStoreContract, ListsNewestFirstWithPaging) {
  auto acct = new_account(1000);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ledger().apply(charge(acct, 1, "p" + std::to_string(i))).ok());
  auto page = ledger().list(acct, 2, 1).value();
  EXPECT_EQ(page.total, 6);
  ASSERT_EQ(page.entries.size(), 2u);
  EXPECT_EQ(page.entries[0].operation_key, "p3");
  EXPECT_EQ(page.entries[1].operation_key, "p2");
}

// Many threads charge one account with distinct keys: exactly the affordable number succeed, none
// fails for another reason, and the recorded entries add up to the balance.
TEST_P(LedgerStoreContract, ManyWritersNeverOverdrawAndTheLedgerAddsUpToTheBalance) {
  constexpr int kThreads = 8, kPerThread = 25;
  auto acct = new_account(1000);  // affords exactly 100 charges of 10
  std::atomic<int> ok{0}, short_{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto r = ledger().apply(charge(acct, 10, "many:" + std::to_string(t) + ":" + std::to_string(i)));
        if (r.ok())
          ok++;
        else if (r.status().code() == Code::kInsufficientFunds)
          short_++;
        else
          other++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 100);
  EXPECT_EQ(short_.load(), kThreads * kPerThread - 100);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(balance(acct), 0);
  auto page = ledger().list(acct, 1000, 0);
  ASSERT_TRUE(page.ok());
  int64_t sum = 0;
  for (const auto& e : page->entries) sum += e.amount;
  EXPECT_EQ(sum, balance(acct));
  EXPECT_EQ(page->total, 101);  // the initial top-up and the 100 charges
  EXPECT_EQ(page->entries.front().balance_after, 0);
}

// The same operation key from many threads at once: one entry, one charge, every caller gets it.
TEST_P(LedgerStoreContract, ConcurrentReplaysOfOneKeyChargeOnce) {
  auto acct = new_account(1000);
  std::vector<std::string> ids(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto r = ledger().apply(charge(acct, 250, "same-key"));
      ids[t] = r.ok() ? r->id : "error: " + r.status().message();
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& id : ids) EXPECT_EQ(id, ids[0]);
  EXPECT_EQ(ids[0].rfind("led_", 0), 0u) << ids[0];
  EXPECT_EQ(balance(acct), 750);
}

TEST_P(LedgerStoreContract, ARefundIsKeyedByItsChargeAndHappensOnce) {
  auto acct = new_account(1000);
  auto c = billing::agent_generation_charge(acct, "job_r", "A12BCD3456");
  ASSERT_TRUE(ledger().apply(c).ok());
  auto refund = billing::refund_of(c, "failed");
  ASSERT_TRUE(ledger().apply(refund).ok());
  ASSERT_TRUE(ledger().apply(billing::refund_of(c, "failed again")).ok());  // replay, same entry
  EXPECT_EQ(balance(acct), 1000);
  auto b = ledger().balance(acct);
  EXPECT_EQ(b->topup_credits, 1000);
}

TEST_P(LedgerStoreContract, UnknownAccountIsNotFound) {
  EXPECT_EQ(ledger().apply(charge("usr_missing", 1, "x")).status().code(), Code::kNotFound);
  EXPECT_EQ(ledger().balance("usr_missing").status().code(), Code::kNotFound);
}

IMAGO_STORE_CONTRACT(LedgerStoreContract);

}  // namespace
}  // namespace imago::contracts

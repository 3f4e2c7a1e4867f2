// Contract of the monthly live spend cap (billing/spend_cap.h, LedgerStore::live_spend): the holder's
// and the operator's caps are kept apart and the lower applies; a live minute that would pass the
// cap is refused inside the charge's own transaction (nothing recorded) while other charges are not
// affected; only this calendar month (UTC) counts; and concurrent writers (threads, or connections
// of several nodes on PostgreSQL) together never spend past it.
#include <atomic>
#include <thread>

#include "billing/operations.h"
#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

using billing::CapSetter;
using billing::MinuteRate;

constexpr int64_t kSecondUs = 1'000'000;
// 2026-11-22T18:00:00Z
constexpr int64_t kNovember = 1795370400;

class LiveSpendCapContract : public StoreContract {
 protected:
  void SetUp() override {
    StoreContract::SetUp();
    clock_.set_us(kNovember * kSecondUs);
  }
  LedgerOp minute(const std::string& acct, const std::string& session, int64_t m,
                  MinuteRate rate = MinuteRate::kEssenceCloud) {
    return billing::live_session_minute(acct, session, m, rate);
  }
};

TEST_P(LiveSpendCapContract, NoCapByDefaultAndEachSetterHasItsOwn) {
  auto acct = new_account(100);
  auto s = ledger().live_spend(acct);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cap, billing::LiveSpendCap{});
  EXPECT_EQ(s->spent, 0);
  EXPECT_EQ(s->month.label, "2026-11");

  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kAccount, 50).ok());
  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kOperator, 30).ok());
  s = ledger().live_spend(acct);
  EXPECT_EQ(s->cap.account, 50);
  EXPECT_EQ(s->cap.operator_, 30);
  EXPECT_EQ(s->cap.effective(), 30);

  // Clearing one leaves the other.
  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kOperator, std::nullopt).ok());
  s = ledger().live_spend(acct);
  EXPECT_EQ(s->cap.account, 50);
  EXPECT_FALSE(s->cap.operator_);
  EXPECT_EQ(s->cap.effective(), 50);
}

TEST_P(LiveSpendCapContract, RejectsBadValuesAndUnknownAccounts) {
  auto acct = new_account(100);
  EXPECT_EQ(ledger().set_live_spend_cap(acct, CapSetter::kAccount, -1).code(), Code::kInvalidArgument);
  EXPECT_EQ(ledger().set_live_spend_cap(acct, CapSetter::kOperator, billing::kMaxLiveSpendCap + 1).code(),
            Code::kInvalidArgument);
  EXPECT_FALSE(ledger().live_spend(acct)->cap.effective());
  EXPECT_EQ(ledger().set_live_spend_cap("usr_missing", CapSetter::kAccount, 5).code(), Code::kNotFound);
  EXPECT_EQ(ledger().live_spend("usr_missing").status().code(), Code::kNotFound);
}

TEST_P(LiveSpendCapContract, ALiveMinutePastTheCapIsRefusedAndNothingIsRecorded) {
  auto acct = new_account(1000);
  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kAccount, 5).ok());
  ASSERT_TRUE(ledger().apply(minute(acct, "ses_a", 0)).ok());  // 2
  ASSERT_TRUE(ledger().apply(minute(acct, "ses_a", 1)).ok());  // 4
  auto refused = ledger().apply(minute(acct, "ses_a", 2));     // would be 6
  EXPECT_EQ(refused.status().code(), Code::kInsufficientFunds);
  EXPECT_TRUE(billing::is_spend_cap_refusal(refused.status())) << refused.status().message();
  EXPECT_EQ(balance(acct), 996);
  EXPECT_EQ(ledger().list(acct, 10, 0)->total, 3);  // top-up and two minutes
  EXPECT_EQ(ledger().live_spend(acct)->spent, 4);
  EXPECT_EQ(ledger().live_spend(acct)->remaining(), 1);

  // A cheaper minute that still fits is charged; a replay of a paid minute replays even though the
  // cap is now reached (it charges nothing new).
  ASSERT_TRUE(ledger().apply(minute(acct, "sh:x", 0, MinuteRate::kEssenceSelfHosted)).ok());  // 5
  auto replay = ledger().apply(minute(acct, "ses_a", 1));
  ASSERT_TRUE(replay.ok()) << replay.status().message();
  EXPECT_EQ(ledger().live_spend(acct)->spent, 5);

  // Other charges are not live usage: the cap does not stop them.
  ASSERT_TRUE(ledger().apply(billing::agent_generation_charge(acct, "job_1", "A12BCD3456")).ok());
  EXPECT_EQ(ledger().live_spend(acct)->spent, 5);

  // Raising the cap lets the refused minute through.
  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kAccount, 7).ok());
  EXPECT_TRUE(ledger().apply(minute(acct, "ses_a", 2)).ok());
  EXPECT_EQ(ledger().live_spend(acct)->spent, 7);
}

TEST_P(LiveSpendCapContract, TheOperatorsLowerCapWinsAndZeroStopsLiveUsage) {
  auto acct = new_account(1000);
  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kAccount, 100).ok());
  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kOperator, 0).ok());
  EXPECT_TRUE(billing::is_spend_cap_refusal(ledger().apply(minute(acct, "ses_z", 0)).status()));
  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kOperator, std::nullopt).ok());
  EXPECT_TRUE(ledger().apply(minute(acct, "ses_z", 0)).ok());
}

TEST_P(LiveSpendCapContract, OnlyThisCalendarMonthCounts) {
  auto acct = new_account(1000);
  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kAccount, 4).ok());
  // 2026-11-30T23:59:00Z: two minutes reach the cap.
  clock_.set_us((1796083200 - 60) * kSecondUs);
  ASSERT_TRUE(ledger().apply(minute(acct, "ses_m", 0)).ok());
  ASSERT_TRUE(ledger().apply(minute(acct, "ses_m", 1)).ok());
  EXPECT_TRUE(billing::is_spend_cap_refusal(ledger().apply(minute(acct, "ses_m", 2)).status()));
  // 2026-12-01T00:00:00Z: a new month, a new allowance.
  clock_.set_us(1796083200 * kSecondUs);
  auto s = ledger().live_spend(acct);
  EXPECT_EQ(s->month.label, "2026-12");
  EXPECT_EQ(s->spent, 0);
  EXPECT_TRUE(ledger().apply(minute(acct, "ses_m", 2)).ok());
  EXPECT_EQ(ledger().live_spend(acct)->spent, 2);
}

// Many writers charge live minutes of one account at once (on PostgreSQL each thread holds its own
// connection, as several nodes would): exactly the minutes that fit under the cap are charged.
TEST_P(LiveSpendCapContract, ConcurrentMinutesNeverPassTheCapTogether) {
  constexpr int kThreads = 8, kPerThread = 10;
  auto acct = new_account(100000);
  ASSERT_TRUE(ledger().set_live_spend_cap(acct, CapSetter::kOperator, 41).ok());  // 20 minutes of 2
  std::atomic<int> ok{0}, capped{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto r = ledger().apply(minute(acct, "ses_" + std::to_string(t), i));
        if (r.ok())
          ok++;
        else if (billing::is_spend_cap_refusal(r.status()))
          capped++;
        else
          other++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 20);
  EXPECT_EQ(capped.load(), kThreads * kPerThread - 20);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(ledger().live_spend(acct)->spent, 40);
  EXPECT_EQ(balance(acct), 100000 - 40);
}

IMAGO_STORE_CONTRACT(LiveSpendCapContract);

}  // namespace
}  // namespace imago::contracts

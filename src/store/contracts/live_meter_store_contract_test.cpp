// Contract of the self-hosted session meters (LiveMeterStore, billing/heartbeat_meter.h): a meter
// charges each minute of its session once, from minute 0 up, whichever process or node receives
// the heartbeat; another opening of the database (a restarted server, another node) continues the
// count where it was; a pause is not billed; a refused minute records nothing and stays due; and
// concurrent heartbeats (threads, or two nodes' pools on PostgreSQL) never charge a minute twice.
#include <atomic>
#include <set>
#include <thread>

#include "billing/ledger.h"
#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

constexpr int64_t kPeriod = 60'000'000;
constexpr int64_t kGrace = 300'000'000;
constexpr int64_t kT0 = 1'795'370'400'000'000;  // 2026-11-22T18:00:00Z, in microseconds

class LiveMeterStoreContract : public StoreContract {
 protected:
  void SetUp() override {
    StoreContract::SetUp();
    clock_.set_us(kT0);
  }
  LiveMeterStore& meters() { return *stores().live_meters; }

  // The minute indices charged under `meter_id` (from the operation keys), each once.
  std::multiset<int64_t> charged_minutes(const std::string& acct, const std::string& meter_id) {
    std::multiset<int64_t> out;
    auto page = ledger().list(acct, 1000, 0);
    EXPECT_TRUE(page.ok());
    const std::string prefix = "live_minute:" + meter_id + ":";
    for (const auto& e : page->entries) {
      if (e.operation_key.rfind(prefix, 0) == 0)
        out.insert(std::stoll(e.operation_key.substr(prefix.size())));
    }
    return out;
  }
  static std::multiset<int64_t> first(int64_t n) {
    std::multiset<int64_t> out;
    for (int64_t i = 0; i < n; ++i) out.insert(i);
    return out;
  }
};

TEST_P(LiveMeterStoreContract, ChargesMinuteZeroAtOnceAndEachLaterMinuteOnce) {
  auto acct = new_account(100);
  auto m = meters().heartbeat(acct, "sh:s1", "essence_self_hosted", kT0, kPeriod, kGrace);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->next_minute, 1);
  EXPECT_EQ(balance(acct), 99);
  // The same minute again: nothing more.
  ASSERT_TRUE(
      meters().heartbeat(acct, "sh:s1", "essence_self_hosted", kT0 + 30'000'000, kPeriod, kGrace).ok());
  EXPECT_EQ(balance(acct), 99);
  // 2.5 minutes in: minutes 1 and 2.
  m = meters().heartbeat(acct, "sh:s1", "essence_self_hosted", kT0 + 150'000'000, kPeriod, kGrace);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->next_minute, 3);
  EXPECT_EQ(balance(acct), 97);
  EXPECT_EQ(charged_minutes(acct, "sh:s1"), first(3));
  auto got = meters().get(acct, "sh:s1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->started_us, kT0);
  EXPECT_EQ(got->billing_type, "essence_self_hosted");
  EXPECT_EQ(meters().get(acct, "sh:other").status().code(), Code::kNotFound);
}

TEST_P(LiveMeterStoreContract, AnotherOpeningContinuesTheCount) {
  auto acct = new_account(100);
  ASSERT_TRUE(meters().heartbeat(acct, "sh:s1", "expression_self_hosted", kT0, kPeriod, kGrace).ok());
  ASSERT_TRUE(
      meters().heartbeat(acct, "sh:s1", "expression_self_hosted", kT0 + kPeriod, kPeriod, kGrace).ok());
  EXPECT_EQ(balance(acct), 96);
  // A restarted server (or another node) opens the database afresh; 3.5 minutes after the start
  // it charges minutes 2 and 3, not minute 0 again.
  auto other = open_another();
  ASSERT_TRUE(other.ok()) << other.status().message();
  auto m = other->live_meters->heartbeat(acct, "sh:s1", "expression_self_hosted", kT0 + 210'000'000, kPeriod,
                                         kGrace);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->next_minute, 4);
  EXPECT_EQ(balance(acct), 92);
  EXPECT_EQ(charged_minutes(acct, "sh:s1"), first(4));
}

TEST_P(LiveMeterStoreContract, APauseLongerThanTheGraceIsNotBilled) {
  auto acct = new_account(100);
  ASSERT_TRUE(meters().heartbeat(acct, "sh:p", "essence_self_hosted", kT0, kPeriod, kGrace).ok());
  // Silent for an hour, then back for half a minute: only minute 1 (the minute the clock reached
  // after the pause) is due.
  const int64_t back = kT0 + 3600'000'000;
  auto m = meters().heartbeat(acct, "sh:p", "essence_self_hosted", back, kPeriod, kGrace);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->started_us, kT0 + 3600'000'000);
  EXPECT_EQ(m->next_minute, 1);
  m = meters().heartbeat(acct, "sh:p", "essence_self_hosted", back + kPeriod + 1, kPeriod, kGrace);
  EXPECT_EQ(m->next_minute, 2);
  EXPECT_EQ(balance(acct), 98);
}

TEST_P(LiveMeterStoreContract, ARefusedMinuteRecordsNothingAndStaysDue) {
  auto acct = new_account(3);
  ASSERT_TRUE(meters().heartbeat(acct, "sh:r", "expression_self_hosted", kT0, kPeriod, kGrace).ok());
  EXPECT_EQ(balance(acct), 1);
  auto m = meters().heartbeat(acct, "sh:r", "expression_self_hosted", kT0 + kPeriod, kPeriod, kGrace);
  EXPECT_EQ(m.status().code(), Code::kInsufficientFunds);
  EXPECT_EQ(balance(acct), 1);
  auto got = meters().get(acct, "sh:r");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->next_minute, 1);
  EXPECT_EQ(got->last_seen_us, kT0 + kPeriod);  // the heartbeat itself is recorded
  EXPECT_EQ(charged_minutes(acct, "sh:r"), first(1));
  // Unknown billing types and accounts are refused before anything is written.
  EXPECT_EQ(meters().heartbeat(acct, "sh:x", "no_such_rate", kT0, kPeriod, kGrace).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(
      meters().heartbeat("acct_missing", "sh:x", "essence_self_hosted", kT0, kPeriod, kGrace).status().code(),
      Code::kNotFound);
  EXPECT_EQ(meters().get(acct, "sh:x").status().code(), Code::kNotFound);
}

TEST_P(LiveMeterStoreContract, ConcurrentHeartbeatsOnTwoOpeningsChargeEachMinuteOnce) {
  auto other = open_another();
  ASSERT_TRUE(other.ok()) << other.status().message();
  auto acct = new_account(1000);
  ASSERT_TRUE(meters().heartbeat(acct, "sh:c", "essence_self_hosted", kT0, kPeriod, kGrace).ok());
  // 8 threads, half on each opening, heartbeat through minutes 1..4 at the same instants.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    LiveMeterStore& store = t % 2 ? *other->live_meters : meters();
    threads.emplace_back([&store, &failures, acct] {
      for (int64_t step = 1; step <= 8; ++step) {
        auto m =
            store.heartbeat(acct, "sh:c", "essence_self_hosted", kT0 + step * kPeriod / 2, kPeriod, kGrace);
        if (!m.ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(charged_minutes(acct, "sh:c"), first(5));
  EXPECT_EQ(balance(acct), 995);
  EXPECT_EQ(meters().get(acct, "sh:c")->next_minute, 5);
}

}  // namespace

IMAGO_STORE_CONTRACT(LiveMeterStoreContract);

}  // namespace imago::contracts

// Contract of JobStore: a claim is exclusive and leased, an expired lease is reclaimed and its old
// owner can record nothing, per-account limits queue the rest, and the claim is fair between accounts.
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

constexpr int64_t kLease = 10'000'000;  // 10 s

class JobStoreContract : public StoreContract {
 protected:
  std::string add(std::string kind, std::string account = "usr_a", int max_attempts = 3) {
    NewJob j;
    j.kind = std::move(kind);
    j.account_id = std::move(account);
    j.subject = "S";
    j.max_attempts = max_attempts;
    auto id = jobs().enqueue(j);
    EXPECT_TRUE(id.ok());
    return *id;
  }
  std::optional<Job> claim(std::string_view lane, const std::string& owner) {
    auto r = jobs().claim(lane, owner, kLease);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : std::nullopt;
  }
};

TEST_P(JobStoreContract, ClaimsOnceAndCompletesOnce) {
  std::string id = add(std::string(kJobAgentGenerate));
  auto j = claim(kLaneGenerate, "w1");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->id, id);
  EXPECT_EQ(j->state, "running");
  EXPECT_EQ(j->attempts, 1);
  EXPECT_FALSE(claim(kLaneGenerate, "w2"));
  EXPECT_FALSE(claim(kLaneLight, "w2"));
  EXPECT_FALSE(*jobs().complete(id, "w2"));  // not the owner
  EXPECT_TRUE(*jobs().complete(id, "w1"));
  EXPECT_FALSE(*jobs().complete(id, "w1"));  // exactly once
  EXPECT_FALSE(*jobs().fail(id, "w1", "late"));
  EXPECT_EQ(jobs().get(id)->state, "succeeded");
}

TEST_P(JobStoreContract, ExpiredLeaseIsReclaimedAndTheOldOwnerLosesIt) {
  std::string id = add(std::string(kJobAgentGenerate));
  ASSERT_TRUE(claim(kLaneGenerate, "crashed"));
  clock_.advance_seconds(9);
  EXPECT_FALSE(claim(kLaneGenerate, "w2"));  // lease still valid
  clock_.advance_seconds(2);
  auto again = claim(kLaneGenerate, "w2");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->id, id);
  EXPECT_EQ(again->attempts, 2);
  EXPECT_FALSE(*jobs().heartbeat(id, "crashed", kLease));
  EXPECT_FALSE(*jobs().complete(id, "crashed"));
  EXPECT_TRUE(*jobs().complete(id, "w2"));
}

TEST_P(JobStoreContract, HeartbeatKeepsTheLease) {
  std::string id = add(std::string(kJobDynamicsGenerate));
  ASSERT_TRUE(claim(kLaneGenerate, "w1"));
  for (int i = 0; i < 5; ++i) {
    clock_.advance_seconds(8);
    EXPECT_TRUE(*jobs().heartbeat(id, "w1", kLease));
    EXPECT_FALSE(claim(kLaneGenerate, "w2"));
  }
}

TEST_P(JobStoreContract, RetryWaitsForItsTimeAndReleaseDoesNotCountTheAttempt) {
  std::string id = add(std::string(kJobWebhookDelivery));
  ASSERT_TRUE(claim(kLaneLight, "w1"));
  ASSERT_TRUE(*jobs().retry(id, "w1", "HTTP 500", clock_.now_us() + 5'000'000));
  EXPECT_FALSE(claim(kLaneLight, "w1"));
  clock_.advance_seconds(5);
  auto j = claim(kLaneLight, "w1");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->attempts, 2);
  EXPECT_EQ(j->last_error.value_or(""), "HTTP 500");
  ASSERT_TRUE(*jobs().release(id, "w1", 0));
  auto k = claim(kLaneLight, "w3");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->attempts, 2);
}

TEST_P(JobStoreContract, PerAccountLimitsQueueTheRest) {
  for (int i = 0; i < 4; ++i) add(std::string(kJobAgentGenerate), "usr_a");
  for (int i = 0; i < 3; ++i) add(std::string(kJobDynamicsGenerate), "usr_a");
  add(std::string(kJobAgentGenerate), "usr_b");
  std::vector<Job> running;
  while (auto j = claim(kLaneGenerate, "w")) running.push_back(*j);
  int agent_a = 0, dyn_a = 0, agent_b = 0;
  for (auto& j : running) {
    if (j.account_id == "usr_a" && j.kind == kJobAgentGenerate) ++agent_a;
    if (j.account_id == "usr_a" && j.kind == kJobDynamicsGenerate) ++dyn_a;
    if (j.account_id == "usr_b") ++agent_b;
  }
  EXPECT_EQ(agent_a, kMaxRunningAgentJobsPerAccount);
  EXPECT_EQ(dyn_a, kMaxRunningDynamicsJobsPerAccount);
  EXPECT_EQ(agent_b, 1);
  // Finishing one frees a slot for the waiting job of that kind.
  for (auto& j : running) {
    if (j.account_id == "usr_a" && j.kind == kJobAgentGenerate) {
      ASSERT_TRUE(*jobs().complete(j.id, "w"));
      break;
    }
  }
  auto next = claim(kLaneGenerate, "w");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->kind, kJobAgentGenerate);
  EXPECT_FALSE(claim(kLaneGenerate, "w"));
}

TEST_P(JobStoreContract, CancelStopsQueuedAndRunningJobs) {
  std::string a = add(std::string(kJobAgentGenerate));
  std::string b = add(std::string(kJobAgentGenerate));
  ASSERT_TRUE(claim(kLaneGenerate, "w1"));
  EXPECT_EQ(*jobs().cancel_subject("S"), 2);
  EXPECT_FALSE(*jobs().heartbeat(a, "w1", kLease));
  EXPECT_FALSE(*jobs().complete(a, "w1"));
  EXPECT_FALSE(claim(kLaneGenerate, "w2"));
  EXPECT_EQ(jobs().get(b)->state, "cancelled");
}

// Many claimers at once: every job is claimed by exactly one of them.
TEST_P(JobStoreContract, ConcurrentClaimsAreExclusive) {
  constexpr int kJobs = 40;
  for (int i = 0; i < kJobs; ++i) add(std::string(kJobWebhookDelivery), "usr_" + std::to_string(i % 4));
  std::mutex mu;
  std::vector<std::string> claimed;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kJobs; ++i) {
        auto r = jobs().claim(kLaneLight, "w" + std::to_string(t), kLease);
        if (!r.ok()) {
          errors++;
          continue;
        }
        if (!r->has_value()) break;
        std::lock_guard lock(mu);
        claimed.push_back((*r)->id);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(claimed.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()).size(), static_cast<size_t>(kJobs));
}

// Account A queues many jobs before account B queues one: with one worker, B's job is claimed
// as soon as one of A's finishes, not after all of them.
TEST_P(JobStoreContract, ClaimIsFairBetweenAccounts) {
  for (int i = 0; i < 6; ++i) add(std::string(kJobVideoRender), "usr_flood");
  clock_.advance_seconds(1);
  add(std::string(kJobAgentGenerate), "usr_paid");
  std::vector<std::string> order;
  while (auto j = claim(kLaneGenerate, "w")) {
    order.push_back(j->account_id);
    ASSERT_TRUE(*jobs().complete(j->id, "w"));
  }
  ASSERT_EQ(order.size(), 7u);
  EXPECT_EQ(order[0], "usr_flood");
  EXPECT_EQ(order[1], "usr_paid");
}

// With workers busy on one account's jobs, a newly queued job of another account goes first.
TEST_P(JobStoreContract, AnAccountWithNothingRunningGoesFirst) {
  for (int i = 0; i < 4; ++i) add(std::string(kJobWebhookDelivery), "usr_busy");
  ASSERT_TRUE(claim(kLaneLight, "w1"));
  ASSERT_TRUE(claim(kLaneLight, "w2"));
  add(std::string(kJobWebhookDelivery), "usr_idle");
  auto next = claim(kLaneLight, "w3");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->account_id, "usr_idle");
}

// Free work (movement regenerations, PUT /v1/dynamics) has its own lane: a paid generation queued
// after another account's flood of free jobs is the generate lane's first claim, and a generate
// worker is never handed free work, so paid generation never waits behind it.
TEST_P(JobStoreContract, PaidGenerationNeverWaitsBehindFreeWork) {
  for (int i = 0; i < 4; ++i) add(std::string(kJobDynamicsMovements), "usr_free");
  clock_.advance_seconds(1);
  add(std::string(kJobAgentGenerate), "usr_paid");
  auto first = claim(kLaneGenerate, "g1");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->account_id, "usr_paid");
  EXPECT_EQ(first->kind, kJobAgentGenerate);
  EXPECT_FALSE(claim(kLaneGenerate, "g2"));  // the second generate worker stays free for paid work

  auto free = claim(kLaneBackground, "b1");
  ASSERT_TRUE(free);
  EXPECT_EQ(free->account_id, "usr_free");
  EXPECT_EQ(free->lane, kLaneBackground);
  EXPECT_TRUE(claim(kLaneBackground, "b2"));  // the per-account cap (2 running) still applies
  EXPECT_FALSE(claim(kLaneBackground, "b3"));
}

IMAGO_STORE_CONTRACT(JobStoreContract);

}  // namespace
}  // namespace imago::contracts

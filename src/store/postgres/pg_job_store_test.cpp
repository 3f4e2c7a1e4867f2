#include <gtest/gtest.h>

#include "store/postgres/pg_stores.h"
#include "store/postgres/test_db.h"

namespace imago::pg {
namespace {

constexpr int64_t kLease = 10'000'000;  // 10 s

class JobStoreTest : public ::testing::Test {
 protected:
  TestDb tdb;
  ManualClock clock;
  std::unique_ptr<JobStore> jobs = make_job_store(tdb.db(), clock);

  std::string add(std::string kind, std::string account = "usr_a", int max_attempts = 3) {
    NewJob j;
    j.kind = std::move(kind);
    j.account_id = std::move(account);
    j.subject = "S";
    j.max_attempts = max_attempts;
    auto id = jobs->enqueue(j);
    EXPECT_TRUE(id.ok());
    return *id;
  }
  std::optional<Job> claim(std::string_view lane, const std::string& owner) {
    auto r = jobs->claim(lane, owner, kLease);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : std::nullopt;
  }
};

TEST_F(JobStoreTest, ClaimsOnceAndCompletesOnce) {
  std::string id = add(std::string(kJobAgentGenerate));
  auto j = claim(kLaneGenerate, "w1");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->id, id);
  EXPECT_EQ(j->state, "running");
  EXPECT_EQ(j->attempts, 1);
  EXPECT_FALSE(claim(kLaneGenerate, "w2"));
  EXPECT_FALSE(claim(kLaneLight, "w2"));
  EXPECT_FALSE(*jobs->complete(id, "w2"));  // not the owner
  EXPECT_TRUE(*jobs->complete(id, "w1"));
  EXPECT_FALSE(*jobs->complete(id, "w1"));  // exactly once
  EXPECT_FALSE(*jobs->fail(id, "w1", "late"));
  EXPECT_EQ(jobs->get(id)->state, "succeeded");
}

TEST_F(JobStoreTest, ExpiredLeaseIsReclaimedAndTheOldOwnerLosesIt) {
  std::string id = add(std::string(kJobAgentGenerate));
  ASSERT_TRUE(claim(kLaneGenerate, "crashed"));
  clock.advance_seconds(9);
  EXPECT_FALSE(claim(kLaneGenerate, "w2"));  // lease still valid
  clock.advance_seconds(2);
  auto again = claim(kLaneGenerate, "w2");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->id, id);
  EXPECT_EQ(again->attempts, 2);
  EXPECT_FALSE(*jobs->heartbeat(id, "crashed", kLease));
  EXPECT_FALSE(*jobs->complete(id, "crashed"));
  EXPECT_TRUE(*jobs->complete(id, "w2"));
}

TEST_F(JobStoreTest, HeartbeatKeepsTheLease) {
  std::string id = add(std::string(kJobDynamicsGenerate));
  ASSERT_TRUE(claim(kLaneGenerate, "w1"));
  for (int i = 0; i < 5; ++i) {
    clock.advance_seconds(8);
    EXPECT_TRUE(*jobs->heartbeat(id, "w1", kLease));
    EXPECT_FALSE(claim(kLaneGenerate, "w2"));
  }
}

TEST_F(JobStoreTest, RetryWaitsForItsTimeAndReleaseDoesNotCountTheAttempt) {
  std::string id = add(std::string(kJobWebhookDelivery));
  ASSERT_TRUE(claim(kLaneLight, "w1"));
  ASSERT_TRUE(*jobs->retry(id, "w1", "HTTP 500", clock.now_us() + 5'000'000));
  EXPECT_FALSE(claim(kLaneLight, "w1"));
  clock.advance_seconds(5);
  auto j = claim(kLaneLight, "w1");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->attempts, 2);
  EXPECT_EQ(j->last_error.value_or(""), "HTTP 500");
  ASSERT_TRUE(*jobs->release(id, "w1", 0));
  auto k = claim(kLaneLight, "w3");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->attempts, 2);
}

TEST_F(JobStoreTest, PerAccountLimitsQueueTheRest) {
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
      ASSERT_TRUE(*jobs->complete(j.id, "w"));
      break;
    }
  }
  auto next = claim(kLaneGenerate, "w");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->kind, kJobAgentGenerate);
  EXPECT_FALSE(claim(kLaneGenerate, "w"));
}

TEST_F(JobStoreTest, CancelStopsQueuedAndRunningJobs) {
  std::string a = add(std::string(kJobAgentGenerate));
  std::string b = add(std::string(kJobAgentGenerate));
  ASSERT_TRUE(claim(kLaneGenerate, "w1"));
  EXPECT_EQ(*jobs->cancel_subject("S"), 2);
  EXPECT_FALSE(*jobs->heartbeat(a, "w1", kLease));
  EXPECT_FALSE(*jobs->complete(a, "w1"));
  EXPECT_FALSE(claim(kLaneGenerate, "w2"));
  EXPECT_EQ(jobs->get(b)->state, "cancelled");
}

}  // namespace
}  // namespace imago::pg

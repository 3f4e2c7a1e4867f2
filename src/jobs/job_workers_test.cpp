#include "jobs/job_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "store/sql/sql_stores.h"
#include "store/sqlite/test_db.h"

namespace imago::jobs {
namespace {

TEST(Backoff, GrowsExponentiallyWithJitterAndACap) {
  Backoff b{1000, 3, 20000};
  for (int i = 0; i < 50; ++i) {
    int64_t d1 = backoff_delay_ms(b, 1), d2 = backoff_delay_ms(b, 2), d4 = backoff_delay_ms(b, 4),
            d9 = backoff_delay_ms(b, 9);
    EXPECT_GE(d1, 500);
    EXPECT_LE(d1, 1000);
    EXPECT_GE(d2, 1500);
    EXPECT_LE(d2, 3000);
    EXPECT_GE(d4, 10000);  // 27 s capped to 20 s, half of it fixed
    EXPECT_LE(d4, 20000);
    EXPECT_LE(d9, 20000);
  }
  std::set<int64_t> seen;
  for (int i = 0; i < 20; ++i) seen.insert(backoff_delay_ms(b, 3));
  EXPECT_GT(seen.size(), 1u) << "jitter";
}

// Fails `fail_times` attempts as transient, then records success.
class CountingHandler : public JobHandler {
 public:
  CountingHandler(JobStore& store, int fail_times) : store_(store), fail_times_(fail_times) {}
  JobStep run(JobContext& ctx) override {
    int n = ++runs;
    if (n <= fail_times_) return JobStep::retry("transient " + std::to_string(n));
    if (store_.complete(ctx.job().id, ctx.owner()).value()) ++completed;
    return JobStep::done();
  }
  void give_up(JobContext& ctx, const std::string& reason) override {
    last_reason = reason;
    (void)store_.fail(ctx.job().id, ctx.owner(), reason);
    ++gave_up;
  }
  Backoff backoff() const override { return {20, 2, 100}; }
  std::atomic<int> runs{0}, completed{0}, gave_up{0};
  std::string last_reason;

 private:
  JobStore& store_;
  int fail_times_;
};

template <typename F>
bool eventually(F f, int ms = 5000) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return f();
}

class PoolTest : public ::testing::Test {
 protected:
  sqlite::TestDb tdb;
  std::unique_ptr<JobStore> store = sql::make_job_store(tdb.db(), SystemClock::instance());
  JobNotifier queue{*store, SystemClock::instance()};
  JobWorkerPoolOptions opts() {
    JobWorkerPoolOptions o;
    o.lane = std::string(kLaneLight);
    o.threads = 2;
    o.lease_ms = 300;
    o.heartbeat_ms = 50;
    o.poll_ms = 20;
    return o;
  }
  std::string add(int max_attempts) {
    NewJob j;
    j.kind = std::string(kJobWebhookDelivery);
    j.account_id = "usr_a";
    j.max_attempts = max_attempts;
    return store->enqueue(j).value();
  }
};

TEST_F(PoolTest, TransientFailuresRetryThenSucceedOnce) {
  CountingHandler h(*store, 2);
  JobWorkerPool pool(queue, opts());
  pool.add_handler(std::string(kJobWebhookDelivery), &h);
  std::string id = add(5);
  pool.start();
  ASSERT_TRUE(eventually([&] { return store->get(id)->state == "succeeded"; }));
  pool.stop();
  EXPECT_EQ(h.runs.load(), 3);
  EXPECT_EQ(h.completed.load(), 1);
  EXPECT_EQ(h.gave_up.load(), 0);
  EXPECT_EQ(store->get(id)->attempts, 3);
}

TEST_F(PoolTest, ExhaustedAttemptsGiveUpWithTheLastError) {
  CountingHandler h(*store, 100);
  JobWorkerPool pool(queue, opts());
  pool.add_handler(std::string(kJobWebhookDelivery), &h);
  std::string id = add(3);
  pool.start();
  ASSERT_TRUE(eventually([&] { return store->get(id)->state == "failed"; }));
  pool.stop();
  EXPECT_EQ(h.runs.load(), 3);
  EXPECT_EQ(h.gave_up.load(), 1);
  EXPECT_EQ(h.last_reason, "transient 3");
}

TEST_F(PoolTest, AJobOfADeadWorkerIsTakenOverAfterItsLeaseExpires) {
  std::string id = add(3);
  // A worker claims the job and dies without a trace.
  auto claimed = store->claim(kLaneLight, "dead-worker", 200 * 1000);
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  CountingHandler h(*store, 0);
  JobWorkerPool pool(queue, opts());
  pool.add_handler(std::string(kJobWebhookDelivery), &h);
  pool.start();
  ASSERT_TRUE(eventually([&] { return store->get(id)->state == "succeeded"; }));
  pool.stop();
  EXPECT_EQ(h.completed.load(), 1);
  EXPECT_EQ(store->get(id)->attempts, 2);
  EXPECT_FALSE(*store->complete(id, "dead-worker"));
}

// Runs longer than the lease; the heartbeat must keep it so nobody else starts it.
class SlowHandler : public JobHandler {
 public:
  explicit SlowHandler(JobStore& s) : store_(s) {}
  JobStep run(JobContext& ctx) override {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(900));
    if (!ctx.lost() && store_.complete(ctx.job().id, ctx.owner()).value()) ++completed;
    return JobStep::done();
  }
  void give_up(JobContext&, const std::string&) override {}
  std::atomic<int> runs{0}, completed{0};

 private:
  JobStore& store_;
};

TEST_F(PoolTest, HeartbeatKeepsALongJobFromBeingRunTwice) {
  SlowHandler h(*store);
  JobWorkerPool a(queue, opts()), b(queue, opts());
  a.add_handler(std::string(kJobWebhookDelivery), &h);
  b.add_handler(std::string(kJobWebhookDelivery), &h);
  std::string id = add(3);
  a.start();
  b.start();
  ASSERT_TRUE(eventually([&] { return store->get(id)->state == "succeeded"; }));
  a.stop();
  b.stop();
  EXPECT_EQ(h.runs.load(), 1);
  EXPECT_EQ(h.completed.load(), 1);
}

TEST_F(PoolTest, CancellationIsSeenThroughTheHeartbeat) {
  struct Waiter : JobHandler {
    JobStep run(JobContext& ctx) override {
      for (int i = 0; i < 300 && !ctx.lost(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      saw_lost = ctx.lost();
      return JobStep::done();
    }
    void give_up(JobContext&, const std::string&) override {}
    std::atomic<bool> saw_lost{false};
  } h;
  JobWorkerPool pool(queue, opts());
  pool.add_handler(std::string(kJobWebhookDelivery), &h);
  NewJob j;
  j.kind = std::string(kJobWebhookDelivery);
  j.account_id = "usr_a";
  j.subject = "subject-1";
  std::string id = store->enqueue(j).value();
  pool.start();
  ASSERT_TRUE(eventually([&] { return store->get(id)->state == "running"; }));
  ASSERT_EQ(*store->cancel_subject("subject-1"), 1);
  ASSERT_TRUE(eventually([&] { return h.saw_lost.load(); }));
  pool.stop();
  EXPECT_EQ(store->get(id)->state, "cancelled");
}

}  // namespace
}  // namespace imago::jobs

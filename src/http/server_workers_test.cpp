#include "http/server_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace imago::http::detail {
namespace {

using namespace std::chrono_literals;

TEST(WorkerPool, RunsEveryTaskAndDrainsOnShutdown) {
  std::atomic<int> n{0};
  WorkerPool pool(4, 2);
  for (int i = 0; i < 2000; ++i) pool.post([&] { n.fetch_add(1); });
  pool.shutdown(/*drain=*/true);
  pool.join();
  EXPECT_EQ(n.load(), 2000);
}

// Waits (bounded in count) until every thread of the pool has started and sleeps: a thread that
// has not started yet is neither awake nor asleep and would take a task on its own when it starts,
// which would hide what post() decided.
bool all_asleep(const WorkerPool& pool) {
  for (int i = 0; i < 60000 && pool.sleeping() < pool.threads(); ++i) std::this_thread::sleep_for(1ms);
  return pool.sleeping() == pool.threads() && pool.awake() == 0;
}

TEST(WorkerPool, BlockedTasksDoNotStarveLaterOnes) {
  // One thread is meant to be awake; four tasks block it and three more. The monitor must bring
  // in further threads so the quick task still runs while they are blocked.
  WorkerPool pool(8, 1, 500us);
  ASSERT_TRUE(all_asleep(pool));
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  for (int i = 0; i < 4; ++i) pool.post([gate] { gate.wait(); });
  std::promise<void> quick;
  auto quick_done = quick.get_future();
  pool.post([&] { quick.set_value(); });
  // Ordering, not speed: the quick task runs while the four are still blocked (the gate opens
  // only after it). The wait is a guard against a hang, far beyond any scheduling delay.
  const bool ran = quick_done.wait_for(60s) == std::future_status::ready;
  EXPECT_TRUE(ran) << "the quick task never ran while four tasks blocked";
  // post() woke only the first thread (one awake thread is the target, and it stays awake in its
  // blocked task); every further thread came from the monitor.
  EXPECT_EQ(pool.wakes_by_post(), 1u);
  EXPECT_GE(pool.wakes_by_monitor(), 1u);
  release.set_value();
  pool.shutdown(true);
  pool.join();
}

// Structural only: how much this saves in time is measured by server_workers_benchmark.
TEST(WorkerPool, OnlyTheTargetIsWokenForShortTasks) {
  // The starvation monitor never fires within the test, so every wake-up is post()'s decision.
  WorkerPool pool(16, 2, std::chrono::hours(1));
  ASSERT_TRUE(all_asleep(pool));
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> started{0};
  for (int i = 0; i < 6; ++i) {
    pool.post([&, gate] {
      started.fetch_add(1);
      gate.wait();
    });
  }
  // Six tasks posted to a pool whose every thread sleeps: post() wakes two (the target) and
  // queues the rest for them, however the threads are scheduled.
  EXPECT_EQ(pool.wakes_by_post(), 2u);
  EXPECT_EQ(pool.wakes_by_monitor(), 0u);
  // The two woken threads take two tasks and block in them (bounded wait for a slow machine).
  for (int i = 0; i < 60000 && started.load() < 2; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(started.load(), 2);
  EXPECT_EQ(pool.wakes_by_post(), 2u);
  release.set_value();
  pool.shutdown(true);
  pool.join();
  EXPECT_EQ(started.load(), 6);
  EXPECT_EQ(pool.wakes_by_post(), 2u);  // shutdown wakes every thread itself, not through post()
}

TEST(WorkerPool, ShutdownWithoutDrainDropsQueuedTasks) {
  WorkerPool pool(4, 1, 10s);
  std::promise<void> release, running;
  auto gate = release.get_future();
  pool.post([&] {
    running.set_value();
    gate.wait();
  });
  running.get_future().wait();
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) pool.post([&] { ran.fetch_add(1); });
  pool.shutdown(/*drain=*/false);
  release.set_value();
  pool.join();
  EXPECT_EQ(ran.load(), 0);
  pool.post([&] { ran.fetch_add(1); });  // ignored after shutdown
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace imago::http::detail

#include "http/server_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

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

TEST(WorkerPool, BlockedTasksDoNotStarveLaterOnes) {
  // One thread is meant to be awake; four tasks block it and three more. The monitor must bring
  // in further threads so the quick task still runs while they are blocked.
  WorkerPool pool(8, 1, 500us);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  for (int i = 0; i < 4; ++i) pool.post([gate] { gate.wait_for(5s); });
  std::promise<void> quick;
  auto quick_done = quick.get_future();
  auto t0 = std::chrono::steady_clock::now();
  pool.post([&] { quick.set_value(); });
  EXPECT_EQ(quick_done.wait_for(2s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  release.set_value();
  pool.shutdown(true);
  pool.join();
}

// Structural only: how much this saves in time is measured by server_workers_benchmark.
TEST(WorkerPool, OnlyTheTargetIsWokenForShortTasks) {
  // Starvation detection is effectively off here, so anything beyond the target was woken by post().
  WorkerPool pool(16, 2, 10s);
  // Every thread asleep first. A thread that has not started yet is neither awake nor asleep and
  // would take a task on its own when it starts, so give them time to start (the pool exposes no
  // count of started threads), then wait until none is awake (bounded).
  std::this_thread::sleep_for(100ms);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (pool.awake() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(pool.awake(), 0u);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> started{0};
  for (int i = 0; i < 6; ++i) {
    pool.post([&, gate] {
      started.fetch_add(1);
      gate.wait();
    });
  }
  // Two threads take two tasks; the other four wait in the queue while those two block. A slow
  // machine only makes the wait longer: nothing else can wake a third thread.
  while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(started.load(), 2);
  std::this_thread::sleep_for(50ms);  // room for a wrongly woken third thread to show up
  EXPECT_EQ(started.load(), 2);
  EXPECT_EQ(pool.awake(), 2u);
  release.set_value();
  pool.shutdown(true);
  pool.join();
  EXPECT_EQ(started.load(), 6);
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

// Private to src/http: the pool that runs Dispatcher::dispatch and streaming producers.
//
// Why not boost::asio::thread_pool: it wakes an idle thread for every task. With 16 mostly idle
// threads that is two context switches per request, and on a small machine the scheduler then
// dominates (measured: ~50% of CPU in futex wake/wait, ~35% fewer requests/s than with 2 threads).
// This pool keeps only about one awake thread per core: a task posted while that many are awake
// waits in the queue for one of them. Handlers may block (database, synthesis waits), so a monitor
// wakes one more thread whenever the oldest queued task has waited longer than `starvation`;
// all `max_threads` can end up awake when everything blocks.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace imago::http::detail {

class WorkerPool {
 public:
  using Task = std::function<void()>;

  WorkerPool(std::size_t max_threads, std::size_t target_awake,
             std::chrono::microseconds starvation = std::chrono::microseconds(500));
  ~WorkerPool();  // shutdown(false) + join()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void post(Task task);
  // Like post(), but refuses (false) when `max_queued` tasks already wait.
  bool try_post(Task task, std::size_t max_queued);
  // No more tasks are accepted. With `drain`, queued tasks still run; otherwise they are dropped.
  void shutdown(bool drain);
  void join();  // after shutdown(): waits for the threads to exit

  // For tests and metrics.
  std::size_t threads() const { return threads_.size(); }
  std::size_t awake() const;
  std::size_t sleeping() const;  // threads waiting for work (started and idle)
  // Threads woken by post() / by the starvation monitor since construction: what the pool's
  // policy decides, counted where it decides it (a spurious wake-up is not counted).
  std::size_t wakes_by_post() const;
  std::size_t wakes_by_monitor() const;

 private:
  struct Item {
    Task task;
    std::chrono::steady_clock::time_point queued;
  };
  void worker_loop();
  void monitor_loop();
  void wake_one_locked();  // callers count the wake-up as theirs

  const std::size_t target_awake_;
  const std::chrono::microseconds starvation_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable monitor_cv_;
  std::deque<Item> queue_;
  std::size_t awake_ = 0;          // threads not waiting for work (running a task or looking)
  std::size_t sleeping_ = 0;       // threads waiting on work_cv_
  std::size_t wakes_pending_ = 0;  // notified but not yet running
  std::size_t wakes_by_post_ = 0;
  std::size_t wakes_by_monitor_ = 0;
  bool monitor_idle_ = false;
  bool stopping_ = false;

  std::vector<std::thread> threads_;
  std::thread monitor_;
};

}  // namespace imago::http::detail

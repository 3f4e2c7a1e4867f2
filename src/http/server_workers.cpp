#include "http/server_workers.h"

#include <algorithm>
#include <system_error>

#include "util/log.h"
#include "util/thread_name.h"

namespace imago::http::detail {

namespace {
// Ticks without queued work before the monitor stops polling and waits to be told.
constexpr int kMonitorIdleTicks = 100;
}  // namespace

WorkerPool::WorkerPool(std::size_t max_threads, std::size_t target_awake,
                       std::chrono::microseconds starvation)
    : target_awake_(std::max<std::size_t>(1, target_awake)), starvation_(starvation) {
  max_threads = std::max<std::size_t>(1, max_threads);
  threads_.reserve(max_threads);
  for (std::size_t i = 0; i < max_threads; ++i) {
    try {
      threads_.emplace_back([this] {
        name_this_thread("handler");
        worker_loop();
      });
    } catch (const std::system_error& e) {
      // Out of threads (EAGAIN): serve with fewer workers rather than not at all.
      if (threads_.empty()) throw;
      log::warn("worker_threads_reduced",
                {{"wanted", max_threads}, {"got", threads_.size()}, {"error", e.what()}});
      break;
    }
  }
  try {
    monitor_ = std::thread([this] { monitor_loop(); });
  } catch (...) {
    shutdown(false);  // joinable threads must not outlive a constructor that throws
    join();
    throw;
  }
}

WorkerPool::~WorkerPool() {
  shutdown(false);
  join();
}

std::size_t WorkerPool::awake() const {
  std::lock_guard lock(mu_);
  return awake_;
}

std::size_t WorkerPool::sleeping() const {
  std::lock_guard lock(mu_);
  return sleeping_;
}

std::size_t WorkerPool::wakes_by_post() const {
  std::lock_guard lock(mu_);
  return wakes_by_post_;
}

std::size_t WorkerPool::wakes_by_monitor() const {
  std::lock_guard lock(mu_);
  return wakes_by_monitor_;
}

void WorkerPool::wake_one_locked() {
  ++wakes_pending_;
  work_cv_.notify_one();
}

void WorkerPool::post(Task task) {
  try_post(std::move(task), SIZE_MAX);
}

bool WorkerPool::try_post(Task task, std::size_t max_queued) {
  std::lock_guard lock(mu_);
  if (stopping_) return true;  // only after shutdown(), when nobody posts any more
  if (queue_.size() >= max_queued) return false;
  queue_.push_back(Item{std::move(task), std::chrono::steady_clock::now()});
  const bool can_wake = sleeping_ > wakes_pending_;
  if (can_wake && awake_ + wakes_pending_ < target_awake_) {
    ++wakes_by_post_;
    wake_one_locked();
  } else if (monitor_idle_) {
    // Every awake thread may be blocked in a handler: let the monitor watch this task's age.
    monitor_idle_ = false;
    monitor_cv_.notify_one();
  }
  return true;
}

void WorkerPool::worker_loop() {
  std::unique_lock lock(mu_);
  ++awake_;
  for (;;) {
    while (queue_.empty() && !stopping_) {
      --awake_;
      ++sleeping_;
      work_cv_.wait(lock);
      --sleeping_;
      ++awake_;
      if (wakes_pending_ > 0) --wakes_pending_;
    }
    if (queue_.empty()) {  // stopping, and nothing left to run
      --awake_;
      return;
    }
    Task task = std::move(queue_.front().task);
    queue_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // captured state (sessions, buffers) is released outside the lock
    lock.lock();
  }
}

void WorkerPool::monitor_loop() {
  std::unique_lock lock(mu_);
  int idle_ticks = 0;
  while (!stopping_) {
    if (!queue_.empty()) {
      idle_ticks = 0;
      auto waited = std::chrono::steady_clock::now() - queue_.front().queued;
      if (waited >= starvation_ && sleeping_ > wakes_pending_) {
        ++wakes_by_monitor_;
        wake_one_locked();
      }
    } else if (++idle_ticks > kMonitorIdleTicks) {
      // Nothing queued for a while: stop polling until post() finds every awake thread busy.
      monitor_idle_ = true;
      monitor_cv_.wait(lock, [this] { return stopping_ || !monitor_idle_; });
      idle_ticks = 0;
      continue;
    }
    monitor_cv_.wait_for(lock, starvation_);
  }
}

void WorkerPool::shutdown(bool drain) {
  std::deque<Item> dropped;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (!drain) dropped.swap(queue_);
    work_cv_.notify_all();
    monitor_cv_.notify_all();
  }
  // `dropped` is destroyed here, outside the lock.
}

void WorkerPool::join() {
  for (auto& t : threads_) {
    if (!t.joinable()) continue;
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();  // the pool is being torn down from one of its own tasks
    } else {
      t.join();
    }
  }
  if (monitor_.joinable()) monitor_.join();
}

}  // namespace imago::http::detail

// Job workers: threads that claim jobs of one lane from the durable queue, keep their leases alive
// with a heartbeat while a handler runs, and turn a handler's verdict into retry-with-backoff or a
// final failure. Handlers record their own outcome (exactly once, guarded by the lease), because
// that outcome usually has to commit together with other state (agent row, refund, webhooks).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/agent_store.h"
#include "store/job_store.h"
#include "util/clock.h"

namespace imago::jobs {

struct Backoff {
  int64_t base_ms = 5000;
  double factor = 3;
  int64_t cap_ms = 3600 * 1000;
};
// Delay before attempt `attempts + 1`: base * factor^(attempts-1), capped, with "equal jitter"
// (half fixed, half random) so retries of many jobs do not stampede together.
int64_t backoff_delay_ms(const Backoff& b, int attempts);

class JobContext {
 public:
  JobContext(const Job& job, std::string owner, const std::atomic<bool>& stopping)
      : job_(job), owner_(std::move(owner)), stopping_(stopping) {}
  const Job& job() const { return job_; }
  const std::string& owner() const { return owner_; }
  JobLease lease() const { return {job_.id, owner_}; }
  // The lease was lost (cancelled, or expired and taken by another worker): stop, record nothing.
  bool lost() const { return lost_.load(); }
  bool stopping() const { return stopping_.load(); }
  void mark_lost() { lost_.store(true); }

 private:
  const Job& job_;
  std::string owner_;
  const std::atomic<bool>& stopping_;
  std::atomic<bool> lost_{false};
};

struct JobStep {
  enum Kind { kDone, kRetry, kDefer } kind = kDone;
  std::string message;   // kRetry: why (kept as the job's last_error)
  int64_t defer_ms = 0;  // kDefer: run again after this long, attempt not counted
  static JobStep done() { return {}; }
  static JobStep retry(std::string why) { return {kRetry, std::move(why), 0}; }
  static JobStep defer(int64_t ms) { return {kDefer, {}, ms}; }
};

class JobHandler {
 public:
  virtual ~JobHandler() = default;
  // One attempt. Returns kDone after recording the outcome itself (or when the lease was lost),
  // kRetry for a transient failure, kDefer to wait without using an attempt.
  virtual JobStep run(JobContext& ctx) = 0;
  // Records the final failure (refund, failure webhook) when attempts are used up, including
  // jobs whose workers died mid-run too many times.
  virtual void give_up(JobContext& ctx, const std::string& reason) = 0;
  virtual Backoff backoff() const { return {}; }
};

// Wakes idle workers as soon as a job is enqueued in this process (others poll).
class JobNotifier {
 public:
  JobNotifier(JobStore& store, Clock& clock) : store_(store), clock_(clock) {}
  JobStore& store() { return store_; }
  Clock& clock() { return clock_; }
  void wake();
  // Waits up to `ms` or until wake().
  void wait(int64_t ms);

 private:
  JobStore& store_;
  Clock& clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t generation_ = 0;
};

struct JobWorkerPoolOptions {
  std::string lane;
  int threads = 2;
  int64_t lease_ms = 15000;
  int64_t heartbeat_ms = 3000;
  int64_t poll_ms = 500;
  std::string owner_prefix;  // host:pid; each thread appends its index
};

class JobWorkerPool {
 public:
  JobWorkerPool(JobNotifier& queue, JobWorkerPoolOptions options);
  ~JobWorkerPool();
  void add_handler(std::string kind, JobHandler* handler);
  void start();
  // Stops claiming, lets running jobs finish, joins the threads. Idempotent.
  void stop();

 private:
  void worker_loop(int index);
  void heartbeat_loop();
  void run_one(const Job& job, const std::string& owner);

  JobNotifier& queue_;
  JobWorkerPoolOptions opt_;
  std::map<std::string, JobHandler*, std::less<>> handlers_;
  std::vector<std::thread> threads_;
  std::thread heartbeat_;
  std::atomic<bool> stopping_{false};
  bool started_ = false;
  std::mutex mu_;
  std::condition_variable hb_cv_;
  std::map<std::string, std::shared_ptr<JobContext>> running_;  // job id -> context
};

// "host:pid:random" identifying this process in lease_owner columns.
std::string process_owner_id();

}  // namespace imago::jobs

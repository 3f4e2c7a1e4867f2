#include "jobs/job_workers.h"

#include <unistd.h>

#include <cmath>

#include "util/log.h"
#include "util/random.h"
#include "util/thread_name.h"

namespace imago::jobs {

int64_t backoff_delay_ms(const Backoff& b, int attempts) {
  double d = static_cast<double>(b.base_ms) * std::pow(b.factor, std::max(0, attempts - 1));
  int64_t full = static_cast<int64_t>(std::min<double>(d, static_cast<double>(b.cap_ms)));
  int64_t half = full / 2;
  return half + static_cast<int64_t>(random_below(static_cast<uint64_t>(std::max<int64_t>(half, 1)) + 1));
}

void JobNotifier::wake() {
  {
    std::lock_guard lock(mu_);
    ++generation_;
  }
  cv_.notify_all();
}

void JobNotifier::wait(int64_t ms) {
  std::unique_lock lock(mu_);
  uint64_t gen = generation_;
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return generation_ != gen; });
}

std::string process_owner_id() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + random_hex(4);
}

JobWorkerPool::JobWorkerPool(JobNotifier& queue, JobWorkerPoolOptions options)
    : queue_(queue), opt_(std::move(options)) {
  if (opt_.owner_prefix.empty()) opt_.owner_prefix = process_owner_id();
}

JobWorkerPool::~JobWorkerPool() {
  stop();
}

void JobWorkerPool::add_handler(std::string kind, JobHandler* handler) {
  handlers_[std::move(kind)] = handler;
}

void JobWorkerPool::start() {
  if (started_) return;
  started_ = true;
  for (int i = 0; i < opt_.threads; ++i)
    threads_.emplace_back([this, i] {
      name_this_thread("job");
      worker_loop(i);
    });
  heartbeat_ = std::thread([this] { heartbeat_loop(); });
}

void JobWorkerPool::stop() {
  if (!started_ || stopping_.exchange(true)) return;
  queue_.wake();
  for (auto& t : threads_) t.join();
  hb_cv_.notify_all();
  heartbeat_.join();
}

void JobWorkerPool::worker_loop(int index) {
  const std::string owner = opt_.owner_prefix + "#" + opt_.lane + std::to_string(index);
  while (!stopping_.load()) {
    auto claimed = queue_.store().claim(opt_.lane, owner, opt_.lease_ms * 1000);
    if (!claimed.ok()) {
      log::error("job_claim_failed", {{"lane", opt_.lane}, {"error", claimed.status().message()}});
      queue_.wait(opt_.poll_ms * 4);
      continue;
    }
    if (!claimed->has_value()) {
      queue_.wait(opt_.poll_ms);
      continue;
    }
    run_one(**claimed, owner);
  }
}

void JobWorkerPool::run_one(const Job& job, const std::string& owner) {
  JobStore& store = queue_.store();
  auto it = handlers_.find(job.kind);
  if (it == handlers_.end()) {
    (void)store.fail(job.id, owner, "no handler for job kind " + job.kind);
    log::error("job_unknown_kind", {{"job", job.id}, {"kind", job.kind}});
    return;
  }
  JobHandler& handler = *it->second;
  auto shared = std::make_shared<JobContext>(job, owner, stopping_);
  JobContext& ctx = *shared;
  {
    std::lock_guard lock(mu_);
    running_[job.id] = shared;
  }
  log::info("job_started",
            {{"job", job.id}, {"kind", job.kind}, {"subject", job.subject}, {"attempt", job.attempts}});
  if (job.attempts > job.max_attempts) {
    // Claimed again after its workers died mid-run too often: a poison job, stop here.
    handler.give_up(ctx, "interrupted " + std::to_string(job.attempts - 1) + " times" +
                             (job.last_error ? " (last error: " + *job.last_error + ")" : ""));
  } else {
    JobStep step;
    try {
      step = handler.run(ctx);
    } catch (const std::exception& e) {
      step = JobStep::retry(std::string("internal error: ") + e.what());
    }
    if (!ctx.lost()) {
      if (step.kind == JobStep::kRetry) {
        if (job.attempts >= job.max_attempts) {
          handler.give_up(ctx, step.message);
        } else {
          int64_t delay = backoff_delay_ms(handler.backoff(), job.attempts);
          (void)store.retry(job.id, owner, step.message, queue_.clock().now_us() + delay * 1000);
          log::warn("job_retry", {{"job", job.id},
                                  {"kind", job.kind},
                                  {"attempt", job.attempts},
                                  {"delay_ms", delay},
                                  {"error", step.message}});
        }
      } else if (step.kind == JobStep::kDefer) {
        (void)store.release(job.id, owner, queue_.clock().now_us() + step.defer_ms * 1000);
      }
    }
  }
  log::info("job_finished", {{"job", job.id}, {"kind", job.kind}, {"lost", ctx.lost()}});
  std::lock_guard lock(mu_);
  running_.erase(job.id);
}

void JobWorkerPool::heartbeat_loop() {
  std::unique_lock lock(mu_);
  while (true) {
    hb_cv_.wait_for(lock, std::chrono::milliseconds(opt_.heartbeat_ms));
    if (stopping_.load() && running_.empty()) return;
    std::vector<std::pair<std::string, std::shared_ptr<JobContext>>> current(running_.begin(),
                                                                             running_.end());
    lock.unlock();
    for (auto& [id, ctx] : current) {
      auto held = queue_.store().heartbeat(id, ctx->owner(), opt_.lease_ms * 1000);
      if (held.ok() && !*held) {
        log::warn("job_lease_lost", {{"job", id}});
        ctx->mark_lost();
      }
    }
    lock.lock();
    if (stopping_.load() && running_.empty()) return;
  }
}

}  // namespace imago::jobs

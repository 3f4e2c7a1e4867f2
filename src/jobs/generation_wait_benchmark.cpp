// How long a paid generation waits while another account has a queue of free movement
// regenerations (PUT /v1/dynamics), with the worker layout `imagod serve` uses (Runtime): a
// generate pool of 2 workers and a background pool of 1, on a real SQLite job store. Handlers
// sleep instead of rendering (free job 3 s, paid generation 0.5 s), so the figures show queueing,
// not rendering speed.
//
//   baseline: the same free work queued in the generate lane, as before free regenerations had a
//             lane of their own (emulated with the generate lane's uncapped video_render kind);
//   lanes:    the free work as `dynamics_movements`, in the background lane.
//
// For each, the free account queues 30 jobs, then the paid account queues one agent_generate
// every 2 s (8 probes); latency = enqueue to completion. Stops by itself (about 40 s).
//
// Build: ninja -C <build> generation_wait_benchmark   Run: <build>/src/jobs/generation_wait_benchmark
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "jobs/job_workers.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/test_db.h"

using namespace imago;
using namespace imago::jobs;
using SteadyClock = std::chrono::steady_clock;

namespace {

class SleepHandler : public JobHandler {
 public:
  SleepHandler(JobStore& store, int ms) : store_(store), ms_(ms) {}
  JobStep run(JobContext& ctx) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    (void)store_.complete(ctx.job().id, ctx.owner());
    std::lock_guard lock(mu);
    done[ctx.job().id] = SteadyClock::now();
    return JobStep::done();
  }
  void give_up(JobContext& ctx, const std::string& reason) override {
    (void)store_.fail(ctx.job().id, ctx.owner(), reason);
  }
  std::mutex mu;
  std::map<std::string, SteadyClock::time_point> done;

 private:
  JobStore& store_;
  int ms_;
};

void run(const char* label, std::string_view free_kind) {
  sqlite::TestDb tdb;
  auto store = sql::make_job_store(tdb.db(), SystemClock::instance());
  JobNotifier queue(*store, SystemClock::instance());
  SleepHandler free_work(*store, 3000), paid_work(*store, 500);

  JobWorkerPoolOptions g;
  g.lane = std::string(kLaneGenerate);
  g.threads = 2;
  g.poll_ms = 50;
  g.owner_prefix = "bench";
  JobWorkerPool generate(queue, g);
  generate.add_handler(std::string(kJobAgentGenerate), &paid_work);
  JobWorkerPoolOptions b = g;
  b.lane = std::string(kLaneBackground);
  b.threads = 1;
  JobWorkerPool background(queue, b);
  background.add_handler(std::string(kJobDynamicsMovements), &free_work);
  if (free_kind == kJobVideoRender) generate.add_handler(std::string(kJobVideoRender), &free_work);

  auto add = [&](std::string_view kind, const char* account) {
    NewJob j;
    j.kind = std::string(kind);
    j.account_id = account;
    j.subject = "agent";
    std::string id = store->enqueue(j).value();
    queue.wake();
    return id;
  };
  for (int i = 0; i < 30; ++i) add(free_kind, "usr_free");
  generate.start();
  background.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the free jobs hold the workers

  std::vector<std::pair<std::string, SteadyClock::time_point>> probes;
  for (int i = 0; i < 8; ++i) {
    probes.emplace_back(add(kJobAgentGenerate, "usr_paid"), SteadyClock::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  }
  // Every probe finishes within one free job plus its own run after it was queued.
  std::this_thread::sleep_for(std::chrono::milliseconds(4000));
  generate.stop();
  background.stop();

  std::vector<double> ms;
  std::lock_guard lock(paid_work.mu);
  for (const auto& [id, t0] : probes) {
    auto it = paid_work.done.find(id);
    if (it != paid_work.done.end())
      ms.push_back(std::chrono::duration<double, std::milli>(it->second - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  if (ms.empty()) {
    std::printf("%-9s no paid generation finished\n", label);
    return;
  }
  std::printf(
      "%-9s paid generations %zu/8  p50 %6.0f ms  max %6.0f ms  (run alone: 500 ms)  free jobs done %zu/30\n",
      label, ms.size(), ms[ms.size() / 2], ms.back(), free_work.done.size());
}

}  // namespace

int main() {
  run("baseline", kJobVideoRender);
  run("lanes", kJobDynamicsMovements);
  return 0;
}

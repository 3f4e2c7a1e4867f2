// Cost of one job claim (+ completion) with a deep queue, on every store backend: one account has
// flooded the generate lane with 100,000 jobs and 49 others have 20 each. The fair claim's cost
// must depend on the number of accounts with queued work, not on the depth of the queue
// (docs/jobs.md). Threads(4) and Threads(16) show it under contention (SKIP LOCKED on
// PostgreSQL, the single writer on SQLite); a claim that comes back empty while jobs are queued
// fails the run. Run: make bench, then build-bench/src/store/job_claim_benchmark.
#include <benchmark/benchmark.h>

#include <memory>
#include <mutex>

#include "store/contracts/store_backends.h"
#include "store/job_store.h"

namespace imago::contracts {
namespace {

constexpr int kFloodJobs = 100'000;
constexpr int kOtherAccounts = 49;
constexpr int kJobsPerOtherAccount = 20;

struct Queue {
  SystemClock clock;
  std::unique_ptr<StoreBackend> backend;
};

void enqueue(JobStore& jobs, const std::string& kind, const std::string& account) {
  NewJob j;
  j.kind = kind;
  j.account_id = account;
  j.subject = "bench";
  if (!jobs.enqueue(j).ok()) std::abort();
}

// One filled queue per backend for the whole run (filling 100k jobs takes seconds).
Queue& queue_for(size_t backend) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<Queue>> queues(contract_backends().size());
  std::lock_guard lock(mu);
  auto& q = queues.at(backend);
  if (!q) {
    q = std::make_unique<Queue>();
    auto b = contract_backends().at(backend).open(q->clock);
    if (!b.ok()) {
      fprintf(stderr, "backend unavailable: %s\n", b.status().message().c_str());
      std::abort();
    }
    q->backend = std::move(b).value();
    JobStore& jobs = *q->backend->stores().jobs;
    for (int i = 0; i < kFloodJobs; ++i) enqueue(jobs, std::string(kJobVideoRender), "usr_flood");
    for (int a = 0; a < kOtherAccounts; ++a)
      for (int i = 0; i < kJobsPerOtherAccount; ++i)
        enqueue(jobs, std::string(kJobAgentGenerate), "usr_" + std::to_string(a));
  }
  return *q;
}

void BM_ClaimAndComplete(benchmark::State& state) {
  size_t backend = static_cast<size_t>(state.range(0));
  JobStore& jobs = *queue_for(backend).backend->stores().jobs;
  std::string owner = "bench-" + std::to_string(state.thread_index());
  state.SetLabel(contract_backends().at(backend).name);
  for (auto _ : state) {
    auto j = jobs.claim(kLaneGenerate, owner, 60'000'000);
    if (!j.ok()) {
      state.SkipWithError(("claim failed: " + j.status().message()).c_str());
      break;
    }
    if (!j->has_value()) {
      // Work remains (100k queued): an empty answer would idle a worker for its poll interval.
      state.SkipWithError("a claim came back empty while jobs were queued");
      break;
    }
    if (!jobs.complete((*j)->id, owner).ok()) {
      state.SkipWithError("complete failed");
      break;
    }
  }
}

void Backends(benchmark::internal::Benchmark* b) {
  for (size_t i = 0; i < contract_backends().size(); ++i) b->Arg(static_cast<int64_t>(i));
}

BENCHMARK(BM_ClaimAndComplete)
    ->Apply(Backends)
    ->Threads(1)
    ->Threads(4)
    ->Threads(16)
    ->UseRealTime()
    ->Iterations(2000);

}  // namespace
}  // namespace imago::contracts

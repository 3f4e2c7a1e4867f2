// What keeping about one awake worker per core buys (src/http/server_workers.h): short tasks
// posted one after another (the request pool's load when handlers are quick), with the pool's
// target of awake threads at 2 (this machine's cores) versus 16 (a wake-up per task, like
// boost::asio::thread_pool). Reported per task: wall time and voluntary + involuntary context
// switches of the whole process (getrusage).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "http/server_workers.h"

namespace imago::http::detail {
namespace {

long context_switches() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_nvcsw + u.ru_nivcsw;
}

// Batches of 64 short tasks (a few microseconds of work each), waiting for each batch to finish.
void BM_ShortTasks(benchmark::State& state) {
  const auto target = static_cast<std::size_t>(state.range(0));
  WorkerPool pool(16, target);
  constexpr int kBatch = 64;
  std::mutex mu;
  std::condition_variable cv;
  int left = 0;
  const long cs0 = context_switches();
  for (auto _ : state) {
    {
      std::lock_guard lock(mu);
      left = kBatch;
    }
    for (int i = 0; i < kBatch; ++i) {
      pool.post([&] {
        volatile unsigned x = 0;
        for (int k = 0; k < 2000; ++k) x = x + static_cast<unsigned>(k);
        std::lock_guard lock(mu);
        if (--left == 0) cv.notify_one();
      });
    }
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return left == 0; });
  }
  const double tasks = static_cast<double>(state.iterations()) * kBatch;
  state.counters["ctx_switches_per_task"] = static_cast<double>(context_switches() - cs0) / tasks;
  state.SetItemsProcessed(static_cast<int64_t>(tasks));
}
BENCHMARK(BM_ShortTasks)->Arg(2)->Arg(16)->UseRealTime()->Unit(benchmark::kMicrosecond);

// One task at a time, waiting for it: the hand-off latency a request pays when its handler runs
// on the pool instead of the I/O thread (what HandlerPool::kInline avoids).
void BM_RoundTrip(benchmark::State& state) {
  WorkerPool pool(16, 2);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  for (auto _ : state) {
    {
      std::lock_guard lock(mu);
      done = false;
    }
    pool.post([&] {
      std::lock_guard lock(mu);
      done = true;
      cv.notify_one();
    });
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done; });
  }
}
BENCHMARK(BM_RoundTrip)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace imago::http::detail

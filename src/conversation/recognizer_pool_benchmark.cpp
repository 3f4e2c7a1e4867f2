// What a session's first microphone audio waits for before recognition can start:
//   BM_LoadRecognizer      Recognizer::create, what every session paid before the pool
//   BM_TakeFromWarmPool    RecognizerPool::take with a spare ready (the spare is reloaded
//                          outside the timed region)
// and the resident memory one loaded recogniser adds (counter rss_mb_each).
//   ninja -C build recognizer_pool_benchmark && build/src/conversation/recognizer_pool_benchmark
#include <benchmark/benchmark.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "conversation/recognizer_pool.h"

namespace imago::conversation {
namespace {

double rss_mb() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

void BM_LoadRecognizer(benchmark::State& state) {
  std::vector<std::unique_ptr<Recognizer>> kept;  // kept alive so RSS growth is per recogniser
  const double before = rss_mb();
  for (auto _ : state) {
    auto r = Recognizer::create();
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    kept.push_back(std::move(r).value());
  }
  state.counters["rss_mb_each"] = (rss_mb() - before) / static_cast<double>(kept.size());
}
BENCHMARK(BM_LoadRecognizer)->Unit(benchmark::kMillisecond)->Iterations(8);

void BM_TakeFromWarmPool(benchmark::State& state) {
  RecognizerPool pool;
  std::vector<std::unique_ptr<Recognizer>> taken;  // freed after the loop: freeing is not taking
  for (auto _ : state) {
    state.PauseTiming();
    pool.warm();
    while (pool.ready() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    state.ResumeTiming();
    auto r = pool.take();
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    taken.push_back(std::move(r).value());
  }
}
BENCHMARK(BM_TakeFromWarmPool)->Unit(benchmark::kMicrosecond)->Iterations(8);

}  // namespace
}  // namespace imago::conversation

// What total_steps costs: one Spanish paragraph spoken by espeak-ng (the quickest engine, so the
// post-processing that the steps change is a large share), stretched to speed 1.05 and resampled
// to 24 kHz, at 5 and at 12 steps (dsp.h, Quality). Process CPU time, so other processes on the
// machine blur it less than wall time. Service.FewerStepsDoLessPostProcessing checks the settings
// themselves; this measures what they cost.
//
// Build: cmake -DIMAGO_BUILD_BENCH=ON, ninja -C <build> speech_steps_benchmark
#include <benchmark/benchmark.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "speech/speech_service.h"

namespace imago::speech {
namespace {

SpeechService& service() {
  static std::unique_ptr<SpeechService> svc = [] {
    SpeechOptions o;
    o.workers = 1;
    auto s = make_speech_service(o);
    if (!s.ok()) throw std::runtime_error(s.status().message());
    return std::move(s.value());
  }();
  return *svc;
}

void BM_SynthesizeWithSteps(benchmark::State& state) {
  std::string text;
  for (int i = 0; i < 12; ++i) text += "Esta frase mide cuánto tarda el posprocesado en cada calidad. ";
  VoiceSettings s;
  s.speed = 1.05;
  s.language = "es";
  s.total_steps = static_cast<int>(state.range(0));
  s.output_rate = 24000;
  for (auto _ : state) {
    auto a = service().synthesize(text, s);
    if (!a.ok()) {
      state.SkipWithError(a.status().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(a->samples.data());
  }
}
BENCHMARK(BM_SynthesizeWithSteps)->Arg(5)->Arg(12)->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace imago::speech

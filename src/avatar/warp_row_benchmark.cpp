// The row sampler's paths on one core (avatar/warp_row.h): pixels per second over a
// 360x400 head region warped by a slight rotation, the renderer's usual case while the head sways.
//   ninja -C build avatar_warp_row_benchmark && taskset -c 1 build/src/avatar/avatar_warp_row_benchmark
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "avatar/warp_row.h"

namespace imago::avatar::internal {
namespace {

constexpr int kW = 512, kH = 512, kRegionW = 360, kRegionH = 400;

void BM_WarpRegion(benchmark::State& state, WarpPath path) {
  if (!warp_path_available(path)) return state.SkipWithError("this CPU lacks the path");
  std::vector<uint8_t> photo(size_t(kW) * kH * 3), canvas(photo.size());
  std::mt19937 rng(1);
  for (auto& b : photo) b = uint8_t(rng());
  const RgbImage src{photo.data(), size_t(kW) * 3, kW, kH};
  const float a = 0.99f, b = 0.02f, c = -0.015f, d = 1.01f;  // about one degree and 1% scale
  for (auto _ : state) {
    for (int y = 0; y < kRegionH; ++y) {
      const float sx = b * y + 70.3f, sy = d * y + 50.7f;
      uint8_t* out = canvas.data() + (size_t(y + 50) * kW + 70) * 3;
      warp_row_on(path, src, sx, sy, a, c, kRegionW, out);
    }
    benchmark::DoNotOptimize(canvas.data());
  }
  state.SetItemsProcessed(state.iterations() * kRegionW * kRegionH);
}

BENCHMARK_CAPTURE(BM_WarpRegion, portable, WarpPath::kPortable)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_WarpRegion, ssse3, WarpPath::kSsse3)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_WarpRegion, avx2, WarpPath::kAvx2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace imago::avatar::internal

// The row sampler's two paths on one core (avatar/warp_row.h): pixels per second over a
// 360x400 head region warped by a slight rotation, the renderer's usual case while the head sways.
//   ninja -C build avatar_warp_row_benchmark && taskset -c 1 build/src/avatar/avatar_warp_row_benchmark
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "avatar/warp_row.h"

namespace imago::avatar::internal {
namespace {

constexpr int kW = 512, kH = 512, kRegionW = 360, kRegionH = 400;

template <bool kVectorised>
void BM_WarpRegion(benchmark::State& state) {
  std::vector<uint8_t> photo(size_t(kW) * kH * 3), canvas(photo.size());
  std::mt19937 rng(1);
  for (auto& b : photo) b = uint8_t(rng());
  const RgbImage src{photo.data(), size_t(kW) * 3, kW, kH};
  const float a = 0.99f, b = 0.02f, c = -0.015f, d = 1.01f;  // about one degree and 1% scale
  for (auto _ : state) {
    for (int y = 0; y < kRegionH; ++y) {
      const float sx = b * y + 70.3f, sy = d * y + 50.7f;
      uint8_t* out = canvas.data() + (size_t(y + 50) * kW + 70) * 3;
      if (kVectorised) {
        warp_row(src, sx, sy, a, c, kRegionW, out);
      } else {
        warp_row_portable(src, sx, sy, a, c, kRegionW, out);
      }
    }
    benchmark::DoNotOptimize(canvas.data());
  }
  state.SetItemsProcessed(state.iterations() * kRegionW * kRegionH);
  state.SetLabel(kVectorised && !warp_row_vectorised() ? "no SSSE3: portable path" : "");
}

BENCHMARK_TEMPLATE(BM_WarpRegion, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_WarpRegion, true)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace imago::avatar::internal

#include "avatar/warp_row.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace imago::avatar::internal {
namespace {

struct Image {
  int cols, rows;
  std::vector<uint8_t> px;
  RgbImage view() const { return {px.data(), size_t(cols) * 3, cols, rows}; }
};

Image noise(int cols, int rows, uint32_t seed) {
  Image im{cols, rows, std::vector<uint8_t>(size_t(cols) * rows * 3)};
  std::mt19937 rng(seed);
  for (auto& b : im.px) b = uint8_t(rng());
  return im;
}

// Float bilinear with the same clamp: what the fixed-point paths approximate.
double reference(const Image& im, double x, double y, int c) {
  x = std::clamp(x, 0.0, im.cols - 1.0), y = std::clamp(y, 0.0, im.rows - 1.0);
  int xi = std::min(int(x), im.cols - 2), yi = std::min(int(y), im.rows - 2);
  double fx = x - xi, fy = y - yi;
  auto at = [&](int xx, int yy) { return double(im.px[(size_t(yy) * im.cols + xx) * 3 + c]); };
  return at(xi, yi) * (1 - fx) * (1 - fy) + at(xi + 1, yi) * fx * (1 - fy) + at(xi, yi + 1) * (1 - fx) * fy +
         at(xi + 1, yi + 1) * fx * fy;
}

TEST(WarpRow, AllPathsGiveTheSameBytesInsideAndAtTheEdges) {
  const Image im = noise(97, 61, 7);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> pos(-20, 120), step(-1.5f, 1.5f);
  int checked = 0;
  for (WarpPath path : {WarpPath::kSsse3, WarpPath::kAvx2}) {
    if (!warp_path_available(path)) continue;
    ++checked;
    for (int k = 0; k < 4000; ++k) {
      const float sx = pos(rng), sy = pos(rng) * 0.6f, dx = step(rng), dy = step(rng) * 0.3f;
      const int n = 1 + int(rng() % 90);
      // A guard pixel on each side: a path must write exactly its n pixels.
      std::vector<uint8_t> a(size_t(n + 2) * 3, 0xA5), b(a);
      warp_row_on(path, im.view(), sx, sy, dx, dy, n, a.data() + 3);
      warp_row_portable(im.view(), sx, sy, dx, dy, n, b.data() + 3);
      ASSERT_EQ(a, b) << "path " << int(path) << " row " << k << " from (" << sx << ", " << sy << ") by ("
                      << dx << ", " << dy << ")";
    }
  }
  // Rows inside the image, the vectorised paths' main case (most random rows above leave it).
  for (WarpPath path : {WarpPath::kSsse3, WarpPath::kAvx2}) {
    if (!warp_path_available(path)) continue;
    std::uniform_real_distribution<float> in_x(0, 40), in_y(0, 50), small(-0.4f, 0.4f), near_one(0.9f, 1.1f);
    for (int k = 0; k < 4000; ++k) {
      const float sx = in_x(rng), sy = in_y(rng), dx = near_one(rng), dy = small(rng) * 0.05f;
      const int n = 1 + int(rng() % 50);
      std::vector<uint8_t> a(size_t(n + 2) * 3, 0x5A), b(a);
      warp_row_on(path, im.view(), sx, sy, dx, dy, n, a.data() + 3);
      warp_row_portable(im.view(), sx, sy, dx, dy, n, b.data() + 3);
      ASSERT_EQ(a, b) << "path " << int(path) << " row " << k << " from (" << sx << ", " << sy << ") by ("
                      << dx << ", " << dy << ")";
    }
  }
  // warp_row itself takes one of them.
  EXPECT_TRUE(warp_path_available(warp_path()));
  std::vector<uint8_t> a(40 * 3), b(a.size());
  warp_row(im.view(), 3.3f, 4.6f, 0.97f, 0.02f, 40, a.data());
  warp_row_on(warp_path(), im.view(), 3.3f, 4.6f, 0.97f, 0.02f, 40, b.data());
  EXPECT_EQ(a, b);
#if defined(__x86_64__)
  EXPECT_GT(checked, 0) << "an x86-64 CPU without SSSE3";
#else
  (void)checked;
#endif
}

TEST(WarpRow, SamplesAreBilinearToASixtyFourthOfAPixel) {
  const Image im = noise(64, 48, 3);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pos(-5, 70), step(-1.2f, 1.2f);
  int worst = 0;
  for (int k = 0; k < 500; ++k) {
    const float sx = pos(rng), sy = pos(rng) * 0.7f, dx = step(rng), dy = step(rng) * 0.5f;
    const int n = 40;
    std::vector<uint8_t> out(size_t(n) * 3);
    warp_row(im.view(), sx, sy, dx, dy, n, out.data());
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) {
        const double want = reference(im, sx + double(i) * dx, sy + double(i) * dy, c);
        worst = std::max(worst, int(std::lround(std::abs(want - out[size_t(i) * 3 + c]))));
      }
  }
  // The position is cut to 1/64 pixel on each axis: on noise, where neighbours differ by up to
  // 255, that is up to 2 x 255/64 levels, plus rounding.
  EXPECT_LE(worst, 9);
}

TEST(WarpRow, AnIdentityRowCopiesThePixels) {
  const Image im = noise(50, 20, 1);
  std::vector<uint8_t> out(48 * 3);
  warp_row(im.view(), 1, 7, 1, 0, 48, out.data());
  for (int i = 0; i < 48; ++i)
    for (int c = 0; c < 3; ++c)
      ASSERT_EQ(out[size_t(i) * 3 + c], im.px[(size_t(7) * 50 + 1 + i) * 3 + c]) << i;
}

// warp_rows writes each of a triangle's rows as warp_row_on does for that row, on every path, and
// nothing else of the canvas.
TEST(WarpRow, RowsOfAWarpAreItsRowsOneByOne) {
  const Image im = noise(80, 60, 9);
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> coef(-0.3f, 0.3f), off(-10, 70);
  const int W = 64, H = 48;
  const size_t step = size_t(W) * 3 + 5;  // rows with padding, as a Mat's may have
  for (WarpPath path : {WarpPath::kPortable, WarpPath::kSsse3, WarpPath::kAvx2}) {
    if (!warp_path_available(path)) continue;
    for (int k = 0; k < 300; ++k) {
      const float a[6] = {1 + coef(rng), coef(rng), off(rng), coef(rng), 1 + coef(rng), off(rng)};
      std::vector<RowSpan> rows;
      for (int y = int(rng() % 10); y < H; y += 1 + int(rng() % 3)) {
        const int x0 = int(rng() % W), x1 = std::min(W - 1, x0 + int(rng() % 30));
        rows.push_back({y, x0, x1});
      }
      std::vector<uint8_t> got(step * H, 0x3C), want(got);
      warp_rows(path, im.view(), a, rows.data(), int(rows.size()), got.data(), step);
      for (const auto& r : rows)
        warp_row_on(path, im.view(), a[0] * r.x0 + a[1] * r.y + a[2], a[3] * r.x0 + a[4] * r.y + a[5], a[0],
                    a[3], r.x1 - r.x0 + 1, want.data() + size_t(r.y) * step + size_t(r.x0) * 3);
      ASSERT_EQ(got, want) << "path " << int(path) << " warp " << k;
    }
  }
}

}  // namespace
}  // namespace imago::avatar::internal

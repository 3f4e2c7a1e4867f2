// One row of a triangle's affine warp: bilinear samples of an 8-bit RGB image along a straight
// segment. This is most of a frame's rendering time (the whole head is re-warped every frame while
// it sways), so it has vectorised paths on x86 (AVX2, else SSSE3, chosen at run time) and a
// portable one; all three give the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace imago::avatar::internal {

// The source image: `data` of `cols` x `rows` RGB pixels, `step` bytes per row.
struct RgbImage {
  const uint8_t* data = nullptr;
  size_t step = 0;
  int cols = 0, rows = 0;
};

// Writes n RGB pixels to out: pixel i samples src at (sx + i*dx, sy + i*dy) (pixel centres at
// integer coordinates), clamped to the image. Coordinates are 16.16 fixed point and the weights 6-bit
// (1/64 pixel; OpenCV's remap uses 1/32).
void warp_row(const RgbImage& src, float sx, float sy, float dx, float dy, int n, uint8_t* out);

// The paths one by one, for tests and benchmarks that compare them.
enum class WarpPath { kPortable, kSsse3, kAvx2 };
bool warp_path_available(WarpPath path);
// The path warp_row takes on this CPU.
WarpPath warp_path();
// warp_row on `path` (the portable one when this CPU lacks it).
void warp_row_on(WarpPath path, const RgbImage& src, float sx, float sy, float dx, float dy, int n,
                 uint8_t* out);
void warp_row_portable(const RgbImage& src, float sx, float sy, float dx, float dy, int n, uint8_t* out);

// One row of a triangle for warp_rows: pixels x0..x1 of row y.
struct RowSpan {
  int y, x0, x1;
};
// The rows of one affine warp, each as warp_row_on(path, src, a[0] x0 + a[1] y + a[2],
// a[3] x0 + a[4] y + a[5], a[0], a[3], x1 - x0 + 1, row y of dst + x0 * 3) writes it, in one call:
// a triangle's rows are about 21 pixels long, and a call per row from the mesh's triangle loop
// (the path's dispatch, the loop's registers saved around it) was about a tenth of a speaking
// frame. `dst` is RGB with `dst_step` bytes per row.
void warp_rows(WarpPath path, const RgbImage& src, const float a[6], const RowSpan* rows, int n, uint8_t* dst,
               size_t dst_step);

}  // namespace imago::avatar::internal

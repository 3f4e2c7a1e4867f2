#include "avatar/warp_row.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#define IMAGO_WARP_ROW_X86 1
#else
#define IMAGO_WARP_ROW_X86 0
#endif

namespace imago::avatar::internal {
namespace {

// Round to 16.16 fixed point without a libm call per row (lround was 1.4% of a room's CPU).
inline int32_t fixed(float v) {
  return int32_t(v * 65536.0f + (v >= 0 ? 0.5f : -0.5f));
}

// The walk along the row shared by both paths: the fixed-point start and step, and whether the
// per-pixel clamps can go (a straight segment whose two ends lie inside the image lies inside).
struct Walk {
  int32_t X, Y, DX, DY, xmax, ymax;
  bool inside;
};

inline Walk walk(const RgbImage& src, float sx, float sy, float dx, float dy, int n) {
  Walk w;
  w.xmax = (src.cols - 1) * 65536 - 1;
  w.ymax = (src.rows - 1) * 65536 - 1;
  w.X = fixed(sx), w.Y = fixed(sy), w.DX = fixed(dx), w.DY = fixed(dy);
  const int64_t XE = int64_t(w.X) + int64_t(w.DX) * (n - 1), YE = int64_t(w.Y) + int64_t(w.DY) * (n - 1);
  w.inside = w.X >= 0 && w.Y >= 0 && w.X <= w.xmax && w.Y <= w.ymax && XE >= 0 && YE >= 0 && XE <= w.xmax &&
             YE <= w.ymax;
  return w;
}

// Horizontal then vertical interpolation with 6-bit weights: h = a(64-fx) + b fx fits 16 bits,
// the vertical sum 32; this is the arithmetic the SSSE3 path does, so both give the same bytes.
inline uint8_t lerp2(const uint8_t* r0, const uint8_t* r1, int fx, int fy) {
  const int h0 = r0[0] * (64 - fx) + r0[3] * fx, h1 = r1[0] * (64 - fx) + r1[3] * fx;
  return uint8_t((h0 * (64 - fy) + h1 * fy + 2048) >> 12);
}

#if IMAGO_WARP_ROW_X86
// Two source rows' pixel pairs (each six bytes R0 G0 B0 R1 G1 B1, the upper row in the low half of
// `rows`) to one RGB pixel, with the same arithmetic as lerp2. `pairs` picks the bytes of each
// channel's (left, right) pair out of `rows`.
__attribute__((target("ssse3"))) inline uint32_t blend(__m128i rows, __m128i pairs, int fx, int fy) {
  const __m128i p = _mm_shuffle_epi8(rows, pairs);
  // (64 - fx, fx) byte pairs: one 16-bit horizontal sum per channel and row.
  const __m128i h = _mm_maddubs_epi16(p, _mm_set1_epi16(short((fx << 8) | (64 - fx))));
  // Upper and lower sums interleaved, times (64 - fy, fy): one 32-bit sum per channel.
  const __m128i v =
      _mm_madd_epi16(_mm_unpacklo_epi16(h, _mm_srli_si128(h, 8)), _mm_set1_epi32((fy << 16) | (64 - fy)));
  const __m128i s = _mm_srli_epi32(_mm_add_epi32(v, _mm_set1_epi32(2048)), 12);
  return uint32_t(_mm_cvtsi128_si32(_mm_packus_epi16(_mm_packs_epi32(s, s), s)));
}

// Whether a row walked by w reads each pixel pair with one 8-byte load per source row: it stays
// inside and two rows above the image's bottom (two bytes past the pair, still inside the image).
inline bool wide_loads(const RgbImage& src, const Walk& w, int n) {
  const int32_t lowest = std::max(w.Y, int32_t(int64_t(w.Y) + int64_t(w.DY) * (n - 1)));
  return w.inside && (lowest >> 16) + 2 < src.rows - 1;
}

// The n pixels from where w stands (w is advanced past them).
__attribute__((target("ssse3"))) void walk_ssse3(const RgbImage& src, Walk& w, int n, uint8_t* out) {
  const size_t step = src.step;
  auto put = [](uint8_t* o, uint32_t rgb) {
    o[0] = uint8_t(rgb), o[1] = uint8_t(rgb >> 8), o[2] = uint8_t(rgb >> 16);
  };
  // A row that stays two rows above the image's bottom reads each pixel pair with one 8-byte load
  // per source row (two bytes past the pair, still inside the image); elsewhere with two 4-byte
  // loads (bytes 0-3 and 2-5) that never pass the pair's last byte.
  if (wide_loads(src, w, n)) {
    const __m128i pairs = _mm_setr_epi8(0, 3, 1, 4, 2, 5, -1, -1, 8, 11, 9, 12, 10, 13, -1, -1);
    // Two pixels a step: a and b side by side in each register, the upper source rows in one and
    // the lower in the other, so each instruction does the work of two.
    const __m128i rgbrgb = _mm_setr_epi8(0, 1, 2, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i half = _mm_set1_epi32(2048);
    int i = 0;
    for (; i + 1 < n; i += 2, out += 6) {
      const int ax = w.X, ay = w.Y, bx = w.X + w.DX, by = w.Y + w.DY;
      w.X += 2 * w.DX, w.Y += 2 * w.DY;
      const uint8_t* a = src.data + size_t(ay >> 16) * step + size_t(ax >> 16) * 3;
      const uint8_t* b = src.data + size_t(by >> 16) * step + size_t(bx >> 16) * 3;
      const __m128i up = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)),
                                            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
      const __m128i lo = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a + step)),
                                            _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + step)));
      const int fxa = (ax >> 10) & 63, fya = (ay >> 10) & 63, fxb = (bx >> 10) & 63, fyb = (by >> 10) & 63;
      const __m128i wx = _mm_unpacklo_epi64(_mm_set1_epi16(short((fxa << 8) | (64 - fxa))),
                                            _mm_set1_epi16(short((fxb << 8) | (64 - fxb))));
      const __m128i hu = _mm_maddubs_epi16(_mm_shuffle_epi8(up, pairs), wx);
      const __m128i hl = _mm_maddubs_epi16(_mm_shuffle_epi8(lo, pairs), wx);
      const __m128i va = _mm_madd_epi16(_mm_unpacklo_epi16(hu, hl), _mm_set1_epi32((fya << 16) | (64 - fya)));
      const __m128i vb = _mm_madd_epi16(_mm_unpackhi_epi16(hu, hl), _mm_set1_epi32((fyb << 16) | (64 - fyb)));
      const __m128i sa = _mm_srli_epi32(_mm_add_epi32(va, half), 12),
                    sb = _mm_srli_epi32(_mm_add_epi32(vb, half), 12);
      const __m128i px = _mm_shuffle_epi8(_mm_packus_epi16(_mm_packs_epi32(sa, sb), sa), rgbrgb);
      const uint64_t six = uint64_t(_mm_cvtsi128_si64(px));
      std::memcpy(out, &six, 6);
    }
    for (; i < n; ++i, w.X += w.DX, w.Y += w.DY, out += 3) {
      const uint8_t* r0 = src.data + size_t(w.Y >> 16) * step + size_t(w.X >> 16) * 3;
      const __m128i rows = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(r0)),
                                              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(r0 + step)));
      put(out, blend(rows, pairs, (w.X >> 10) & 63, (w.Y >> 10) & 63));
    }
    return;
  }
  const __m128i pairs = _mm_setr_epi8(0, 5, 1, 6, 2, 7, -1, -1, 8, 13, 9, 14, 10, 15, -1, -1);
  for (int i = 0; i < n; ++i, w.X += w.DX, w.Y += w.DY, out += 3) {
    const int32_t x = w.inside ? w.X : std::clamp(w.X, 0, w.xmax),
                  y = w.inside ? w.Y : std::clamp(w.Y, 0, w.ymax);
    const uint8_t* r0 = src.data + size_t(y >> 16) * step + size_t(x >> 16) * 3;
    const uint8_t* r1 = r0 + step;
    uint32_t a0, a1, b0, b1;
    std::memcpy(&a0, r0, 4), std::memcpy(&a1, r0 + 2, 4), std::memcpy(&b0, r1, 4),
        std::memcpy(&b1, r1 + 2, 4);
    put(out,
        blend(_mm_setr_epi32(int(a0), int(a1), int(b0), int(b1)), pairs, (x >> 10) & 63, (y >> 10) & 63));
  }
}

__attribute__((target("ssse3"))) void warp_row_ssse3(const RgbImage& src, float sx, float sy, float dx,
                                                     float dy, int n, uint8_t* out) {
  Walk w = walk(src, sx, sy, dx, dy, n);
  walk_ssse3(src, w, n, out);
}

// Four pixels at (X[k], Y[k]) (16.16) with the SSSE3 arithmetic, two in each 128-bit lane, their
// offsets and weights computed together: twelve RGB bytes in the low 12 bytes of the result. The
// pixels' pairs must allow 8-byte loads (wide_loads).
__attribute__((target("avx2"))) inline __m128i four_pixels(const uint8_t* data, int step, __m128i X,
                                                           __m128i Y) {
  const __m256i pairs = _mm256_setr_epi8(0, 3, 1, 4, 2, 5, -1, -1, 8, 11, 9, 12, 10, 13, -1, -1, 0, 3, 1, 4,
                                         2, 5, -1, -1, 8, 11, 9, 12, 10, 13, -1, -1);
  // Each pixel's 16-bit (64 - fx, fx) pair spread over the four words of its 64-bit half.
  const __m256i spread_x = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 4, 5, 4, 5, 4, 5, 4, 5, 8, 9, 8, 9, 8, 9,
                                            8, 9, 12, 13, 12, 13, 12, 13, 12, 13);
  const __m256i rgbrgb = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 2,
                                          4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i even = _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2),
                odd = _mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3);
  const __m128i six_bits = _mm_set1_epi32(63);
  // Byte offsets (y >> 16) * step + (x >> 16) * 3 of the four pixels.
  const __m128i off = _mm_add_epi32(_mm_mullo_epi32(_mm_srai_epi32(X, 16), _mm_set1_epi32(3)),
                                    _mm_mullo_epi32(_mm_srai_epi32(Y, 16), _mm_set1_epi32(step)));
  const __m128i fx = _mm_and_si128(_mm_srai_epi32(X, 10), six_bits),
                fy = _mm_and_si128(_mm_srai_epi32(Y, 10), six_bits);
  // (fx << 8) | (64 - fx) and (fy << 16) | (64 - fy), as in blend().
  const __m128i wx = _mm_add_epi32(_mm_mullo_epi32(fx, _mm_set1_epi32(255)), _mm_set1_epi32(64));
  const __m128i wy = _mm_add_epi32(_mm_mullo_epi32(fy, _mm_set1_epi32(65535)), _mm_set1_epi32(64));
  const uint8_t* p0 = data + _mm_cvtsi128_si32(off);
  const uint8_t* p1 = data + _mm_extract_epi32(off, 1);
  const uint8_t* p2 = data + _mm_extract_epi32(off, 2);
  const uint8_t* p3 = data + _mm_extract_epi32(off, 3);
  auto q = [](const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); };
  const __m256i up = _mm256_set_m128i(_mm_unpacklo_epi64(q(p2), q(p3)), _mm_unpacklo_epi64(q(p0), q(p1)));
  const __m256i lo = _mm256_set_m128i(_mm_unpacklo_epi64(q(p2 + step), q(p3 + step)),
                                      _mm_unpacklo_epi64(q(p0 + step), q(p1 + step)));
  const __m256i wx4 = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(wx), spread_x);
  const __m256i hu = _mm256_maddubs_epi16(_mm256_shuffle_epi8(up, pairs), wx4);
  const __m256i hl = _mm256_maddubs_epi16(_mm256_shuffle_epi8(lo, pairs), wx4);
  const __m256i wy8 = _mm256_castsi128_si256(wy);
  // Pixels 0 and 2 (the lanes' lower halves), then 1 and 3.
  const __m256i va = _mm256_madd_epi16(_mm256_unpacklo_epi16(hu, hl), _mm256_permutevar8x32_epi32(wy8, even));
  const __m256i vb = _mm256_madd_epi16(_mm256_unpackhi_epi16(hu, hl), _mm256_permutevar8x32_epi32(wy8, odd));
  const __m256i half = _mm256_set1_epi32(2048);
  const __m256i sa = _mm256_srli_epi32(_mm256_add_epi32(va, half), 12),
                sb = _mm256_srli_epi32(_mm256_add_epi32(vb, half), 12);
  const __m256i px = _mm256_shuffle_epi8(_mm256_packus_epi16(_mm256_packs_epi32(sa, sb), sa), rgbrgb);
  // Six bytes per lane (pixels 0 1, then 2 3) -> twelve.
  return _mm_or_si128(_mm256_castsi256_si128(px), _mm_slli_si128(_mm256_extracti128_si256(px, 1), 6));
}

// Rows that need clamps or narrow loads go to the SSSE3 walk; the rest four pixels a step, the
// last n % 4 in one more step whose spare lanes repeat the row's last pixel (inside the image)
// and are not stored.
__attribute__((target("avx2"))) void warp_row_avx2(const RgbImage& src, float sx, float sy, float dx,
                                                   float dy, int n, uint8_t* out) {
  const Walk w = walk(src, sx, sy, dx, dy, n);
  if (!wide_loads(src, w, n)) {
    Walk v = w;
    return walk_ssse3(src, v, n, out);
  }
  const int step = int(src.step);
  const __m128i lane = _mm_setr_epi32(0, 1, 2, 3);
  const __m128i X0 = _mm_set1_epi32(w.X), Y0 = _mm_set1_epi32(w.Y), DX = _mm_set1_epi32(w.DX),
                DY = _mm_set1_epi32(w.DY);
  __m128i X = _mm_add_epi32(X0, _mm_mullo_epi32(lane, DX)), Y = _mm_add_epi32(Y0, _mm_mullo_epi32(lane, DY));
  const __m128i DX4 = _mm_slli_epi32(DX, 2), DY4 = _mm_slli_epi32(DY, 2);
  int i = 0;
  for (; i + 3 < n; i += 4, out += 12, X = _mm_add_epi32(X, DX4), Y = _mm_add_epi32(Y, DY4)) {
    const __m128i rgb12 = four_pixels(src.data, step, X, Y);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), rgb12);
    const uint32_t last4 = uint32_t(_mm_extract_epi32(rgb12, 2));
    std::memcpy(out + 8, &last4, 4);
  }
  if (i < n) {
    // Pixel i + min(k, n - 1 - i) in lane k: the same positions as the walk for the real ones.
    const __m128i k = _mm_min_epi32(lane, _mm_set1_epi32(n - 1 - i));
    const __m128i at = _mm_add_epi32(_mm_set1_epi32(i), k);
    alignas(16) uint8_t rgb[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(rgb),
                    four_pixels(src.data, step, _mm_add_epi32(X0, _mm_mullo_epi32(at, DX)),
                                _mm_add_epi32(Y0, _mm_mullo_epi32(at, DY))));
    // One to three pixels, each a fixed-size copy: a copy of variable length was a call into
    // libc's memcpy for most rows (a row is 21 pixels on average).
    std::memcpy(out, rgb, 3);
    if (n - i > 1) std::memcpy(out + 3, rgb + 3, 3);
    if (n - i > 2) std::memcpy(out + 6, rgb + 6, 3);
  }
}

bool cpu_has_ssse3() {
  static const bool has = __builtin_cpu_supports("ssse3");
  return has;
}

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

}  // namespace

void warp_row_portable(const RgbImage& src, float sx, float sy, float dx, float dy, int n, uint8_t* out) {
  Walk w = walk(src, sx, sy, dx, dy, n);
  for (int i = 0; i < n; ++i, w.X += w.DX, w.Y += w.DY, out += 3) {
    const int32_t x = w.inside ? w.X : std::clamp(w.X, 0, w.xmax),
                  y = w.inside ? w.Y : std::clamp(w.Y, 0, w.ymax);
    const int fx = (x >> 10) & 63, fy = (y >> 10) & 63;
    const uint8_t* r0 = src.data + size_t(y >> 16) * src.step + size_t(x >> 16) * 3;
    const uint8_t* r1 = r0 + src.step;
    out[0] = lerp2(r0, r1, fx, fy), out[1] = lerp2(r0 + 1, r1 + 1, fx, fy),
    out[2] = lerp2(r0 + 2, r1 + 2, fx, fy);
  }
}

bool warp_path_available(WarpPath path) {
  switch (path) {
    case WarpPath::kPortable:
      return true;
#if IMAGO_WARP_ROW_X86
    case WarpPath::kSsse3:
      return cpu_has_ssse3();
    case WarpPath::kAvx2:
      return cpu_has_avx2();
#endif
    default:
      return false;
  }
}

WarpPath warp_path() {
  return warp_path_available(WarpPath::kAvx2)    ? WarpPath::kAvx2
         : warp_path_available(WarpPath::kSsse3) ? WarpPath::kSsse3
                                                 : WarpPath::kPortable;
}

void warp_row_on(WarpPath path, const RgbImage& src, float sx, float sy, float dx, float dy, int n,
                 uint8_t* out) {
#if IMAGO_WARP_ROW_X86
  if (path == WarpPath::kAvx2 && cpu_has_avx2()) return warp_row_avx2(src, sx, sy, dx, dy, n, out);
  if (path == WarpPath::kSsse3 && cpu_has_ssse3()) return warp_row_ssse3(src, sx, sy, dx, dy, n, out);
#endif
  (void)path;
  warp_row_portable(src, sx, sy, dx, dy, n, out);
}

namespace {

// warp_rows with one row sampler, which the loop can inline.
template <class Row>
inline void rows_with(Row&& row, const RgbImage& src, const float a[6], const RowSpan* rows, int n,
                      uint8_t* dst, size_t dst_step) {
  for (int i = 0; i < n; ++i) {
    const auto [y, x0, x1] = rows[i];
    row(src, a[0] * x0 + a[1] * y + a[2], a[3] * x0 + a[4] * y + a[5], a[0], a[3], x1 - x0 + 1,
        dst + size_t(y) * dst_step + size_t(x0) * 3);
  }
}

#if IMAGO_WARP_ROW_X86
__attribute__((target("avx2"))) void rows_avx2(const RgbImage& src, const float a[6], const RowSpan* rows,
                                               int n, uint8_t* dst, size_t dst_step) {
  rows_with(warp_row_avx2, src, a, rows, n, dst, dst_step);
}

__attribute__((target("ssse3"))) void rows_ssse3(const RgbImage& src, const float a[6], const RowSpan* rows,
                                                 int n, uint8_t* dst, size_t dst_step) {
  rows_with(warp_row_ssse3, src, a, rows, n, dst, dst_step);
}
#endif

}  // namespace

void warp_rows(WarpPath path, const RgbImage& src, const float a[6], const RowSpan* rows, int n, uint8_t* dst,
               size_t dst_step) {
#if IMAGO_WARP_ROW_X86
  if (path == WarpPath::kAvx2 && cpu_has_avx2()) return rows_avx2(src, a, rows, n, dst, dst_step);
  if (path == WarpPath::kSsse3 && cpu_has_ssse3()) return rows_ssse3(src, a, rows, n, dst, dst_step);
#endif
  (void)path;
  rows_with(warp_row_portable, src, a, rows, n, dst, dst_step);
}

void warp_row(const RgbImage& src, float sx, float sy, float dx, float dy, int n, uint8_t* out) {
#if IMAGO_WARP_ROW_X86
  if (cpu_has_avx2()) return warp_row_avx2(src, sx, sy, dx, dy, n, out);
  if (cpu_has_ssse3()) return warp_row_ssse3(src, sx, sy, dx, dy, n, out);
#endif
  warp_row_portable(src, sx, sy, dx, dy, n, out);
}

}  // namespace imago::avatar::internal

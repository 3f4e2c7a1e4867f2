#include "speech/dsp.h"

#include <sonic.h>
#include <soxr.h>

extern "C" {
#include <libavutil/mem.h>
#include <libavutil/tx.h>
}

#include <algorithm>
#include <cmath>
#include <numeric>

namespace imago::speech {

Quality quality_for_steps(int steps) {
  Quality q;
  // Up to 7 steps libsonic searches the pitch period on a decimated signal (its default); from 8
  // (the default) it searches at the full rate (about 60% more post-processing time, fewer
  // warbles at large speed changes: on RHVoice's voices the decimated search raised the heard
  // pitch by 7% at speed 2). soxr goes from its quick cubic recipe to 28-bit quality as steps grow.
  q.sonic_high = steps >= 8;
  if (steps <= 3)
    q.soxr_recipe = SOXR_QQ;
  else if (steps <= 5)
    q.soxr_recipe = SOXR_LQ;
  else if (steps <= 7)
    q.soxr_recipe = SOXR_MQ;
  else if (steps <= 11)
    q.soxr_recipe = SOXR_HQ;
  else
    q.soxr_recipe = SOXR_VHQ;
  return q;
}

std::vector<int16_t> time_stretch(const std::vector<int16_t>& in, int rate, double speed, const Quality& q) {
  if (std::abs(speed - 1.0) < 1e-4 || in.empty()) return in;
  sonicStream s = sonicCreateStream(rate, 1);
  sonicSetSpeed(s, static_cast<float>(speed));
  sonicSetQuality(s, q.sonic_high ? 1 : 0);
  std::vector<int16_t> out;
  out.reserve(static_cast<size_t>(in.size() / speed) + 1024);
  std::vector<short> buf(4096);
  auto drain = [&] {
    int n;
    while ((n = sonicReadShortFromStream(s, buf.data(), static_cast<int>(buf.size()))) > 0) {
      out.insert(out.end(), buf.begin(), buf.begin() + n);
    }
  };
  constexpr size_t kChunk = 8192;
  for (size_t off = 0; off < in.size(); off += kChunk) {
    size_t n = std::min(kChunk, in.size() - off);
    sonicWriteShortToStream(s, const_cast<short*>(reinterpret_cast<const short*>(in.data() + off)),
                            static_cast<int>(n));
    drain();
  }
  sonicFlushStream(s);
  drain();
  sonicDestroyStream(s);
  return out;
}

Result<std::vector<int16_t>> resample(const std::vector<int16_t>& in, int in_rate, int out_rate,
                                      const Quality& q) {
  if (in_rate == out_rate || in.empty()) return in;
  size_t out_len = static_cast<size_t>(std::ceil(static_cast<double>(in.size()) * out_rate / in_rate)) + 16;
  std::vector<int16_t> out(out_len);
  size_t done = 0;
  soxr_io_spec_t io = soxr_io_spec(SOXR_INT16_I, SOXR_INT16_I);
  // soxr dithers integer output by default with a seed taken from the clock and an address, so the
  // same text came out different on every run (and a recogniser on the edge heard other words).
  // Synthesis must be repeatable; espeak's output is already smooth enough not to need dither.
  io.flags |= SOXR_NO_DITHER;
  soxr_quality_spec_t qs = soxr_quality_spec(q.soxr_recipe, 0);
  soxr_error_t err = soxr_oneshot(in_rate, out_rate, 1, in.data(), in.size(), nullptr, out.data(), out.size(),
                                  &done, &io, &qs, nullptr);
  if (err) return Status::Internal(std::string("soxr: ") + err);
  out.resize(done);
  return out;
}

namespace {
constexpr int kSilence = 330;  // about -40 dBFS
}

double median_f0(const std::vector<int16_t>& s, int rate) {
  const int frame = rate * 40 / 1000, hop = rate * 10 / 1000;
  const int min_lag = rate / 400, max_lag = rate / 60;
  std::vector<double> f0s;
  std::vector<double> x(frame);
  for (size_t start = 0; start + frame + max_lag < s.size(); start += hop) {
    double energy = 0;
    for (int i = 0; i < frame; ++i) {
      x[i] = s[start + i];
      energy += x[i] * x[i];
    }
    if (std::sqrt(energy / frame) < kSilence * 3) continue;
    // Normalized cross-correlation of the frame with itself shifted by each lag.
    double best = 0;
    int best_lag = 0;
    std::vector<double> r(max_lag + 2, 0);
    for (int lag = min_lag; lag <= max_lag + 1; ++lag) {
      double num = 0, e2 = 0;
      for (int i = 0; i < frame; ++i) {
        double y = s[start + i + lag];
        num += x[i] * y;
        e2 += y * y;
      }
      r[lag] = num / std::sqrt(energy * e2 + 1e-9);
    }
    // First strong peak (avoids octave errors from picking a multiple of the period).
    double global = *std::max_element(r.begin() + min_lag, r.begin() + max_lag + 1);
    for (int lag = min_lag + 1; lag <= max_lag; ++lag) {
      if (r[lag] > 0.85 * global && r[lag] >= r[lag - 1] && r[lag] >= r[lag + 1]) {
        best = r[lag];
        best_lag = lag;
        break;
      }
    }
    if (best < 0.6 || best_lag == 0) continue;  // unvoiced
    // Parabolic interpolation around the peak for sub-sample precision.
    double a = r[best_lag - 1], b = r[best_lag], c = r[best_lag + 1];
    double d = (a - 2 * b + c) != 0 ? 0.5 * (a - c) / (a - 2 * b + c) : 0;
    f0s.push_back(rate / (best_lag + d));
  }
  if (f0s.empty()) return 0;
  std::nth_element(f0s.begin(), f0s.begin() + f0s.size() / 2, f0s.end());
  return f0s[f0s.size() / 2];
}

double spectral_centroid(const std::vector<int16_t>& s, int rate) {
  constexpr int kN = 1024;
  AVTXContext* ctx = nullptr;
  av_tx_fn fn = nullptr;
  float scale = 1.0f;
  if (av_tx_init(&ctx, &fn, AV_TX_FLOAT_RDFT, 0, kN, &scale, 0) < 0) return 0;
  float* in = static_cast<float*>(av_mallocz(sizeof(float) * (kN + 2)));
  AVComplexFloat* out = static_cast<AVComplexFloat*>(av_mallocz(sizeof(AVComplexFloat) * (kN / 2 + 1)));
  double weighted = 0, total = 0;
  for (size_t start = 0; start + kN <= s.size(); start += kN / 2) {
    double e = 0;
    for (int i = 0; i < kN; ++i) e += static_cast<double>(s[start + i]) * s[start + i];
    if (std::sqrt(e / kN) < kSilence) continue;
    for (int i = 0; i < kN; ++i) {
      double w = 0.5 - 0.5 * std::cos(2 * M_PI * i / (kN - 1));
      in[i] = static_cast<float>(s[start + i] * w);
    }
    fn(ctx, out, in, sizeof(float));
    for (int k = 1; k <= kN / 2; ++k) {
      double mag = std::hypot(out[k].re, out[k].im);
      double hz = static_cast<double>(k) * rate / kN;
      weighted += hz * mag;
      total += mag;
    }
  }
  av_free(in);
  av_free(out);
  av_tx_uninit(&ctx);
  return total > 0 ? weighted / total : 0;
}

double active_duration(const std::vector<int16_t>& s, int rate) {
  auto loud = [](int16_t v) { return std::abs(static_cast<int>(v)) > kSilence; };
  auto first = std::find_if(s.begin(), s.end(), loud);
  if (first == s.end()) return 0;
  auto last = std::find_if(s.rbegin(), s.rend(), loud);
  return static_cast<double>(std::distance(first, last.base())) / rate;
}

}  // namespace imago::speech

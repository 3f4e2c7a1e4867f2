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

StreamingStretch::StreamingStretch(int rate, double speed, const Quality& q)
    : rate_(rate), speed_(speed), q_(q) {}

StreamingStretch::~StreamingStretch() {
  if (stream_) sonicDestroyStream(static_cast<sonicStream>(stream_));
}

void StreamingStretch::drain(std::vector<int16_t>& out) {
  short buf[4096];
  int n;
  while ((n = sonicReadShortFromStream(static_cast<sonicStream>(stream_), buf, 4096)) > 0)
    out.insert(out.end(), buf, buf + n);
}

void StreamingStretch::push(const int16_t* in, size_t n, std::vector<int16_t>& out) {
  if (std::abs(speed_ - 1.0) < 1e-4) {
    out.insert(out.end(), in, in + n);
    return;
  }
  if (!stream_) {
    sonicStream s = sonicCreateStream(rate_, 1);
    sonicSetSpeed(s, static_cast<float>(speed_));
    sonicSetQuality(s, q_.sonic_high ? 1 : 0);
    stream_ = s;
  }
  constexpr size_t kChunk = 8192;
  for (size_t off = 0; off < n; off += kChunk) {
    size_t k = std::min(kChunk, n - off);
    sonicWriteShortToStream(static_cast<sonicStream>(stream_), const_cast<short*>(in + off),
                            static_cast<int>(k));
    drain(out);
  }
}

void StreamingStretch::flush(std::vector<int16_t>& out) {
  if (!stream_) return;
  sonicFlushStream(static_cast<sonicStream>(stream_));
  drain(out);
  sonicDestroyStream(static_cast<sonicStream>(stream_));
  stream_ = nullptr;
}

std::vector<int16_t> time_stretch(const std::vector<int16_t>& in, int rate, double speed, const Quality& q) {
  if (std::abs(speed - 1.0) < 1e-4 || in.empty()) return in;
  StreamingStretch s(rate, speed, q);
  std::vector<int16_t> out;
  out.reserve(static_cast<size_t>(in.size() / speed) + 1024);
  s.push(in.data(), in.size(), out);
  s.flush(out);
  return out;
}

StreamingResampler::StreamingResampler(int in_rate, int out_rate, const Quality& q)
    : in_rate_(in_rate), out_rate_(out_rate), q_(q) {}

StreamingResampler::~StreamingResampler() {
  if (soxr_) soxr_delete(static_cast<soxr_t>(soxr_));
}

Status StreamingResampler::open() {
  soxr_io_spec_t io = soxr_io_spec(SOXR_INT16_I, SOXR_INT16_I);
  // soxr dithers integer output by default with a seed taken from the clock and an address, so the
  // same text came out different on every run (and a recogniser on the edge heard other words).
  // Synthesis must be repeatable; espeak's output is already smooth enough not to need dither.
  io.flags |= SOXR_NO_DITHER;
  soxr_quality_spec_t qs = soxr_quality_spec(q_.soxr_recipe, 0);
  soxr_error_t err = nullptr;
  soxr_ = soxr_create(in_rate_, out_rate_, 1, &err, &io, &qs, nullptr);
  if (err || !soxr_) return Status::Internal(std::string("soxr: ") + (err ? err : "create failed"));
  return Status::Ok();
}

Status StreamingResampler::push(const int16_t* in, size_t n, std::vector<int16_t>& out) {
  if (in_rate_ == out_rate_) {
    out.insert(out.end(), in, in + n);
    return Status::Ok();
  }
  if (!soxr_) {
    if (Status st = open(); !st.ok()) return st;
  }
  // Room for everything this input can produce plus what soxr held back; soxr takes the input
  // over as many calls as its output needs.
  const size_t room = static_cast<size_t>(std::ceil(static_cast<double>(n) * out_rate_ / in_rate_)) + 4096;
  while (n > 0) {
    size_t at = out.size(), used = 0, done = 0;
    out.resize(at + room);
    soxr_error_t err = soxr_process(static_cast<soxr_t>(soxr_), in, n, &used, out.data() + at, room, &done);
    out.resize(at + done);
    if (err) return Status::Internal(std::string("soxr: ") + err);
    if (used == 0 && done == 0) break;  // cannot happen with room to spare; never spin
    in += used, n -= used;
  }
  return Status::Ok();
}

Status StreamingResampler::flush(std::vector<int16_t>& out) {
  if (!soxr_) return Status::Ok();
  for (;;) {
    size_t at = out.size(), done = 0;
    out.resize(at + 4096);
    soxr_error_t err =
        soxr_process(static_cast<soxr_t>(soxr_), nullptr, 0, nullptr, out.data() + at, 4096, &done);
    out.resize(at + done);
    if (err) return Status::Internal(std::string("soxr: ") + err);
    if (done == 0) break;
  }
  soxr_delete(static_cast<soxr_t>(soxr_));
  soxr_ = nullptr;
  return Status::Ok();
}

Result<std::vector<int16_t>> resample(const std::vector<int16_t>& in, int in_rate, int out_rate,
                                      const Quality& q) {
  if (in_rate == out_rate || in.empty()) return in;
  StreamingResampler r(in_rate, out_rate, q);
  std::vector<int16_t> out;
  out.reserve(static_cast<size_t>(static_cast<double>(in.size()) * out_rate / in_rate) + 64);
  if (Status st = r.push(in.data(), in.size(), out); !st.ok()) return st;
  if (Status st = r.flush(out); !st.ok()) return st;
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

std::vector<double> frame_loudness_db(const std::vector<int16_t>& s, size_t hop) {
  std::vector<double> db;
  if (hop == 0) return db;
  for (size_t i = 0; i + hop <= s.size(); i += hop) {
    double sum = 0;
    for (size_t j = i; j < i + hop; ++j) sum += static_cast<double>(s[j]) * s[j];
    db.push_back(10 * std::log10(sum / static_cast<double>(hop) + 1));
  }
  return db;
}

}  // namespace imago::speech

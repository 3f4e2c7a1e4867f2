#include "speech/voice_shaping.h"

#include <soxr.h>

#include <algorithm>
#include <cmath>

#include "speech/dsp.h"

namespace imago::speech {

NativeVoice native_voice(const char* name, double f0_hz, bool female, bool engine_pitch) {
  NativeVoice v{name, {}, engine_pitch};
  v.natural.pitch_base_hz = f0_hz;
  v.natural.pitch_range_hz = 0;
  v.natural.formant_scale = female ? 1.15 : 1.0;
  v.natural.rate_wpm = 175;
  v.natural.female = female;
  return v;
}

Shaping shaping_for(const VoiceDefinition& target, const NativeVoice& native) {
  const VoiceDefinition& n = native.natural;
  Shaping s;
  double f0 = std::clamp(target.pitch_base_hz / n.pitch_base_hz, 0.3, 3.0);
  double formant = std::clamp(target.formant_scale / n.formant_scale, 0.7, 1.4);
  if (native.engine_pitch) {
    // The post-processing shift moves F0 with the formants; the engine asks for the rest.
    s.shift = formant;
    s.engine_f0 = f0 / formant;
  } else {
    s.shift = std::clamp(f0, 0.7, 1.4);
  }
  s.engine_rate = std::clamp(static_cast<double>(target.rate_wpm) / n.rate_wpm, 0.3, 3.0);
  s.tilt = std::clamp(target.tone_tilt - n.tone_tilt, -1.5, 1.5);
  return s;
}

StreamingTilt::StreamingTilt(int rate, double tilt)
    : a_(1 - std::exp(-2 * M_PI * 1200.0 / rate)),
      g_low_(std::pow(2.0, -0.8 * tilt)),
      g_high_(std::pow(2.0, 0.8 * tilt)),
      tilt_(tilt) {}

std::vector<int16_t> StreamingTilt::push(const std::vector<int16_t>& in) {
  if (std::abs(tilt_) < 1e-3 || in.empty()) return in;
  if (k_ == 0) {
    // The first piece sets the level: a pass for its energies and peak, from the same filter
    // state as the pass below that writes it.
    double lp = lp_, e_in = 0, e_out = 0, peak = 0;
    for (int16_t s : in) {
      double x = s;
      lp += a_ * (x - lp);
      double y = g_low_ * lp + g_high_ * (x - lp);
      e_in += x * x;
      e_out += y * y;
      peak = std::max(peak, std::abs(y));
    }
    k_ = e_out > 0 ? std::sqrt(e_in / e_out) : 1;
    if (peak * k_ > 32000) k_ *= 32000 / (peak * k_);  // keep the level, never clip
  }
  // The gains and the level in one factor per band; rounding half away from zero as lround
  // does, inline (lround is a library call per sample).
  const double gl = g_low_ * k_, gh = g_high_ * k_;
  std::vector<int16_t> out(in.size());
  double lp = lp_;
  for (size_t i = 0; i < in.size(); ++i) {
    double x = in[i];
    lp += a_ * (x - lp);
    double y = gl * lp + gh * (x - lp);
    y = std::clamp(y, -32768.0, 32767.0);
    out[i] = static_cast<int16_t>(y >= 0 ? y + 0.5 : y - 0.5);
  }
  lp_ = lp;
  return out;
}

std::vector<int16_t> apply_tilt(const std::vector<int16_t>& in, int rate, double tilt) {
  return StreamingTilt(rate, tilt).push(in);
}

namespace {
thread_local FinisherCosts* t_costs = nullptr;

// Adds the CPU time from the last mark to `field` of the open scope's costs (none: nothing).
class StepClock {
 public:
  StepClock() : costs_(t_costs && t_costs->cpu_s ? t_costs : nullptr), t_(costs_ ? costs_->cpu_s() : 0) {}
  void add(double FinisherCosts::*field) {
    if (!costs_) return;
    double now = costs_->cpu_s();
    costs_->*field += now - t_;
    t_ = now;
  }

 private:
  FinisherCosts* costs_;
  double t_;
};

// Post-processing quality of the engine voices: soxr's high quality, libsonic's quick search.
Quality finisher_quality() {
  Quality q;
  q.sonic_high = false;
  q.soxr_recipe = SOXR_HQ;
  return q;
}
int mid_rate(int rate, const Shaping& s) {
  // Resampled to rate/shift and played at rate, every frequency moves by `shift` and the length
  // by 1/shift; the time-stretch (which keeps pitch) restores the length.
  return std::abs(s.shift - 1) < 1e-3 ? rate : static_cast<int>(std::lround(rate / s.shift));
}
double shift_speed(const Shaping& s) {
  return std::abs(s.shift - 1) < 1e-3 ? 1.0 : 1 / s.shift;
}
}  // namespace

VoiceFinisher::VoiceFinisher(int rate, const Shaping& shaping)
    : rate_(rate),
      shaping_(shaping),
      mid_(mid_rate(rate, shaping)),
      resampler_(rate, mid_, finisher_quality()),
      stretch_(rate, shift_speed(shaping), finisher_quality()),
      tilt_(rate, shaping.tilt),
      // Output seconds per engine second: mid_/rate from playing the resampled signal at the
      // engine's rate (1 without a shift), then shift from the time-stretch (about 1).
      carry_(static_cast<double>(mid_) / rate * (1 / shift_speed(shaping))) {}

Audio VoiceFinisher::push(const std::vector<int16_t>& samples, const std::vector<WordTiming>& words,
                          const std::vector<PhonemeTiming>& phonemes, bool last) {
  carry_.add_input(words, phonemes, rate_ ? static_cast<double>(samples.size()) / rate_ : 0);
  StepClock clock;
  if (mid_ == rate_) {
    // No formant shift (every built-in voice): the resampler and the stretch would only copy.
    std::vector<int16_t> tilted = tilt_.push(samples);
    clock.add(&FinisherCosts::tilt_s);
    return carry_.emit(std::move(tilted), rate_, last);
  }
  std::vector<int16_t> mid, stretched;
  Status st = resampler_.push(samples.data(), samples.size(), mid);
  if (st.ok() && last) st = resampler_.flush(mid);
  if (!st.ok()) mid.clear();  // soxr fails only without memory: the piece is silent, not lost in time
  clock.add(&FinisherCosts::resample_s);
  stretch_.push(mid.data(), mid.size(), stretched);
  if (last) stretch_.flush(stretched);
  clock.add(&FinisherCosts::stretch_s);
  std::vector<int16_t> tilted = tilt_.push(stretched);
  clock.add(&FinisherCosts::tilt_s);
  return carry_.emit(std::move(tilted), rate_, last);
}

FinisherCostScope::FinisherCostScope(FinisherCosts* costs) : prev_(t_costs) {
  t_costs = costs;
}
FinisherCostScope::~FinisherCostScope() {
  t_costs = prev_;
}

Audio finish_voice(const std::vector<int16_t>& samples, int rate, const Shaping& shaping,
                   std::vector<WordTiming> words, std::vector<PhonemeTiming> phonemes) {
  return VoiceFinisher(rate, shaping).push(samples, words, phonemes, true);
}

}  // namespace imago::speech

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

std::vector<int16_t> apply_tilt(const std::vector<int16_t>& in, int rate, double tilt) {
  if (std::abs(tilt) < 1e-3 || in.empty()) return in;
  // One-pole low-pass with its corner near 1.2 kHz; high = input - low.
  const double a = 1 - std::exp(-2 * M_PI * 1200.0 / rate);
  const double g_low = std::pow(2.0, -0.8 * tilt), g_high = std::pow(2.0, 0.8 * tilt);
  std::vector<double> y(in.size());
  double lp = 0, e_in = 0, e_out = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    double x = in[i];
    lp += a * (x - lp);
    y[i] = g_low * lp + g_high * (x - lp);
    e_in += x * x;
    e_out += y[i] * y[i];
  }
  double k = e_out > 0 ? std::sqrt(e_in / e_out) : 1;
  double peak = 0;
  for (double v : y) peak = std::max(peak, std::abs(v) * k);
  if (peak > 32000) k *= 32000 / peak;  // keep the level, never clip
  std::vector<int16_t> out(in.size());
  for (size_t i = 0; i < y.size(); ++i) out[i] = static_cast<int16_t>(std::lround(y[i] * k));
  return out;
}

Audio finish_voice(const std::vector<int16_t>& samples, int rate, const Shaping& shaping,
                   std::vector<WordTiming> words, std::vector<PhonemeTiming> phonemes) {
  Audio a;
  a.sample_rate = kEngineSampleRate;
  Quality q;
  q.sonic_high = false;
  q.soxr_recipe = SOXR_HQ;
  double in_s = rate ? static_cast<double>(samples.size()) / rate : 0;
  if (std::abs(shaping.shift - 1) < 1e-3) {
    auto r = resample(samples, rate, kEngineSampleRate, q);
    a.samples = r.ok() ? std::move(*r) : std::vector<int16_t>();
  } else {
    // Resampled to 22050/shift and played at 22050, every frequency moves by `shift` and the
    // length by 1/shift; the time-stretch (which keeps pitch) restores the length.
    int mid = static_cast<int>(std::lround(kEngineSampleRate / shaping.shift));
    auto r = resample(samples, rate, mid, q);
    a.samples = r.ok() ? time_stretch(*r, kEngineSampleRate, 1 / shaping.shift, q) : std::vector<int16_t>();
  }
  a.samples = apply_tilt(a.samples, kEngineSampleRate, shaping.tilt);
  double k = in_s > 0 ? a.duration_s() / in_s : 1;
  double total = a.duration_s();
  for (auto& w : words) w.start_s = std::min(total, w.start_s * k), w.end_s = std::min(total, w.end_s * k);
  for (auto& p : phonemes) p.start_s = std::min(total, p.start_s * k), p.end_s = std::min(total, p.end_s * k);
  a.words = std::move(words);
  a.phonemes = std::move(phonemes);
  return a;
}

}  // namespace imago::speech

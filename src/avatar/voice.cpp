// Voice matching (docs/avatar.md): measure a sample's median F0, spectral centroid and speaking
// rate, then pick the nearest built-in voice and the axes that move it toward the sample. This
// is matching against ten designed voices, not neural voice cloning.
#include <cmath>

#include "avatar/internal.h"
#include "avatar/voice_table.h"
#include "speech/dsp.h"

namespace imago::avatar::internal {
namespace {

// Syllable nuclei per second: peaks of the smoothed 10 ms energy envelope that stand out from
// the valleys around them, counted over the active (non-silent) duration.
double speaking_rate(const std::vector<int16_t>& s, int rate, double active_s) {
  int hop = rate / 100;
  if (hop <= 0 || s.size() < static_cast<size_t>(hop) * 10 || active_s <= 0.3) return 0;
  std::vector<double> env;
  for (size_t i = 0; i + hop <= s.size(); i += hop) {
    double e = 0;
    for (int k = 0; k < hop; ++k) e += static_cast<double>(s[i + k]) * s[i + k];
    env.push_back(std::sqrt(e / hop));
  }
  // 50 ms moving average.
  std::vector<double> sm(env.size());
  for (size_t i = 0; i < env.size(); ++i) {
    double acc = 0;
    int n = 0;
    for (int k = -2; k <= 2; ++k) {
      long j = static_cast<long>(i) + k;
      if (j >= 0 && j < static_cast<long>(env.size())) acc += env[j], ++n;
    }
    sm[i] = acc / n;
  }
  double peak = *std::max_element(sm.begin(), sm.end());
  if (peak <= 0) return 0;
  double floor = peak * 0.06;  // about -24 dB below the loudest syllable
  int count = 0;
  long last = -100;
  for (size_t i = 1; i + 1 < sm.size(); ++i) {
    if (sm[i] < floor || sm[i] < sm[i - 1] || sm[i] < sm[i + 1]) continue;
    // Prominence: the envelope must dip to 75% of the peak within 150 ms on both sides.
    auto dips = [&](int dir) {
      for (int k = 1; k <= 15; ++k) {
        long j = static_cast<long>(i) + dir * k;
        if (j < 0 || j >= static_cast<long>(sm.size())) return true;
        if (sm[j] > sm[i]) return false;
        if (sm[j] < 0.75 * sm[i]) return true;
      }
      return false;
    };
    if (static_cast<long>(i) - last >= 10 && dips(-1) && dips(1)) {
      ++count;
      last = static_cast<long>(i);
    }
  }
  return count / active_s;
}

}  // namespace

Result<VoiceChoice> match_voice(const Pcm& pcm) {
  if (pcm.sample_rate <= 0 || pcm.samples.size() < static_cast<size_t>(pcm.sample_rate))
    return Status::Invalid("The voice sample is shorter than one second");
  double f0 = speech::median_f0(pcm.samples, pcm.sample_rate);
  if (f0 <= 0) return Status::Invalid("No voiced speech found in the voice sample");
  double centroid = speech::spectral_centroid(pcm.samples, pcm.sample_rate);
  double active = speech::active_duration(pcm.samples, pcm.sample_rate);
  double syl = speaking_rate(pcm.samples, pcm.sample_rate, active);
  VoiceChoice best;
  double best_d = 1e18;
  for (const auto& v : voice_reference_table()) {
    double d = voice_distance(v, f0, centroid, syl);
    if (d < best_d) best_d = d, best.voice = v.id;
  }
  const VoiceReference& ref = *find_voice_reference(best.voice);
  // Axes toward the sample, inverting the speech engine's documented axis laws
  // (pitch: F0 x 2^p; rate: wpm x 2^(1.5 r)); brightness follows the centroid ratio.
  auto clamp3 = [](double v) { return std::clamp(v, -0.3, 0.3); };
  best.axes.pitch = clamp3(std::log2(f0 / ref.median_f0_hz));
  best.axes.brightness = centroid > 0 ? clamp3(std::log2(centroid / ref.centroid_hz) * 1.5) : 0;
  best.axes.rate = syl > 0 ? clamp3(std::log2(syl / ref.syllables_per_s) / 1.5) : 0;
  best.axes.gender = 0;  // the choice of an M or F voice already carries gender
  best.match = VoiceMatch{f0, centroid, syl, active, best_d};
  return best;
}

}  // namespace imago::avatar::internal

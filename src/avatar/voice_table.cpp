#include "avatar/voice_table.h"

#include <cmath>

namespace imago::avatar {

const std::vector<VoiceReference>& voice_reference_table() {
  // Measured by lipsync_test.cpp (VoiceMatch.ReferenceTableMatchesTheSpeechEngine), English on
  // the RHVoice and flite voices.
  static const std::vector<VoiceReference> table = {
      {"M1", 125, 2431, 3.91}, {"M2", 101, 1666, 4.32}, {"M3", 137, 1598, 4.59}, {"M4", 118, 1196, 4.09},
      {"M5", 151, 2704, 4.24}, {"F1", 173, 2095, 3.52}, {"F2", 164, 1350, 2.91}, {"F3", 220, 1540, 3.81},
      {"F4", 199, 1632, 4.05}, {"F5", 185, 1516, 3.15},
  };
  return table;
}

const VoiceReference* find_voice_reference(const std::string& id) {
  for (const auto& v : voice_reference_table())
    if (id == v.id) return &v;
  return nullptr;
}

double voice_distance(const VoiceReference& v, double f0, double centroid, double syl) {
  // One "unit" is a quarter octave of F0, half an octave of centroid, half an octave of rate;
  // F0 dominates because it is the most reliable measure on short, noisy samples.
  double d_f0 = std::log2(f0 / v.median_f0_hz) / 0.25;
  double d_c = centroid > 0 ? std::log2(centroid / v.centroid_hz) / 0.5 : 0;
  double d_r = syl > 0 ? std::log2(syl / v.syllables_per_s) / 0.5 : 0;
  return std::sqrt(d_f0 * d_f0 + d_c * d_c + 0.25 * d_r * d_r);
}

}  // namespace imago::avatar

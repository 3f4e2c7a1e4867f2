#include "avatar/voice_table.h"

#include <cmath>

namespace imago::avatar {

const std::vector<VoiceReference>& voice_reference_table() {
  // Measured by lipsync_test.cpp (VoiceMatch.ReferenceTableMatchesTheSpeechEngine).
  static const std::vector<VoiceReference> table = {
      {"M1", 130, 2795, 5.15}, {"M2", 99, 1825, 4.25},  {"M3", 160, 3281, 5.22}, {"M4", 103, 3045, 4.71},
      {"M5", 185, 2541, 4.74}, {"F1", 248, 2958, 4.76}, {"F2", 202, 2107, 4.25}, {"F3", 303, 3461, 5.04},
      {"F4", 233, 3385, 5.12}, {"F5", 225, 2027, 4.29},
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

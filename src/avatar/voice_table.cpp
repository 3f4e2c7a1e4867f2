#include "avatar/voice_table.h"

#include <cmath>

namespace imago::avatar {

const std::vector<VoiceReference>& voice_reference_table() {
  // Measured by voice_table_test.cpp (MeasureBuiltinVoices) on the reference sentence.
  static const std::vector<VoiceReference> table = {
      {"M1", 115, 1900, 4.0}, {"M2", 88, 1600, 3.8}, {"M3", 138, 2300, 4.2}, {"M4", 98, 2000, 3.6},
      {"M5", 162, 1950, 4.3}, {"F1", 222, 2350, 4.0}, {"F2", 184, 2050, 3.9}, {"F3", 272, 2750, 4.2},
      {"F4", 222, 2900, 4.1}, {"F5", 202, 1900, 3.8},
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

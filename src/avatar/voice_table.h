// Reference measurements of the ten built-in voices (median F0, spectral centroid, syllables per
// second on a reference sentence at speed 1.0), measured with speech/dsp.h on the speech engine's
// own output; VoiceMatch.ReferenceTableMatchesTheSpeechEngine re-measures them so the table
// cannot drift from the engine.
#pragma once
#include <string>
#include <vector>

namespace imago::avatar {

// The sentence the table was measured on (voice_table_test re-measures it).
inline constexpr const char* kReferenceSentence =
    "Every voice has its own pitch and colour. This one reads a short sentence at its natural pace.";

struct VoiceReference {
  const char* id;
  double median_f0_hz;
  double centroid_hz;
  double syllables_per_s;
};

const std::vector<VoiceReference>& voice_reference_table();
const VoiceReference* find_voice_reference(const std::string& id);
// Distance used for matching: log-ratios scaled by how much each measure varies between voices.
double voice_distance(const VoiceReference& v, double f0, double centroid, double syllables_per_s);

}  // namespace imago::avatar

// The ten built-in voices and the tuning axes (docs/speech.md): each voice is a recorded engine
// voice (RHVoice or flite) for English, moved to a definition (pitch, formant scaling, spectral
// tone, rate), plus an espeak-ng definition for the other languages; each axis is a documented
// change of a definition, so an axis does exactly what its name says on every engine and a
// voice's position on an axis can be computed from its definition.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "speech/speech_engine.h"
#include "speech/speech_service.h"
#include "speech/synthesis.h"

namespace imago::speech {

// One engine voice moved to a definition.
struct EngineVoice {
  const char* engine;  // "rhvoice" or "flite"
  const char* voice;   // the engine's own voice name, e.g. "bdl"
  VoiceDefinition definition;
};

struct BuiltinVoice {
  const char* id;
  const char* description;
  EngineVoice english;     // how it speaks English
  EngineVoice fallback;    // English when RHVoice is not available: always a flite voice
  VoiceDefinition espeak;  // every other language, on espeak-ng
};

const std::vector<BuiltinVoice>& builtin_voice_table();
const BuiltinVoice* find_builtin_voice(const std::string& id);

// Definition of `voice` tuned by `axes` (axes are offsets, 0 neutral):
//   gender:     F0 x 2^(1.2 g) and formants x e^(0.47 g) together (+ is more feminine)
//   pitch:      F0 base and range x 2^(1.0 p)
//   rate:       words per minute x 2^(1.5 r)
//   brightness: spectral tilt + 2.0 b (espeak "tone" curve; + is brighter)
VoiceDefinition apply_axes(const VoiceDefinition& voice, const Axes& axes);

// The axes offsets that would turn the neutral reference voice into `voice` (the inverse of
// apply_axes, gender and pitch separated by least squares): the anchor projections of
// GET /v1/studio/axes.
Axes project_onto_axes(const VoiceDefinition& voice);

std::vector<AxisInfo> axis_table();
// Validates names and ranges of axes given as (name, value) pairs; fills `out`.
Status parse_axes(const std::vector<std::pair<std::string, double>>& items, Axes* out);
Status validate_axes(const Axes& a);

}  // namespace imago::speech

// The ten built-in voices and the tuning axes (SPEC 2.3, 2.5): each voice is a definition (pitch
// base and range, formant scaling, spectral tone, rate), and each axis is a documented change of
// that definition, so an axis does exactly what its name says and a voice's position on an axis
// can be computed from its definition.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "speech/engine.h"
#include "speech/speech_service.h"
#include "speech/synthesis.h"

namespace imago::speech {

struct BuiltinVoice {
  const char* id;
  const char* description;
  VoiceDefinition definition;
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

// The voice an agent speaks with, as kept with the agent (AgentRecord::voice) and shown by
// GET /v1/agent/{code} (docs/api/agents.md): one struct, its one parse and its one JSON form.
// generate records what was asked for; the generation replaces it with what the built model
// speaks with. The model file keeps its own copy (the .imx manifest's `voice`, avatar/imx.cpp);
// model_voice_settings turns that one into what the synthesizer needs.
#pragma once
#include <boost/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "speech/synthesis.h"
#include "store/voice_store.h"

namespace imago::avatar {
struct Manifest;
}

namespace imago::agents {

// Who chose the voice; stored by name ("requested", "voice_code", "matched", "face", "default").
enum class VoiceSource {
  kUnknown,    // absent, or a name this code does not know: not written back
  kRequested,  // a built-in voice given at generate
  kVoiceCode,  // a designed voice given at generate: its base voice and axes
  kMatched,    // the built-in voice nearest to the audio/video sample
  kFace,       // chosen to fit the face's estimated gender
  kDefault,    // chosen from the agent code
};

struct AgentVoice {
  std::string id;                    // built-in voice (M1..M5, F1..F5); empty: not decided yet
  std::optional<speech::Axes> axes;  // absent: none recorded (a built-in voice asked for)
  VoiceSource source = VoiceSource::kUnknown;
  std::optional<std::string> voice_code;  // the designed voice it comes from
};

// Reads every shape ever stored: "{}", an id alone, with or without axes and source. Text that is
// not an object with a string id is an undecided voice (empty id); a missing or non-numeric axis
// reads as 0; an unknown source as kUnknown.
AgentVoice parse_agent_voice(std::string_view json);
// {"id", "axes"?, "source"?, "voice_code"?} in that order; {} for an undecided voice.
boost::json::object agent_voice_json(const AgentVoice& v);
// agent_voice_json as text: what AgentRecord::voice holds.
std::string serialize_agent_voice(const AgentVoice& v);

// {"gender", "pitch", "rate", "brightness"}: the axes wherever the API and the agent record show them.
boost::json::object axes_json(const speech::Axes& a);
speech::Axes axes_of(const DesignedVoice& v);

// What generate records: a built-in voice, or a designed voice (which wins; its base voice and axes).
AgentVoice requested_voice(const std::string& builtin_id, const DesignedVoice* designed);
// What the generation records: the voice and axes of the built model, and who chose them. A voice
// asked for at generate keeps its source and code; otherwise the model's manifest says whether a
// sample matched it or the face chose it.
AgentVoice built_voice(const AgentVoice& requested, const avatar::Manifest& model);

// The settings a model speaks with: its voice, axes and language. With `voice` the caller's
// built-in voice replaces the model's, untuned (the model's axes belong to its own voice). An
// empty voice or language in the manifest leaves the synthesizer's default.
speech::VoiceSettings model_voice_settings(const avatar::Manifest& model,
                                           const std::optional<std::string>& voice = std::nullopt);

}  // namespace imago::agents

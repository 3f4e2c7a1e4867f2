#include "agents/agent_voice.h"

#include "avatar/imx.h"

namespace imago::agents {

namespace json = boost::json;

namespace {

constexpr std::pair<VoiceSource, std::string_view> kSourceNames[] = {
    {VoiceSource::kRequested, "requested"}, {VoiceSource::kVoiceCode, "voice_code"},
    {VoiceSource::kMatched, "matched"},     {VoiceSource::kFace, "face"},
    {VoiceSource::kDefault, "default"},
};

VoiceSource source_named(std::string_view name) {
  for (const auto& [s, n] : kSourceNames)
    if (n == name) return s;
  return VoiceSource::kUnknown;
}

std::string_view source_name(VoiceSource source) {
  for (const auto& [s, n] : kSourceNames)
    if (s == source) return n;
  return {};
}

}  // namespace

AgentVoice parse_agent_voice(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return {};
  const json::object& o = v.as_object();
  const auto* id = o.if_contains("id");
  if (!id || !id->is_string() || id->as_string().empty()) return {};
  AgentVoice out;
  out.id = std::string(id->as_string());
  if (const auto* ax = o.if_contains("axes"); ax && ax->is_object()) {
    auto num = [&](const char* key) {
      const auto* x = ax->as_object().if_contains(key);
      return x && x->is_number() ? x->to_number<double>() : 0.0;
    };
    out.axes = speech::Axes{num("gender"), num("pitch"), num("rate"), num("brightness")};
  }
  if (const auto* s = o.if_contains("source"); s && s->is_string()) out.source = source_named(s->as_string());
  if (const auto* c = o.if_contains("voice_code"); c && c->is_string())
    out.voice_code = std::string(c->as_string());
  return out;
}

json::object agent_voice_json(const AgentVoice& v) {
  json::object o;
  if (v.id.empty()) return o;
  o["id"] = v.id;
  if (v.axes) o["axes"] = axes_json(*v.axes);
  if (v.source != VoiceSource::kUnknown) o["source"] = source_name(v.source);
  if (v.voice_code) o["voice_code"] = *v.voice_code;
  return o;
}

std::string serialize_agent_voice(const AgentVoice& v) {
  return json::serialize(agent_voice_json(v));
}

json::object axes_json(const speech::Axes& a) {
  return {{"gender", a.gender}, {"pitch", a.pitch}, {"rate", a.rate}, {"brightness", a.brightness}};
}

speech::Axes axes_of(const DesignedVoice& v) {
  return {v.gender, v.pitch, v.rate, v.brightness};
}

AgentVoice requested_voice(const std::string& builtin_id, const DesignedVoice* designed) {
  if (designed) return {designed->base_voice, axes_of(*designed), VoiceSource::kVoiceCode, designed->code};
  return {builtin_id, std::nullopt, VoiceSource::kRequested, std::nullopt};
}

AgentVoice built_voice(const AgentVoice& requested, const avatar::Manifest& model) {
  AgentVoice v{model.voice, model.axes, VoiceSource::kDefault, std::nullopt};
  if (!requested.id.empty()) {
    v.source = requested.voice_code ? VoiceSource::kVoiceCode : VoiceSource::kRequested;
    v.voice_code = requested.voice_code;
  } else if (model.voice_match) {
    v.source = VoiceSource::kMatched;
  } else if (model.face_estimate) {
    v.source = VoiceSource::kFace;
  }
  return v;
}

speech::VoiceSettings model_voice_settings(const avatar::Manifest& model,
                                           const std::optional<std::string>& voice) {
  speech::VoiceSettings s;
  if (voice) {
    s.voice = *voice;
  } else {
    if (!model.voice.empty()) s.voice = model.voice;
    s.axes = model.axes;
  }
  if (!model.language.empty()) s.language = model.language;
  return s;
}

}  // namespace imago::agents

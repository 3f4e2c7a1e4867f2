#include "api/tts_common.h"

#include "agents/agent_voice.h"
#include "speech/voices.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::api {

Result<speech::Axes> parse_axes_object(const json::object& o) {
  std::vector<std::pair<std::string, double>> items;
  for (const auto& kv : o) {
    std::string name(kv.key());
    const auto& v = kv.value();
    double d;
    if (v.is_double())
      d = v.as_double();
    else if (v.is_int64())
      d = static_cast<double>(v.as_int64());
    else if (v.is_uint64())
      d = static_cast<double>(v.as_uint64());
    else
      return Status::Invalid("axes." + name + " must be a number");
    items.emplace_back(name, d);
  }
  speech::Axes a;
  Status st = speech::parse_axes(items, &a);
  if (!st.ok()) return st;
  return a;
}

Result<speech::Axes> parse_axes_field(const json::object& body, std::string_view field) {
  auto o = get_object(body, field);
  if (!o.ok()) return o.status();
  if (!*o) return speech::Axes{};
  return parse_axes_object(**o);
}

Result<DesignedVoice> find_voice_code(Services& s, const std::string& account_id, const std::string& code) {
  if (!is_uuid(to_lower(code))) return Status::NotFound("Voice not found for code: " + code);
  if (!s.voices) return Status::NotFound("Voice not found for code: " + code);
  return s.voices->get(account_id, to_lower(code));
}

speech::VoiceSettings settings_for(const DesignedVoice& v) {
  speech::VoiceSettings st;
  st.voice = v.base_voice;
  st.axes = agents::axes_of(v);
  return st;
}

http::Response voice_not_found(const std::string& code) {
  return http::Response::error(404, "VOICE_NOT_FOUND", "Voice not found for code: " + code);
}

http::Response speech_error(const Status& st) {
  if (st.code() == Code::kUnavailable) {
    auto r = http::Response::error(503, speech::kBusyErrorCode, st.message());
    r.headers.set("Retry-After", std::to_string(speech::kBusyRetryAfterS));
    return r;
  }
  if (st.code() == Code::kRateLimited) {  // the account holds its share of the synthesizer
    auto r = http::Response::from_status(st);
    r.headers.set("Retry-After", std::to_string(speech::kBusyRetryAfterS));
    return r;
  }
  return http::Response::from_status(st);
}

speech::SynthesisRequester interactive_requester(const http::Request& req) {
  return {req.principal ? req.principal->account_id : std::string(), speech::SynthesisPriority::kInteractive};
}

std::string error_envelope_json(const http::Response& r) {
  return r.body;
}

json::object designed_voice_json(const DesignedVoice& v) {
  return {{"voice_code", v.code},
          {"name", v.name},
          {"base_voice", v.base_voice},
          {"description", v.description},
          {"axes", agents::axes_json(agents::axes_of(v))},
          {"created_at", format_rfc3339(v.created_at)},
          {"updated_at", format_rfc3339(v.updated_at)}};
}

}  // namespace imago::api

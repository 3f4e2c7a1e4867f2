// The voice designer (SPEC 2.4, 2.5, 4.15): tuning axes, designed voices (voice codes) and
// previews of unsaved settings.
#include "agents/agent_voice.h"
#include "api/routes.h"
#include "api/tts_common.h"
#include "speech/encoders.h"
#include "speech/text.h"
#include "speech/voices.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::api {

namespace {

constexpr size_t kMaxName = 100;
constexpr size_t kMaxDescription = 1000;
constexpr size_t kMaxPreviewChars = 300;
const char* kPreviewText = "Hello! This is how my voice sounds. Do you like it?";

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Status check_text_field(const std::string& field, const std::string& v, size_t max, bool required) {
  if (required && v.empty()) return Status::Invalid("Field '" + field + "' must not be empty");
  if (v.size() > max)
    return Status::Invalid("Field '" + field + "' must be at most " + std::to_string(max) + " bytes");
  if (!is_valid_utf8(v)) return Status::Invalid("Field '" + field + "' must be valid UTF-8");
  for (unsigned char c : v) {
    if (c < 0x20 && c != '\n' && c != '\t')
      return Status::Invalid("Field '" + field + "' has control characters");
  }
  return Status::Ok();
}

// Applies the fields present in `body` to `v`; with `create` the name and base voice are required.
Status apply_voice_fields(Services& s, const json::object& body, DesignedVoice& v, bool create) {
  auto name = get_string(body, "name");
  auto base = get_string(body, "base_voice");
  auto desc = get_string(body, "description");
  for (const Status& st : {name.status(), base.status(), desc.status()}) {
    if (!st.ok()) return st;
  }
  if (create && !name->has_value()) return Status::Invalid("Field 'name' is required");
  if (create && !base->has_value()) return Status::Invalid("Field 'base_voice' is required");
  if (name->has_value()) {
    Status st = check_text_field("name", **name, kMaxName, true);
    if (!st.ok()) return st;
    v.name = **name;
  }
  if (base->has_value()) {
    std::string b = upper(**base);
    if (!s.speech->is_builtin_voice(b)) {
      return Status::Invalid("Field 'base_voice' must be one of M1-M5, F1-F5 (got '" + **base + "')");
    }
    v.base_voice = b;
  }
  if (desc->has_value()) {
    Status st = check_text_field("description", **desc, kMaxDescription, false);
    if (!st.ok()) return st;
    v.description = **desc;
  }
  auto axes_obj = get_object(body, "axes");
  if (!axes_obj.ok()) return axes_obj.status();
  if (*axes_obj) {
    // On PUT, axes not named keep their value: re-tuning one axis leaves the others alone.
    speech::Axes current = agents::axes_of(v);
    auto parsed = parse_axes_object(**axes_obj);
    if (!parsed.ok()) return parsed.status();
    const auto& o = **axes_obj;
    if (o.contains("gender")) current.gender = parsed->gender;
    if (o.contains("pitch")) current.pitch = parsed->pitch;
    if (o.contains("rate")) current.rate = parsed->rate;
    if (o.contains("brightness")) current.brightness = parsed->brightness;
    v.gender = current.gender;
    v.pitch = current.pitch;
    v.rate = current.rate;
    v.brightness = current.brightness;
  }
  return Status::Ok();
}

http::Response voice_result(int status, const Result<DesignedVoice>& v, const std::string& code) {
  if (!v.ok()) {
    if (v.status().code() == Code::kNotFound) return voice_not_found(code);
    return http::Response::from_status(v.status());
  }
  json::object o = designed_voice_json(*v);
  o["success"] = true;
  return http::Response::json(status, o);
}

}  // namespace

void register_studio_routes(http::Router& router, Services& s) {
  router.add("GET", "/v1/studio/axes", [&s](http::Request&) {
    json::array axes;
    for (const auto& a : s.speech->axes()) {
      json::object anchors;
      for (const auto& [id, x] : a.anchor_projections) anchors[id] = x;
      axes.push_back({{"name", a.name},
                      {"description", a.description},
                      {"suggested_min", a.suggested_min},
                      {"suggested_max", a.suggested_max},
                      {"min", speech::kAxisMin},
                      {"max", speech::kAxisMax},
                      {"anchor_projections", std::move(anchors)}});
    }
    return http::Response::json(200, {{"axes", std::move(axes)}});
  });

  router.add("POST", "/v1/studio/voices", [&s](http::Request& req) {
    auto body = parse_json_object_with(req.body, {"name", "base_voice", "description", "axes"});
    if (!body.ok()) return http::Response::from_status(body.status());
    DesignedVoice v;
    v.account_id = req.principal->account_id;
    v.code = random_uuid();
    Status st = apply_voice_fields(s, *body, v, true);
    if (!st.ok()) return http::Response::from_status(st);
    return voice_result(201, s.voices->create(v), v.code);
  });

  router.add("GET", "/v1/studio/voices", [&s](http::Request& req) {
    auto list = s.voices->list(req.principal->account_id);
    if (!list.ok()) return http::Response::from_status(list.status());
    json::array arr;
    for (const auto& v : *list) arr.push_back(designed_voice_json(v));
    return http::Response::json(200, {{"voices", std::move(arr)}});
  });

  router.add("GET", "/v1/studio/voices/{code}", [&s](http::Request& req) {
    const std::string& code = req.param("code");
    return voice_result(200, find_voice_code(s, req.principal->account_id, code), code);
  });

  router.add("PUT", "/v1/studio/voices/{code}", [&s](http::Request& req) {
    const std::string& code = req.param("code");
    auto body = parse_json_object_with(req.body, {"name", "base_voice", "description", "axes"});
    if (!body.ok()) return http::Response::from_status(body.status());
    auto current = find_voice_code(s, req.principal->account_id, code);
    if (!current.ok()) return voice_result(200, current, code);
    DesignedVoice v = *current;
    Status st = apply_voice_fields(s, *body, v, false);
    if (!st.ok()) return http::Response::from_status(st);
    return voice_result(200, s.voices->update(v), code);
  });

  router.add("DELETE", "/v1/studio/voices/{code}", [&s](http::Request& req) {
    const std::string& code = req.param("code");
    auto current = find_voice_code(s, req.principal->account_id, code);
    if (!current.ok()) return voice_result(200, current, code);
    Status st = s.voices->revoke(req.principal->account_id, current->code);
    if (st.code() == Code::kNotFound) return voice_not_found(code);
    if (!st.ok()) return http::Response::from_status(st);
    return http::Response::json(200, {{"success", true}, {"voice_code", current->code}, {"deleted", true}});
  });

  // A short WAV of unsaved settings: {base_voice (or voice), axes, text?, language?, speed?}.
  router.add(
      "POST", "/v1/studio/preview",
      [&s](http::Request& req) {
        auto body =
            parse_json_object_with(req.body, {"base_voice", "voice", "axes", "text", "language", "speed"});
        if (!body.ok()) return http::Response::from_status(body.status());
        auto base = get_string(*body, "base_voice");
        auto voice = get_string(*body, "voice");
        auto text = get_string(*body, "text");
        auto language = get_string(*body, "language");
        auto speed = get_number(*body, "speed");
        for (const Status& st :
             {base.status(), voice.status(), text.status(), language.status(), speed.status()}) {
          if (!st.ok()) return http::Response::from_status(st);
        }
        speech::VoiceSettings st;
        std::string b = base->has_value() ? **base : voice->value_or("M1");
        st.voice = upper(b);
        if (!s.speech->is_builtin_voice(st.voice)) {
          return http::Response::error(400, "VALIDATION_ERROR",
                                       "Field 'base_voice' must be one of M1-M5, F1-F5");
        }
        auto axes = parse_axes_field(*body, "axes");
        if (!axes.ok()) return http::Response::from_status(axes.status());
        st.axes = *axes;
        st.language = language->has_value() ? to_lower(**language) : "en";
        st.speed = speed->value_or(1.05);
        if (st.speed < 0.7 || st.speed > 2.0) {
          return http::Response::error(400, "VALIDATION_ERROR", "Field 'speed' must be between 0.7 and 2.0");
        }
        std::string t = text->value_or(kPreviewText);
        if (speech::utf8_length(t) > kMaxPreviewChars) {
          return http::Response::error(400, "VALIDATION_ERROR",
                                       "Field 'text' of a preview must be at most " +
                                           std::to_string(kMaxPreviewChars) + " characters");
        }
        auto audio = s.speech->synthesize(t, st, interactive_requester(req));
        if (!audio.ok()) return speech_error(audio.status());
        auto wav = speech::encode_audio(speech::AudioFormat::kWav, audio->sample_rate, audio->samples.data(),
                                        audio->samples.size());
        if (!wav.ok()) return http::Response::from_status(wav.status());
        auto r = http::Response::bytes(200, "audio/wav", std::move(wav.value()));
        r.headers.set("X-Sample-Rate", std::to_string(audio->sample_rate));
        return r;
      },
      {.pool = http::HandlerPool::kCpu});  // waits for synthesis
}

}  // namespace imago::api

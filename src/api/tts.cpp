// POST /v1/tts (SPEC 4.13): WAV by default, raw PCM with format "pcm_s16le", or length-prefixed
// PCM frames sentence by sentence with "stream": true (layout in speech/frames.h).
#include <cmath>

#include "api/routes.h"
#include "api/tts_common.h"
#include "speech/encoders.h"
#include "speech/frames.h"
#include "util/strings.h"

namespace imago::api {

namespace {

struct TtsRequest {
  std::string text;
  speech::VoiceSettings settings;
  bool stream = false;
  bool pcm = false;
};

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Parses and validates; a Status of kNotFound means the voice code did not resolve.
Result<TtsRequest> parse_tts(Services& s, const http::Request& req) {
  auto body = parse_json_object_with(req.body, {"text", "voice", "voice_code", "language", "total_steps",
                                                "speed", "stream", "format", "axes"});
  if (!body.ok()) return body.status();
  TtsRequest t;
  auto text = get_string(*body, "text");
  if (!text.ok()) return text.status();
  if (!text->has_value()) return Status::Invalid("Field 'text' is required");
  t.text = **text;

  auto voice = get_string(*body, "voice");
  auto code = get_string(*body, "voice_code");
  auto language = get_string(*body, "language");
  auto steps = get_integer(*body, "total_steps");
  auto speed = get_number(*body, "speed");
  auto stream = get_bool(*body, "stream");
  auto format = get_string(*body, "format");
  for (const Status& st : {voice.status(), code.status(), language.status(), steps.status(), speed.status(),
                           stream.status(), format.status()}) {
    if (!st.ok()) return st;
  }
  auto axes = parse_axes_field(*body, "axes");
  if (!axes.ok()) return axes.status();

  if (code->has_value()) {
    // voice_code wins over voice, and its own tuning replaces inline axes.
    auto v = find_voice_code(s, req.principal->account_id, **code);
    if (!v.ok()) return v.status();
    t.settings = settings_for(*v);
  } else {
    t.settings.voice = voice->has_value() ? upper(**voice) : "M1";
    if (!s.speech->is_builtin_voice(t.settings.voice)) {
      return Status::Invalid("Field 'voice' must be one of M1-M5, F1-F5 (got '" + **voice + "')");
    }
    t.settings.axes = *axes;
  }
  t.settings.language = language->has_value() ? to_lower(**language) : "en";
  t.settings.total_steps = 8;
  if (steps->has_value()) {
    if (**steps < speech::kStepsMin || **steps > speech::kStepsMax) {
      return Status::Invalid("Field 'total_steps' must be an integer from 1 to 100");
    }
    t.settings.total_steps = static_cast<int>(**steps);
  }
  t.settings.speed = speed->value_or(1.05);
  if (t.settings.speed < 0.7 || t.settings.speed > 2.0) {
    return Status::Invalid("Field 'speed' must be between 0.7 and 2.0");
  }
  t.stream = stream->value_or(false);
  std::string f = format->value_or("wav");
  if (f == "pcm_s16le" || f == "pcm")
    t.pcm = true;
  else if (f != "wav")
    return Status::Invalid("Field 'format' must be 'wav' or 'pcm_s16le'");
  if (t.stream && f == "wav" && format->has_value()) {
    return Status::Invalid("Streaming returns PCM frames; omit 'format' or use 'pcm_s16le'");
  }
  Status v = s.speech->validate(t.text, t.settings);
  if (!v.ok()) return v;
  return t;
}

http::Response tts_error(const Status& st, const http::Request& req) {
  if (st.code() == Code::kNotFound) {
    auto body = parse_json_object(req.body);
    std::string code;
    if (body.ok()) {
      auto c = get_string(*body, "voice_code");
      if (c.ok() && c->has_value()) code = **c;
    }
    return voice_not_found(code);
  }
  return speech_error(st);
}

}  // namespace

void register_tts_routes(http::Router& router, Services& s) {
  router.add("POST", "/v1/tts",
             [&s](http::Request& req) -> http::Response {
               auto t = parse_tts(s, req);
               if (!t.ok()) return tts_error(t.status(), req);
               const int rate = 22050;

               if (!t->stream) {
                 auto audio = s.speech->synthesize(t->text, t->settings, interactive_requester(req));
                 if (!audio.ok()) return speech_error(audio.status());
                 http::Response r;
                 const auto& a = *audio;
                 if (t->pcm) {
                   auto pcm = speech::encode_audio(speech::AudioFormat::kPcm, a.sample_rate, a.samples.data(),
                                                   a.samples.size());
                   if (!pcm.ok()) return http::Response::from_status(pcm.status());
                   r = http::Response::bytes(200, "audio/pcm", std::move(pcm.value()));
                 } else {
                   auto wav = speech::encode_audio(speech::AudioFormat::kWav, a.sample_rate, a.samples.data(),
                                                   a.samples.size());
                   if (!wav.ok()) return http::Response::from_status(wav.status());
                   r = http::Response::bytes(200, "audio/wav", std::move(wav.value()));
                 }
                 r.headers.set("X-Sample-Rate", std::to_string(a.sample_rate));
                 r.headers.set("X-Channels", "1");
                 r.headers.set("X-Audio-Duration", std::to_string(a.duration_s()));
                 return r;
               }

               // Admission happens here so that a full queue is still a plain 503, not a broken stream.
               auto started = s.speech->start(t->text, t->settings, interactive_requester(req));
               if (!started.ok()) return speech_error(started.status());
               std::shared_ptr<speech::SpeechStream> stream(std::move(started.value()));
               http::Response r;
               r.status = 200;
               r.headers.set("Content-Type", "application/vnd.imago.pcm-frames");
               r.headers.set("X-Sample-Rate", std::to_string(rate));
               r.headers.set("X-Channels", "1");
               // Called by the server whenever the connection can take more: header frame, one frame per
               // sentence, then the end (or error) frame.
               r.stream = [stream, rate, started = false, done = false,
                           total = uint64_t{0}]() mutable -> std::optional<std::string> {
                 if (done) return std::nullopt;
                 if (!started) {
                   started = true;
                   return speech::header_frame(rate);
                 }
                 auto next = stream->next();
                 if (!next.ok()) {
                   done = true;
                   return speech::error_frame(speech_error(next.status()).body);
                 }
                 if (!next->has_value()) {
                   done = true;
                   return speech::end_frame(total);
                 }
                 const auto& a = **next;
                 total += a.samples.size();
                 return speech::audio_frame(a.samples.data(), a.samples.size());
               };
               return r;
             },
             {.body_limit = 1 << 20, .pool = http::HandlerPool::kCpu});
}

}  // namespace imago::api

// POST /v1/audio/speech (SPEC 4.16): OpenAI-compatible text to speech, so unmodified OpenAI
// clients work by changing the base URL (Authorization: Bearer <api-secret> is accepted).
// Errors keep the SPEC 7 envelope; its error.message is where OpenAI's SDKs look for the text.
#include <cmath>

#include "api/routes.h"
#include "api/tts_common.h"
#include "speech/encoders.h"
#include "speech/text.h"
#include "util/base64.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::api {

namespace {

constexpr size_t kMaxInput = 4096;
constexpr int kRate = 24000;  // OpenAI's output rate for every format

// OpenAI's voice names onto ours (13 names, 10 voices: sage shares F1 with alloy, marin F3 with
// nova, cedar M2 with onyx).
const std::vector<std::pair<const char*, const char*>>& openai_voices() {
  static const std::vector<std::pair<const char*, const char*>> m = {
      {"alloy", "F1"}, {"ash", "M3"},   {"ballad", "M4"}, {"coral", "F5"}, {"echo", "M1"},
      {"fable", "F2"}, {"nova", "F3"},  {"onyx", "M2"},   {"sage", "F1"},  {"shimmer", "F4"},
      {"verse", "M5"}, {"marin", "F3"}, {"cedar", "M2"},
  };
  return m;
}

struct SpeechRequest {
  std::string input;
  speech::VoiceSettings settings;
  speech::AudioFormat format = speech::AudioFormat::kMp3;
  bool sse = false;
};

Result<SpeechRequest> parse_request(Services& s, const http::Request& req, std::string* voice_code) {
  // Every field OpenAI documents for POST /v1/audio/speech; anything else is refused by name.
  auto body = parse_json_object_with(
      req.body, {"model", "input", "voice", "instructions", "response_format", "speed", "stream_format"});
  if (!body.ok()) return body.status();
  // OpenAI also takes a custom voice as an object {"id": "..."}; here the id is a voice code.
  if (auto* vo = body->if_contains("voice"); vo && vo->is_object()) {
    auto id = get_string(vo->as_object(), "id");
    if (!id.ok() || !id->has_value())
      return Status::Invalid("Field 'voice' as an object must be {\"id\": \"<voice code>\"}");
    (*body)["voice"] = **id;
  }
  auto model = get_string(*body, "model");
  auto input = get_string(*body, "input");
  auto voice = get_string(*body, "voice");
  auto format = get_string(*body, "response_format");
  auto speed = get_number(*body, "speed");
  auto instructions = get_string(*body, "instructions");  // accepted, not used (see docs)
  auto stream_format = get_string(*body, "stream_format");
  for (const Status& st : {model.status(), input.status(), voice.status(), format.status(), speed.status(),
                           instructions.status(), stream_format.status()}) {
    if (!st.ok()) return st;
  }
  SpeechRequest r;
  if (!input->has_value()) return Status::Invalid("Field 'input' is required");
  r.input = **input;
  if (speech::utf8_length(r.input) > kMaxInput) {
    return Status::Invalid("Field 'input' must be at most 4096 characters");
  }
  if (!voice->has_value()) return Status::Invalid("Field 'voice' is required");
  const std::string& v = **voice;
  bool mapped = false;
  for (const auto& [name, id] : openai_voices()) {
    if (to_lower(v) == name) {
      r.settings.voice = id;
      mapped = true;
    }
  }
  if (!mapped) {
    std::string up = v;
    for (auto& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (s.speech->is_builtin_voice(up)) {
      r.settings.voice = up;
    } else if (is_uuid(to_lower(v))) {
      auto d = find_voice_code(s, req.principal->account_id, v);
      if (!d.ok()) {
        *voice_code = v;
        return d.status();
      }
      r.settings = settings_for(*d);
    } else {
      return Status::Invalid(
          "Field 'voice' must be one of alloy, ash, ballad, cedar, coral, echo, fable, marin, "
          "nova, onyx, sage, shimmer, verse, M1-M5, F1-F5 or a voice code");
    }
  }
  if (format->has_value()) {
    auto f = speech::parse_audio_format(**format);
    if (!f) return Status::Invalid("Field 'response_format' must be one of mp3, opus, aac, flac, wav, pcm");
    r.format = *f;
  }
  r.settings.speed = speed->value_or(1.0);
  if (r.settings.speed < 0.25 || r.settings.speed > 4.0) {
    return Status::Invalid("Field 'speed' must be between 0.25 and 4.0");
  }
  std::string sf = stream_format->value_or("audio");
  if (sf != "audio" && sf != "sse") return Status::Invalid("Field 'stream_format' must be 'audio' or 'sse'");
  r.sse = sf == "sse";
  r.settings.output_rate = kRate;
  Status ok = s.speech->validate(r.input, r.settings);
  if (!ok.ok()) return ok;
  return r;
}

std::string sse_event(const json::object& o) {
  return "data: " + json_to_string(o) + "\n\n";
}

}  // namespace

void register_audio_speech_routes(http::Router& router, Services& s) {
  router.add("POST", "/v1/audio/speech",
             [&s](http::Request& req) -> http::Response {
               std::string code;
               auto r = parse_request(s, req, &code);
               if (!r.ok()) {
                 if (r.status().code() == Code::kNotFound) return voice_not_found(code);
                 return speech_error(r.status());
               }
               std::string content_type(speech::audio_content_type(r->format));
               if (r->format == speech::AudioFormat::kPcm) content_type = "audio/pcm";

               if (!r->sse) {
                 auto audio = s.speech->synthesize(r->input, r->settings, interactive_requester(req));
                 if (!audio.ok()) return speech_error(audio.status());
                 auto bytes = speech::encode_audio(r->format, audio->sample_rate, audio->samples.data(),
                                                   audio->samples.size());
                 if (!bytes.ok()) return http::Response::from_status(bytes.status());
                 auto resp = http::Response::bytes(200, content_type, std::move(bytes.value()));
                 resp.headers.set("X-Sample-Rate", std::to_string(kRate));
                 return resp;
               }

               // SSE: speech.audio.delta events carry base64 chunks of the encoded stream as each
               // sentence is ready; speech.audio.done closes it.
               auto started = s.speech->start(r->input, r->settings, interactive_requester(req));
               if (!started.ok()) return speech_error(started.status());
               auto enc = speech::make_encoder(r->format, kRate, true);
               if (!enc.ok()) return http::Response::from_status(enc.status());
               std::shared_ptr<speech::SpeechStream> stream(std::move(started.value()));
               std::shared_ptr<speech::Encoder> encoder(std::move(enc.value()));
               size_t input_chars = speech::utf8_length(r->input);
               http::Response resp;
               resp.status = 200;
               resp.headers.set("Content-Type", "text/event-stream");
               resp.headers.set("Cache-Control", "no-cache");
               // Called by the server whenever the connection can take more: one delta event per sentence
               // (an encoder may hold bytes back: then the piece is empty), the tail, then done (or error).
               resp.stream = [stream, encoder, input_chars, seconds = 0.0,
                              done = false]() mutable -> std::optional<std::string> {
                 if (done) return std::nullopt;
                 auto delta = [](const std::string& bytes) {
                   if (bytes.empty()) return std::string();
                   return sse_event({{"type", "speech.audio.delta"}, {"audio", base64_encode(bytes)}});
                 };
                 auto fail = [&](const Status& st) {
                   done = true;
                   http::Response e = speech_error(st);
                   auto env = parse_json_object(e.body);
                   json::object ev{{"type", "error"}};
                   if (env.ok() && env->contains("error")) ev["error"] = env->at("error");
                   return sse_event(ev);
                 };
                 auto next = stream->next();
                 if (!next.ok()) return fail(next.status());
                 if (next->has_value()) {
                   const auto& a = **next;
                   seconds += a.duration_s();
                   auto bytes = encoder->write(a.samples.data(), a.samples.size());
                   if (!bytes.ok()) return fail(bytes.status());
                   return delta(*bytes);
                 }
                 auto tail = encoder->finish();
                 if (!tail.ok()) return fail(tail.status());
                 done = true;
                 // Usage: input characters and 20 ms audio frames (this engine has no tokens).
                 auto frames = static_cast<int64_t>(std::ceil(seconds / 0.02));
                 return delta(*tail) +
                        sse_event({{"type", "speech.audio.done"},
                                   {"usage",
                                    {{"input_tokens", static_cast<int64_t>(input_chars)},
                                     {"output_tokens", frames},
                                     {"total_tokens", static_cast<int64_t>(input_chars) + frames}}}});
               };
               return resp;
             },
             {.accept_bearer = true, .body_limit = 256 * 1024, .pool = http::HandlerPool::kCpu});
}

}  // namespace imago::api

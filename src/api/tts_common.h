// Shared by the speech routes (/v1/tts, /v1/voices, /v1/studio/*, /v1/audio/speech): request
// parsing of voices and axes, voice-code resolution and speech error responses.
#pragma once
#include <optional>
#include <string>

#include "api/services.h"
#include "http/message.h"
#include "speech/speech_service.h"
#include "store/voice_store.h"
#include "util/json.h"

namespace imago::api {

// `axes` object: only gender/pitch/rate/brightness, numbers within the accepted range.
Result<speech::Axes> parse_axes_object(const json::object& axes);
// Optional field `field` holding an axes object (absent -> zero axes).
Result<speech::Axes> parse_axes_field(const json::object& body, std::string_view field);

// The designed voice behind `code` for this account. Unknown, malformed, revoked or another
// account's code: kNotFound (answered as 404 VOICE_NOT_FOUND).
Result<DesignedVoice> find_voice_code(Services& s, const std::string& account_id, const std::string& code);

// Settings for a designed voice (its base voice and axes).
speech::VoiceSettings settings_for(const DesignedVoice& v);

// Speech errors: queue full -> 503 TTS_BUSY with Retry-After; voice code not found -> 404
// VOICE_NOT_FOUND; everything else through Response::from_status.
http::Response speech_error(const Status& st);
// The caller's account and the interactive priority class: HTTP text-to-speech shares the
// synthesizer fairly between accounts (docs/speech.md, "Scheduling").
speech::SynthesisRequester interactive_requester(const http::Request& req);
http::Response voice_not_found(const std::string& code);
// The SPEC 7 envelope as JSON text (for errors inside a stream that already started).
std::string error_envelope_json(const http::Response& r);

json::object designed_voice_json(const DesignedVoice& v);

}  // namespace imago::api

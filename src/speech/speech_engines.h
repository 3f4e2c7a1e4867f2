// The engines of one process and the choice among them: English on RHVoice (or, in the voices
// that use it, flite), falling back to flite when RHVoice is not there; every other language on
// espeak-ng. The choice is made per built-in voice and language; callers see only SpeechEngine.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "speech/espeak_engine.h"
#include "speech/speech_engine.h"
#include "speech/voices.h"

namespace imago::speech {

struct SpeechEngines {
  std::shared_ptr<EspeakEngine> espeak;
  std::shared_ptr<SpeechEngine> rhvoice;  // null: built without RHVoice, or its data is missing
  std::shared_ptr<SpeechEngine> flite;    // null: flite's voices could not be loaded
  std::string rhvoice_missing;            // why rhvoice is null
};

// Opens every engine (each once per process, shared by every caller). Fails only when espeak-ng
// cannot start; a missing RHVoice or flite leaves its pointer null.
Result<SpeechEngines> open_speech_engines(const std::string& scratch_dir);

struct EngineChoice {
  SpeechEngine* engine = nullptr;
  std::string engine_voice;    // empty for espeak-ng
  VoiceDefinition definition;  // before axes
};

// The engine, engine voice and definition that speak `voice` in `language` (ISO-639-1).
EngineChoice choose_engine(const SpeechEngines& engines, const BuiltinVoice& voice,
                           const std::string& language);

// Built-in voices whose English falls back from RHVoice to flite on these engines ("M1 -> rms").
std::vector<std::string> voices_falling_back(const SpeechEngines& engines);

}  // namespace imago::speech

// The espeak-ng engine: one synthesis of one piece of text with a fully specified voice, returning
// 22050 Hz PCM with word and phoneme timing from espeak's own events. It speaks the languages
// RHVoice and flite lack, and its phonemiser gives the phones of the other engines' words
// (speech/text_phones.h).
//
// espeak-ng keeps all state in globals: there is one EspeakEngine per process and every call must
// be serialized by the caller (holding mutex()).
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "speech/speech_engine.h"
#include "util/status.h"

namespace imago::speech {

class EspeakEngine final : public SpeechEngine {
 public:
  // The process-wide engine (espeak-ng can be initialized once per process): created on first
  // use and shared by every SpeechService; freed with the last user. The first caller's
  // `scratch_dir` (empty: a new temporary directory, removed with the engine) receives a private
  // copy of espeak-ng-data (symlinks plus a writable voices/!v for generated variants).
  static Result<std::shared_ptr<EspeakEngine>> shared(const std::string& scratch_dir = "");
  ~EspeakEngine() override;
  EspeakEngine(const EspeakEngine&) = delete;
  EspeakEngine& operator=(const EspeakEngine&) = delete;

  const char* name() const override { return "espeak-ng"; }

  // Hold this while calling synthesize()/has_voice()/transcribe_ipa(): espeak-ng is global state.
  std::mutex& mutex() override { return mu_; }
  Result<EngineResult> synthesize(const EngineRequest& req) override;
  // True when espeak-ng can load this voice (language) file.
  bool has_voice(const std::string& espeak_voice);
  // espeak-ng's IPA transcription of `text` in that language voice (no audio), with "(xx)"
  // where espeak-ng switched to another language's rules. Leaves that voice selected.
  Result<std::string> transcribe_ipa(const std::string& text, const std::string& espeak_voice);
  // espeak-ng's phoneme mnemonics for `text` (no audio): one entry per phoneme, stress and length
  // marks kept (e.g. "h", "@", "l", "'oU"). Leaves that voice selected.
  Result<std::vector<std::string>> phonemes(const std::string& text, const std::string& espeak_voice);

  static constexpr int kSampleRate = kEngineSampleRate;

 private:
  EspeakEngine() = default;
  Result<std::string> variant_for(const VoiceDefinition& v);
  std::mutex mu_;
  std::string scratch_;
  bool owns_scratch_ = false;
  std::vector<std::string> written_variants_;
  bool phonemised_ = false;  // the phonemiser ran since the last synthesis
  // Selects a voice unless it is the one selected already: espeak-ng leaks about 1.3 KB on every
  // espeak_SetVoiceByName (measured with LeakSanitizer), and the phonemiser selects a language
  // voice for every RHVoice sentence.
  bool select_voice(const std::string& name);
  std::string selected_voice_;
};

// The espeak variant file text for a definition (exposed for tests).
std::string render_variant_file(const VoiceDefinition& v);

}  // namespace imago::speech

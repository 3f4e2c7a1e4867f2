// Thin wrapper over espeak-ng: one synthesis of one piece of text with a fully specified voice,
// returning 22050 Hz PCM with word and phoneme timing from espeak's own events.
//
// espeak-ng keeps all state in globals: there is one Engine per process and every call must be
// serialized by the caller (SpeechService holds a mutex around it).
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::speech {

// The physical voice handed to espeak-ng, resolved from a built-in voice plus axes.
struct VoiceDefinition {
  double pitch_base_hz = 100;  // bottom of the intonation range
  double pitch_range_hz = 40;  // intonation range above the base
  double formant_scale = 1.0;  // multiplies formants F1..F5 (vocal tract length)
  double tone_tilt = 0;        // spectral tilt, -1 (dark) .. +1 (bright); espeak "tone" curve
  int rate_wpm = 175;          // speaking rate, words per minute
  // Pitch jitter (espeak "flutter"). Always written, as 0 by default: espeak-ng's flutter phase
  // runs on across utterances, so flutter makes the same request differ a little every time.
  // (Other wave-generator state also carries over between utterances, so output is reproducible
  // only to within a few milliseconds, not bit for bit.)
  int flutter = 0;
  int roughness = 0;    // creak (espeak "roughness")
  bool female = false;  // espeak "gender" (affects a few language rules)
};

struct EngineRequest {
  std::string text;          // UTF-8
  std::string espeak_voice;  // language voice, e.g. "en-us"
  VoiceDefinition voice;
  // Stop (and fail) once this many samples have been produced; 0: unlimited.
  int64_t max_samples = 0;
};

struct EngineResult {
  Audio audio;             // 22050 Hz
  bool truncated = false;  // stopped at max_samples
};

class Engine {
 public:
  // The process-wide engine (espeak-ng can be initialized once per process): created on first
  // use and shared by every SpeechService; freed with the last user. The first caller's
  // `scratch_dir` (empty: a new temporary directory, removed with the engine) receives a private
  // copy of espeak-ng-data (symlinks plus a writable voices/!v for generated variants).
  static Result<std::shared_ptr<Engine>> shared(const std::string& scratch_dir = "");
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Hold this while calling synthesize()/has_voice(): espeak-ng is global state.
  std::mutex& mutex() { return mu_; }
  Result<EngineResult> synthesize(const EngineRequest& req);
  // True when espeak-ng can load this voice (language) file.
  bool has_voice(const std::string& espeak_voice);

  static constexpr int kSampleRate = 22050;

 private:
  Engine() = default;
  Result<std::string> variant_for(const VoiceDefinition& v);
  std::mutex mu_;
  std::string scratch_;
  bool owns_scratch_ = false;
  std::vector<std::string> written_variants_;
};

// The espeak variant file text for a definition (exposed for tests).
std::string render_variant_file(const VoiceDefinition& v);

}  // namespace imago::speech

// The speech-engine interface: one synthesis of one sentence with a fully specified voice, in
// PCM at the engine's own rate with the timing of every word and phone. One implementation per engine
// (espeak_engine.h, rhvoice_engine.h, flite_engine.h); speech_engines.h picks the engine for a
// voice and language. Nothing outside src/speech/ knows which engine spoke.
//
// Phones are reported in one engine-neutral phone set, espeak-ng's phoneme mnemonics ("p", "aI",
// "_:" for a pause; docs/speech.md, "Phones"), whatever the engine's own phone set: the avatar's
// visemes are defined on that set only.
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "speech/synthesis.h"
#include "util/status.h"

namespace imago::speech {

// espeak-ng's rate, and the rate of the service's output when no other is asked for (the
// service converts every engine's output to it, or to VoiceSettings::output_rate, once).
// RHVoice (24 kHz) and flite (16 kHz) deliver at their own rates (Audio::sample_rate), so the
// conversion is not made twice. EngineRequest::max_samples counts samples at this rate.
inline constexpr int kEngineSampleRate = 22050;

// The physical voice asked of an engine, resolved from a built-in voice plus axes. espeak-ng
// builds a voice variant from it; RHVoice and flite start from one of their recorded voices and
// move it to these figures (speech/voice_shaping.h).
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
  std::string text;          // UTF-8, one sentence
  std::string espeak_voice;  // language voice for espeak-ng, e.g. "en-us" (and its phonemiser)
  VoiceDefinition voice;
  // Stop (and fail) once this many samples (at kEngineSampleRate) have been produced; 0: unlimited.
  int64_t max_samples = 0;
  // The engine's own voice, e.g. "slt" (RHVoice, flite); unused by espeak-ng.
  std::string engine_voice;
  // When set, an engine that produces audio incrementally (RHVoice) may hand on leading parts of
  // the sentence while it works on the rest, so the first audio reaches the reader early. Each
  // chunk ends near a word boundary (not necessarily in a pause: post-processing streams across
  // chunks, and every chunk has Audio::continues set), carries the words that start in it and the
  // phones clipped to it (times relative to its own first sample) and is contiguous with the
  // next; the EngineResult then holds only the rest of the sentence. The first chunk goes once it holds
  // `first_chunk_s` of audio, later ones once they hold `chunk_s`; a chunk is cut only where another word has
  // started, so every chunk and the rest hold at least one word. Returning false stops synthesis (the result
  // is then truncated). Called on the synthesizing thread with the engine's mutex held: keep it short.
  std::function<bool(Audio chunk)> on_chunk;
  double first_chunk_s = 0.1;
  double chunk_s = 1.0;
};

struct EngineResult {
  Audio audio;             // at the engine's own rate (Audio::sample_rate)
  bool truncated = false;  // stopped at max_samples
};

class SpeechEngine {
 public:
  virtual ~SpeechEngine() = default;
  // "espeak-ng", "rhvoice" or "flite" (GET /v1/voices shows it).
  virtual const char* name() const = 0;
  // Hold this while calling synthesize(): each engine runs one synthesis at a time (its library
  // keeps process-wide state), and different engines run in parallel.
  virtual std::mutex& mutex() = 0;
  virtual Result<EngineResult> synthesize(const EngineRequest& req) = 0;
};

}  // namespace imago::speech

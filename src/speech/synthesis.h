// The speech engine's public contract: text + voice settings in, PCM out, with the timing of
// every word and phoneme (the avatar renderer drives lip sync from the phoneme timing).
// Implemented by the speech subsystem; used by /v1/tts, the avatar engine and live sessions.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace imago::speech {

// Tuning offsets (SPEC 2.5), roughly -0.3..0.3, 0 neutral.
struct Axes {
  double gender = 0;
  double pitch = 0;
  double rate = 0;
  double brightness = 0;
};

struct VoiceSettings {
  std::string voice = "M1";  // built-in voice id (M1..M5, F1..F5)
  Axes axes;
  std::string language = "en";  // ISO-639-1
  double speed = 1.05;          // 0.7..2.0 on /v1/tts
  int total_steps = 8;          // quality vs speed, 1..100
  int output_rate = 0;          // 0: native 22050 Hz; otherwise resampled (libsoxr) to this rate
};

struct PhonemeTiming {
  std::string phoneme;  // espeak-ng phoneme mnemonic, e.g. "p", "aI", "_:" (pause)
  double start_s = 0;
  double end_s = 0;
};

struct WordTiming {
  std::string text;
  double start_s = 0;
  double end_s = 0;
};

// Mono signed 16-bit PCM plus timing; times are seconds from the start of `samples`.
struct Audio {
  int sample_rate = 22050;
  std::vector<int16_t> samples;
  std::vector<WordTiming> words;
  std::vector<PhonemeTiming> phonemes;
  // More of the same sound follows at once (a chunk of a sentence cut between two words, perhaps
  // inside sound): streaming post-processing carries on into the next piece instead of ending.
  bool continues = false;
  double duration_s() const { return sample_rate ? static_cast<double>(samples.size()) / sample_rate : 0; }
};

}  // namespace imago::speech

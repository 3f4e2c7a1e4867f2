// Moving a recorded engine voice (RHVoice, flite) to the figures of a VoiceDefinition: the engine
// changes F0 and rate itself where it can; a formant shift (resampling, then a time-stretch back
// to the original duration) and a spectral tilt are applied to its output here, at the engine's
// own rate (the service's reader converts it once, to the rate asked for).
#pragma once
#include <cstdint>
#include <vector>

#include "speech/dsp.h"
#include "speech/speech_engine.h"
#include "speech/timing_carry.h"

namespace imago::speech {

// A voice of an engine as it speaks unmodified: its median F0 (pitch_base_hz), a nominal
// formant scale on espeak's scale (1.0 for the male voices, about 1.15 for the female ones),
// tilt 0 and 175 words per minute as its own rate.
struct NativeVoice {
  const char* name;
  VoiceDefinition natural;
  // False when the engine cannot move this voice's F0 (flite's rms ignores f0_shift): then F0
  // moves with the formants in post-processing.
  bool engine_pitch = true;
};

// An engine voice as it speaks unshaped: its F0, a female voice's shorter vocal tract (formants
// x1.15), 175 words a minute.
NativeVoice native_voice(const char* name, double f0_hz, bool female, bool engine_pitch = true);

struct Shaping {
  double engine_f0 = 1;    // F0 factor asked of the engine
  double engine_rate = 1;  // speaking-rate factor asked of the engine (> 1 faster)
  double shift = 1;        // post-processing factor on formants (and F0) at constant duration
  double tilt = 0;         // spectral tilt, as VoiceDefinition::tone_tilt
};

// What to ask of the engine and what to do after it, to turn `native` into `target`.
Shaping shaping_for(const VoiceDefinition& target, const NativeVoice& native);

// The spectral tilt over a stream: a one-pole split at about 1.2 kHz, the low band scaled by
// 2^(-0.8 t) and the high band by 2^(0.8 t). The level is set on the first piece (its RMS kept,
// never clipping it) and held for the rest of the stream, so pieces join without a step.
class StreamingTilt {
 public:
  StreamingTilt(int rate, double tilt);
  std::vector<int16_t> push(const std::vector<int16_t>& in);

 private:
  double a_, g_low_, g_high_, tilt_;
  double lp_ = 0;
  double k_ = 0;  // level factor, 0 until the first piece
};

// Applies `shaping.shift` and `shaping.tilt` to an engine's output at `rate`, keeping that rate
// (a conversion here would be undone by the reader's to the output rate: RHVoice's 24 kHz went to
// 22050 Hz and back to a live room's 24 kHz), as the engine makes it: push() takes the next piece
// of the sentence (its words and phones timed from its first sample) and returns what is finished
// so far, timed from its first sample (a few milliseconds stay held until the next push; `last`
// releases them). The pieces come out as one continuous signal, so a sentence may be handed on in
// chunks cut anywhere.
class VoiceFinisher {
 public:
  VoiceFinisher(int rate, const Shaping& shaping);
  Audio push(const std::vector<int16_t>& samples, const std::vector<WordTiming>& words,
             const std::vector<PhonemeTiming>& phonemes, bool last);

 private:
  int rate_;
  Shaping shaping_;
  int mid_;  // the intermediate rate of the formant shift (rate_ when there is none)
  StreamingResampler resampler_;
  StreamingStretch stretch_;
  StreamingTilt tilt_;
  TimingCarry carry_;
};

// CPU seconds this thread spends in each VoiceFinisher step while a FinisherCostScope is open on
// it (the shaping benchmark splits synthesis time with this; nothing is counted otherwise).
struct FinisherCosts {
  // The measuring code's CPU clock (seconds of this thread's CPU): the library reads none itself.
  double (*cpu_s)() = nullptr;
  double resample_s = 0, stretch_s = 0, tilt_s = 0;
};
class FinisherCostScope {
 public:
  explicit FinisherCostScope(FinisherCosts* costs);
  ~FinisherCostScope();
  FinisherCostScope(const FinisherCostScope&) = delete;
  FinisherCostScope& operator=(const FinisherCostScope&) = delete;

 private:
  FinisherCosts* prev_;
};

// The whole sentence at once (VoiceFinisher with one push).
Audio finish_voice(const std::vector<int16_t>& samples, int rate, const Shaping& shaping,
                   std::vector<WordTiming> words, std::vector<PhonemeTiming> phonemes);

// The spectral tilt alone (exposed for tests), on one whole piece: StreamingTilt with one push.
std::vector<int16_t> apply_tilt(const std::vector<int16_t>& in, int rate, double tilt);

}  // namespace imago::speech

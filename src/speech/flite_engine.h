// The flite engine (Debian's flite 2.2, BSD-style licence; voices rms, awb, slt, kal16).
// flite's utterance relations give every phone with its end time and every word with its
// phones; phones are mapped from flite's US English phone set (CMU, ARPAbet-like) onto the
// engine-neutral one (espeak-ng mnemonics, flite_phone_to_neutral).
//
// Concurrency: one flite engine per process, one synthesis at a time (mutex()): the voice
// features set per request (rate, F0) live on flite's shared voice objects.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "speech/speech_engine.h"
#include "speech/voice_shaping.h"

namespace imago::speech {

class FliteEngine final : public SpeechEngine {
 public:
  // The voices, with their natural figures (measured median F0 on Harvard sentences).
  static const std::vector<NativeVoice>& voices();

  // Registers the voices (kUnavailable when one cannot be loaded).
  static Result<std::shared_ptr<FliteEngine>> create();
  ~FliteEngine() override;

  const char* name() const override { return "flite"; }
  std::mutex& mutex() override { return mu_; }
  Result<EngineResult> synthesize(const EngineRequest& req) override;

 private:
  struct Impl;
  explicit FliteEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
};

// flite's phone name ("aa", "ch", "pau") as an espeak-ng mnemonic ("A:", "tS", "_"); unknown
// names map to "_".
std::string flite_phone_to_neutral(std::string_view flite_phone);

}  // namespace imago::speech

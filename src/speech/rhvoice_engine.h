// The RHVoice engine (Debian's librhvoice 1.8, non-free; English voices slt, clb, bdl, alan).
// RHVoice's C API reports only word and sentence starts and ends, as character positions,
// through callbacks; a word's time is the number of samples delivered before its callback. The
// phones inside each word come from espeak-ng's phonemiser (speech/text_phones.h).
//
// Concurrency: one RHVoice engine per process, one synthesis at a time (mutex()); RHVoice's
// engine object shares caches between messages and is not documented as thread-safe. The
// phonemiser holds espeak-ng's own mutex only for the few microseconds a word's phones take, so
// RHVoice and espeak-ng synthesize in parallel.
//
// Left out of builds with -DIMAGO_RHVOICE=OFF: then create() says so and English falls back to
// flite (speech/speech_engines.h).
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "speech/espeak_engine.h"
#include "speech/speech_engine.h"
#include "speech/voice_shaping.h"

namespace imago::speech {

class RhvoiceEngine final : public SpeechEngine {
 public:
  // The voices used, with their natural figures (measured: median F0 on Harvard sentences).
  // lyubov and evgeniy-eng are not here: their licence forbids commercial use.
  static const std::vector<NativeVoice>& voices();

  // Loads RHVoice's English data (kUnavailable when RHVoice was left out of the build or its
  // data is missing). `phonemiser` gives the phones of the words.
  static Result<std::shared_ptr<RhvoiceEngine>> create(std::shared_ptr<EspeakEngine> phonemiser);
  ~RhvoiceEngine() override;

  const char* name() const override { return "rhvoice"; }
  std::mutex& mutex() override { return mu_; }
  Result<EngineResult> synthesize(const EngineRequest& req) override;

 private:
  struct Impl;
  explicit RhvoiceEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
};

}  // namespace imago::speech

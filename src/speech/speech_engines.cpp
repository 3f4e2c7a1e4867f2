#include "speech/speech_engines.h"

#include <mutex>

#include "speech/flite_engine.h"
#include "speech/rhvoice_engine.h"

namespace imago::speech {

namespace {
// RHVoice and flite are loaded once per process (their data is large and flite registers its
// voices globally) and shared like espeak-ng.
template <typename E, typename Make>
Result<std::shared_ptr<E>> shared_engine(Make make) {
  static std::mutex mu;
  static std::weak_ptr<E> current;
  std::lock_guard lock(mu);
  if (auto e = current.lock()) return e;
  auto e = make();
  if (e.ok()) current = *e;
  return e;
}
}  // namespace

Result<SpeechEngines> open_speech_engines(const std::string& scratch_dir) {
  SpeechEngines out;
  auto espeak = EspeakEngine::shared(scratch_dir);
  if (!espeak.ok()) return espeak.status();
  out.espeak = std::move(*espeak);
  auto rh = shared_engine<RhvoiceEngine>([&] { return RhvoiceEngine::create(out.espeak); });
  if (rh.ok())
    out.rhvoice = std::move(*rh);
  else
    out.rhvoice_missing = rh.status().message();
  auto fl = shared_engine<FliteEngine>([] { return FliteEngine::create(); });
  if (fl.ok()) out.flite = std::move(*fl);
  return out;
}

namespace {
SpeechEngine* engine_named(const SpeechEngines& e, const std::string& name) {
  if (name == "rhvoice") return e.rhvoice.get();
  if (name == "flite") return e.flite.get();
  return nullptr;
}
}  // namespace

EngineChoice choose_engine(const SpeechEngines& engines, const BuiltinVoice& voice,
                           const std::string& language) {
  if (language == "en") {
    for (const EngineVoice* ev : {&voice.english, &voice.fallback}) {
      if (SpeechEngine* e = engine_named(engines, ev->engine)) return {e, ev->voice, ev->definition};
    }
  }
  return {engines.espeak.get(), "", voice.espeak};
}

std::vector<std::string> voices_falling_back(const SpeechEngines& engines) {
  std::vector<std::string> out;
  for (const auto& v : builtin_voice_table()) {
    if (!engine_named(engines, v.english.engine) && engine_named(engines, v.fallback.engine))
      out.push_back(std::string(v.id) + " -> flite " + v.fallback.voice);
  }
  return out;
}

}  // namespace imago::speech

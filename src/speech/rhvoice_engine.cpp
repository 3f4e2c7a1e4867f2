#include "speech/rhvoice_engine.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "speech/text_phones.h"

#ifdef IMAGO_HAVE_RHVOICE
#include <RHVoice.h>
#endif

namespace imago::speech {

namespace {
NativeVoice native(const char* name, double f0, bool female) {
  NativeVoice v{name, {}, true};
  v.natural.pitch_base_hz = f0;
  v.natural.pitch_range_hz = 0;
  v.natural.formant_scale = female ? 1.15 : 1.0;
  v.natural.rate_wpm = 175;
  v.natural.female = female;
  return v;
}
}  // namespace

const std::vector<NativeVoice>& RhvoiceEngine::voices() {
  static const std::vector<NativeVoice> v = {native("slt", 173, true), native("clb", 178, true),
                                             native("bdl", 119, false), native("alan", 135, false)};
  return v;
}

#ifdef IMAGO_HAVE_RHVOICE

namespace {
// One synthesis in progress (RHVoice's callbacks get it as user data).
struct Collector {
  int rate = 0;
  std::vector<int16_t> samples;
  int64_t max_native = 0;  // 0: unlimited
  bool truncated = false;
  struct Mark {
    unsigned position, length;
    size_t sample;
    bool start;
  };
  std::vector<Mark> marks;
};

int on_rate(int rate, void* u) {
  static_cast<Collector*>(u)->rate = rate;
  return 1;
}
int on_speech(const short* s, unsigned n, void* u) {
  auto* c = static_cast<Collector*>(u);
  c->samples.insert(c->samples.end(), s, s + n);
  if (c->max_native > 0 && static_cast<int64_t>(c->samples.size()) > c->max_native) {
    c->truncated = true;
    return 0;  // stop synthesis
  }
  return 1;
}
int on_word_start(unsigned pos, unsigned len, void* u) {
  auto* c = static_cast<Collector*>(u);
  c->marks.push_back({pos, len, c->samples.size(), true});
  return 1;
}
int on_word_end(unsigned pos, unsigned len, void* u) {
  auto* c = static_cast<Collector*>(u);
  c->marks.push_back({pos, len, c->samples.size(), false});
  return 1;
}
}  // namespace

struct RhvoiceEngine::Impl {
  RHVoice_tts_engine engine = nullptr;
  std::shared_ptr<EspeakEngine> phonemiser;
  ~Impl() {
    if (engine) RHVoice_delete_tts_engine(engine);
  }
};

Result<std::shared_ptr<RhvoiceEngine>> RhvoiceEngine::create(std::shared_ptr<EspeakEngine> phonemiser) {
  RHVoice_init_params p{};
  p.data_path = "/usr/share/RHVoice";
  p.config_path = "/etc/RHVoice";
  p.callbacks.set_sample_rate = &on_rate;
  p.callbacks.play_speech = &on_speech;
  p.callbacks.word_starts = &on_word_start;
  p.callbacks.word_ends = &on_word_end;
  auto impl = std::make_unique<Impl>();
  impl->phonemiser = std::move(phonemiser);
  impl->engine = RHVoice_new_tts_engine(&p);
  if (!impl->engine) return Status::Unavailable("RHVoice could not load its data from /usr/share/RHVoice");
  // Every voice we use must be there (rhvoice-english).
  const RHVoice_voice_info* info = RHVoice_get_voices(impl->engine);
  unsigned n = RHVoice_get_number_of_voices(impl->engine);
  for (const auto& v : voices()) {
    bool found = false;
    for (unsigned i = 0; i < n; ++i) found = found || strcasecmp(info[i].name, v.name) == 0;
    if (!found) return Status::Unavailable(std::string("RHVoice voice ") + v.name + " is not installed");
  }
  return std::shared_ptr<RhvoiceEngine>(new RhvoiceEngine(std::move(impl)));
}

Result<EngineResult> RhvoiceEngine::synthesize(const EngineRequest& req) {
  const NativeVoice* nv = nullptr;
  for (const auto& v : voices())
    if (req.engine_voice == v.name) nv = &v;
  if (!nv) return Status::Internal("RHVoice has no voice '" + req.engine_voice + "'");
  Shaping shaping = shaping_for(req.voice, *nv);

  RHVoice_synth_params sp{};
  sp.voice_profile = nv->name;
  sp.relative_rate = shaping.engine_rate;
  sp.relative_pitch = shaping.engine_f0;  // measured: multiplies F0
  sp.relative_volume = 1;
  sp.punctuation_mode = RHVoice_punctuation_default;
  sp.capitals_mode = RHVoice_capitals_default;
  Collector c;
  // RHVoice's voices are 24 kHz; the cap is counted in output samples.
  if (req.max_samples > 0) c.max_native = req.max_samples * 24000 / kEngineSampleRate + 1;
  RHVoice_message m = RHVoice_new_message(
      impl_->engine, req.text.c_str(), static_cast<unsigned>(req.text.size()), RHVoice_message_text, &sp, &c);
  if (!m) return Status::Internal("RHVoice refused the text");
  int ok = RHVoice_speak(m);
  RHVoice_delete_message(m);
  if (!ok && !c.truncated) return Status::Internal("RHVoice failed to synthesize");
  if (c.rate <= 0) c.rate = 24000;

  // Words: a start mark and its end mark (same position) bound the word.
  std::vector<WordTiming> words;
  for (size_t i = 0; i < c.marks.size(); ++i) {
    const auto& s = c.marks[i];
    if (!s.start) continue;
    size_t end = c.samples.size();
    for (size_t j = i + 1; j < c.marks.size(); ++j) {
      if (!c.marks[j].start && c.marks[j].position == s.position) {
        end = c.marks[j].sample;
        break;
      }
    }
    // RHVoice's word spans take in adjacent punctuation ("world."): trim it.
    std::string w = utf8_slice(req.text, s.position, s.length);
    auto punct = [](char ch) {
      return std::ispunct(static_cast<unsigned char>(ch)) || std::isspace(static_cast<unsigned char>(ch));
    };
    while (!w.empty() && punct(w.back())) w.pop_back();
    while (!w.empty() && punct(w.front())) w.erase(0, 1);
    if (w.empty()) continue;
    words.push_back({w, static_cast<double>(s.sample) / c.rate, static_cast<double>(end) / c.rate});
  }
  std::vector<std::vector<std::string>> phones;
  {
    std::lock_guard lock(impl_->phonemiser->mutex());
    for (const auto& w : words) {
      auto p = impl_->phonemiser->phonemes(w.text, req.espeak_voice.empty() ? "en-us" : req.espeak_voice);
      phones.push_back(p.ok() ? std::move(*p) : std::vector<std::string>());
    }
  }
  spread_crowded_words(words, phones);
  refine_word_times(words, c.samples, c.rate);
  auto placed = align_phones_in_words(words, phones, c.samples, c.rate);
  EngineResult out;
  out.truncated = c.truncated;
  out.audio = finish_voice(c.samples, c.rate, shaping, std::move(words), std::move(placed));
  return out;
}

#else  // built without RHVoice

struct RhvoiceEngine::Impl {};

Result<std::shared_ptr<RhvoiceEngine>> RhvoiceEngine::create(std::shared_ptr<EspeakEngine>) {
  return Status::Unavailable("this server was built without RHVoice (-DIMAGO_RHVOICE=OFF)");
}

Result<EngineResult> RhvoiceEngine::synthesize(const EngineRequest&) {
  return Status::Internal("built without RHVoice");
}

#endif

RhvoiceEngine::RhvoiceEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RhvoiceEngine::~RhvoiceEngine() = default;

}  // namespace imago::speech

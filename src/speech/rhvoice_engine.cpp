#include "speech/rhvoice_engine.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

#include "speech/text_phones.h"

#ifdef IMAGO_HAVE_RHVOICE
#include <RHVoice.h>
#endif

namespace imago::speech {

const std::vector<NativeVoice>& RhvoiceEngine::voices() {
  static const std::vector<NativeVoice> v = {native_voice("slt", 173, true), native_voice("clb", 178, true),
                                             native_voice("bdl", 119, false),
                                             native_voice("alan", 135, false)};
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

  // Chunked delivery (EngineRequest::on_chunk): what has been handed on already.
  const EngineRequest* req = nullptr;
  EspeakEngine* phonemiser = nullptr;
  Shaping shaping;
  std::unique_ptr<VoiceFinisher> finisher;  // made at the first span, once the rate is known
  size_t emitted = 0;                       // samples handed on
  size_t marks_used = 0;                    // marks whose words were handed on
  bool stopped = false;                     // on_chunk returned false
};

// The audio of samples [from, to) with the words whose marks are in [mark_from, mark_to), their
// phones placed, through the sentence's voice finisher (shaping, kEngineSampleRate; `last`
// releases what it holds); times from the first sample of what comes out.
Audio make_span(Collector& c, size_t from, size_t to, size_t mark_from, size_t mark_to, bool last) {
  const EngineRequest& req = *c.req;
  const int rate = c.rate > 0 ? c.rate : 24000;
  const double len_s = static_cast<double>(to - from) / rate;
  auto rel = [&](size_t sample) {
    return std::clamp(static_cast<double>(sample) - static_cast<double>(from), 0.0, len_s * rate) / rate;
  };
  // Words: a start mark and its end mark (same position) bound the word.
  std::vector<WordTiming> words;
  for (size_t i = mark_from; i < mark_to; ++i) {
    const auto& s = c.marks[i];
    if (!s.start) continue;
    size_t end = to;
    for (size_t j = i + 1; j < mark_to; ++j) {
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
    words.push_back({w, rel(s.sample), rel(end)});
  }
  std::vector<std::vector<std::string>> phones;
  {
    std::lock_guard lock(c.phonemiser->mutex());
    for (const auto& w : words) {
      auto p = c.phonemiser->phonemes(w.text, req.espeak_voice.empty() ? "en-us" : req.espeak_voice);
      phones.push_back(p.ok() ? std::move(*p) : std::vector<std::string>());
    }
  }
  std::vector<int16_t> span(c.samples.begin() + static_cast<ptrdiff_t>(from),
                            c.samples.begin() + static_cast<ptrdiff_t>(to));
  spread_crowded_words(words, phones);
  refine_word_times(words, span, rate);
  auto placed = align_phones_in_words(words, phones, span, rate);
  if (!c.finisher) c.finisher = std::make_unique<VoiceFinisher>(rate, c.shaping);
  return c.finisher->push(span, words, placed, last);
}

// Hands on the finished words so far when they hold enough audio and another word has begun:
// the cut goes at the last such word end, moved to the quietest 10 ms within 30 ms of it (RHVoice
// reports word ends only between its 100 ms output chunks). The voice finisher streams across the
// cut, so it need not fall in a pause: the first words go as soon as they are made.
void maybe_hand_on(Collector& c) {
  if (!c.req || !c.req->on_chunk || c.stopped) return;
  const int rate = c.rate > 0 ? c.rate : 24000;
  const double min_s = c.emitted == 0 ? c.req->first_chunk_s : c.req->chunk_s;
  size_t cut_mark = 0, cut_sample = 0;
  int open = 0;
  for (size_t k = c.marks_used; k < c.marks.size(); ++k) {
    open += c.marks[k].start ? 1 : -1;
    if (c.marks[k].start || open != 0 || k + 1 >= c.marks.size() || !c.marks[k + 1].start) continue;
    if (c.marks[k].sample <= c.emitted) continue;
    cut_mark = k + 1;
    cut_sample = c.marks[k].sample;
  }
  if (cut_mark == 0 || static_cast<double>(cut_sample - c.emitted) / rate < min_s) return;
  const size_t win = static_cast<size_t>(rate / 100), slack = static_cast<size_t>(rate * 3 / 100);
  size_t lo = std::max(c.emitted + win, cut_sample > slack ? cut_sample - slack : 0);
  size_t hi = std::min(c.samples.size(), cut_sample + slack);
  double best = -1;
  for (size_t at = lo; at + win <= hi; at += win / 2) {
    double e = 0;
    for (size_t i = at; i < at + win; ++i) e += static_cast<double>(c.samples[i]) * c.samples[i];
    if (best < 0 || e < best) best = e, cut_sample = at + win / 2;
  }
  if (best < 0) return;
  Audio chunk = make_span(c, c.emitted, cut_sample, c.marks_used, cut_mark, false);
  chunk.continues = true;
  c.emitted = cut_sample;
  c.marks_used = cut_mark;
  if (!c.req->on_chunk(std::move(chunk))) c.stopped = true;
}

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
  maybe_hand_on(*c);
  return c->stopped ? 0 : 1;
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
  c.req = &req;
  c.phonemiser = impl_->phonemiser.get();
  c.shaping = shaping;
  // RHVoice's voices are 24 kHz; the cap is counted in output samples.
  if (req.max_samples > 0) c.max_native = req.max_samples * 24000 / kEngineSampleRate + 1;
  RHVoice_message m = RHVoice_new_message(
      impl_->engine, req.text.c_str(), static_cast<unsigned>(req.text.size()), RHVoice_message_text, &sp, &c);
  if (!m) return Status::Internal("RHVoice refused the text");
  int ok = RHVoice_speak(m);
  RHVoice_delete_message(m);
  EngineResult out;
  if (c.stopped) {
    out.truncated = true;  // the reader went away: nothing more is wanted
    return out;
  }
  if (!ok && !c.truncated) return Status::Internal("RHVoice failed to synthesize");
  if (c.rate <= 0) c.rate = 24000;
  out.truncated = c.truncated;
  out.audio = make_span(c, c.emitted, c.samples.size(), c.marks_used, c.marks.size(), true);
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

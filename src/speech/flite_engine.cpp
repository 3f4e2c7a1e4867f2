#include "speech/flite_engine.h"

#include <flite/flite.h>

#include <algorithm>
#include <map>
#include <memory>

extern "C" {
cst_voice* register_cmu_us_rms(const char* voxdir);
cst_voice* register_cmu_us_awb(const char* voxdir);
cst_voice* register_cmu_us_slt(const char* voxdir);
cst_voice* register_cmu_us_kal16(const char* voxdir);
}

namespace imago::speech {

const std::vector<NativeVoice>& FliteEngine::voices() {
  static const std::vector<NativeVoice> v = {
      native_voice("rms", 102, false, false), native_voice("awb", 121, false, true),
      native_voice("slt", 168, true, true), native_voice("kal16", 91, false, true)};
  return v;
}

std::string flite_phone_to_neutral(std::string_view p) {
  static const std::map<std::string_view, const char*> m = {
      {"aa", "A:"}, {"ae", "a"},  {"ah", "V"}, {"ao", "O:"}, {"aw", "aU"}, {"ax", "@"},  {"ay", "aI"},
      {"b", "b"},   {"ch", "tS"}, {"d", "d"},  {"dh", "D"},  {"eh", "E"},  {"er", "3:"}, {"ey", "eI"},
      {"f", "f"},   {"g", "g"},   {"hh", "h"}, {"ih", "I"},  {"iy", "i:"}, {"jh", "dZ"}, {"k", "k"},
      {"l", "l"},   {"m", "m"},   {"n", "n"},  {"ng", "N"},  {"ow", "oU"}, {"oy", "OI"}, {"p", "p"},
      {"r", "r"},   {"s", "s"},   {"sh", "S"}, {"t", "t"},   {"th", "T"},  {"uh", "U"},  {"uw", "u:"},
      {"v", "v"},   {"w", "w"},   {"y", "j"},  {"z", "z"},   {"zh", "Z"},  {"pau", "_"},
  };
  auto it = m.find(p);
  return it == m.end() ? "_" : it->second;
}

struct FliteEngine::Impl {
  std::map<std::string, cst_voice*> voices;
  // One streaming hook per voice, set on its features once; `userdata` points at the synthesis
  // in progress (the engine's mutex is held throughout).
  std::map<std::string, cst_audio_streaming_info*> streaming;
};

namespace {

// Every phone with its end time and every word with its span, in seconds, capped at `total`.
void utterance_timing(cst_utterance* u, double total, std::vector<PhonemeTiming>& phones,
                      std::vector<WordTiming>& words) {
  double prev = 0;
  for (cst_item* s = relation_head(utt_relation(u, "Segment")); s; s = item_next(s)) {
    double end = std::min(total, static_cast<double>(item_feat_float(s, "end")));
    if (end > prev) phones.push_back({flite_phone_to_neutral(item_feat_string(s, "name")), prev, end});
    prev = std::max(prev, end);
  }
  // Words: the first and last segment of each word in the syllable structure.
  for (cst_item* wd = relation_head(utt_relation(u, "SylStructure")); wd; wd = item_next(wd)) {
    cst_item* first = item_daughter(item_daughter(wd));
    cst_item* last = item_last_daughter(item_last_daughter(wd));
    if (!first || !last) continue;
    cst_item* fs = item_as(first, "Segment");
    cst_item* ls = item_as(last, "Segment");
    double start = fs && item_prev(fs) ? item_feat_float(item_prev(fs), "end") : 0;
    double end = ls ? item_feat_float(ls, "end") : start;
    // The word as written: the token it came from ("Hello", punctuation split off by flite) when
    // the word is the token's first; flite's normalised word otherwise ("123" -> "one" "hundred" ...).
    std::string name = item_feat_string(wd, "name");
    cst_item* tw = item_as(wd, "Token");
    if (cst_item* tok = tw ? item_parent(tw) : nullptr; tok && item_daughter(tok) == tw)
      name = item_feat_string(tok, "name");
    words.push_back({name, std::min(total, start), std::min(total, end)});
  }
}

// Samples [from, to) with the words that start in them (every word from `from` on when it is the
// `last` span) and the phones that overlap them, clipped and timed from `from`, through the
// sentence's voice finisher (`last` releases what it holds).
Audio span_audio(const int16_t* samples, int rate, size_t from, size_t to, bool last, VoiceFinisher& finisher,
                 const std::vector<WordTiming>& all_words, const std::vector<PhonemeTiming>& all_phones) {
  const double a = static_cast<double>(from) / rate, b = static_cast<double>(to) / rate;
  auto clip = [&](double t) { return std::clamp(t, a, b) - a; };
  std::vector<WordTiming> words;
  for (const auto& w : all_words)
    if (w.start_s >= a && (last || w.start_s < b)) words.push_back({w.text, clip(w.start_s), clip(w.end_s)});
  std::vector<PhonemeTiming> phones;
  for (const auto& p : all_phones)
    if (p.end_s > a && p.start_s < b) phones.push_back({p.phoneme, clip(p.start_s), clip(p.end_s)});
  std::vector<int16_t> span(samples + from, samples + to);
  return finisher.push(span, words, phones, last);
}

// One synthesis in progress, for the streaming hook.
struct Streaming {
  const EngineRequest* req = nullptr;
  cst_utterance* utt = nullptr;
  Shaping shaping;
  std::unique_ptr<VoiceFinisher> finisher;  // made at the first span, once the rate is known
  bool timed = false;                       // words and phones read from the utterance
  std::vector<WordTiming> words;
  std::vector<PhonemeTiming> phones;
  size_t emitted = 0;  // samples handed on
  bool stopped = false;
};

// flite's audio streaming callback: samples [0, start + size) of `w` are final. Hands on the
// finished words once they hold enough audio and another word follows, cut at the quietest
// 10 ms within 30 ms after the word's end (flite's own timing is exact; a pause may follow). The
// voice finisher streams across the cut, so it need not fall in a pause.
int on_stream(const cst_wave* w, int start, int size, int /*last*/, cst_audio_streaming_info* asi) {
  auto* st = static_cast<Streaming*>(asi->userdata);
  if (!st || !st->req || !st->req->on_chunk || st->stopped || !st->utt || w->sample_rate <= 0)
    return CST_AUDIO_STREAM_CONT;
  const int rate = w->sample_rate;
  const size_t avail = static_cast<size_t>(start + size);
  if (!st->timed) {
    // Durations are fixed before the waveform is made, so the phones are known already.
    utterance_timing(st->utt, 1e9, st->phones, st->words);
    st->timed = true;
  }
  const size_t slack = static_cast<size_t>(rate * 3 / 100), win = static_cast<size_t>(rate / 100);
  const double min_s = st->emitted == 0 ? st->req->first_chunk_s : st->req->chunk_s;
  size_t cut = 0;
  for (size_t i = 0; i + 1 < st->words.size(); ++i) {
    size_t end = static_cast<size_t>(st->words[i].end_s * rate);
    size_t next = static_cast<size_t>(st->words[i + 1].start_s * rate);
    if (end + slack + win > avail || end <= st->emitted || next <= st->emitted) continue;
    if (static_cast<double>(end - st->emitted) / rate < min_s) continue;
    cut = end;
  }
  if (cut == 0) return CST_AUDIO_STREAM_CONT;
  double best = -1;
  size_t at_best = cut;
  for (size_t at = cut; at + win <= cut + slack + win && at + win <= avail; at += win / 2) {
    double e = 0;
    for (size_t i = at; i < at + win; ++i) e += static_cast<double>(w->samples[i]) * w->samples[i];
    if (best < 0 || e < best) best = e, at_best = at + win / 2;
  }
  if (best < 0) return CST_AUDIO_STREAM_CONT;
  // The next word must still start in what follows.
  for (size_t i = 0; i + 1 < st->words.size(); ++i) {
    size_t end = static_cast<size_t>(st->words[i].end_s * rate);
    if (end == cut) at_best = std::min(at_best, static_cast<size_t>(st->words[i + 1].start_s * rate));
  }
  if (at_best <= st->emitted) return CST_AUDIO_STREAM_CONT;
  if (!st->finisher) st->finisher = std::make_unique<VoiceFinisher>(rate, st->shaping);
  Audio chunk =
      span_audio(w->samples, rate, st->emitted, at_best, false, *st->finisher, st->words, st->phones);
  chunk.continues = true;
  st->emitted = at_best;
  if (!st->req->on_chunk(std::move(chunk))) {
    st->stopped = true;
    return CST_AUDIO_STREAM_STOP;
  }
  return CST_AUDIO_STREAM_CONT;
}

}  // namespace

Result<std::shared_ptr<FliteEngine>> FliteEngine::create() {
  flite_init();
  auto impl = std::make_unique<Impl>();
  impl->voices["rms"] = register_cmu_us_rms(nullptr);
  impl->voices["awb"] = register_cmu_us_awb(nullptr);
  impl->voices["slt"] = register_cmu_us_slt(nullptr);
  impl->voices["kal16"] = register_cmu_us_kal16(nullptr);
  for (const auto& [name, v] : impl->voices) {
    if (!v) return Status::Unavailable("flite voice " + name + " could not be loaded");
    cst_audio_streaming_info* asi = new_audio_streaming_info();
    asi->asc = &on_stream;
    asi->userdata = nullptr;
    feat_set(v->features, "streaming_info", audio_streaming_info_val(asi));
    impl->streaming[name] = asi;
  }
  return std::shared_ptr<FliteEngine>(new FliteEngine(std::move(impl)));
}

FliteEngine::FliteEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FliteEngine::~FliteEngine() = default;  // registered voices live as long as the process

Result<EngineResult> FliteEngine::synthesize(const EngineRequest& req) {
  const NativeVoice* nv = nullptr;
  for (const auto& v : voices())
    if (req.engine_voice == v.name) nv = &v;
  auto it = impl_->voices.find(req.engine_voice);
  if (!nv || it == impl_->voices.end())
    return Status::Internal("flite has no voice '" + req.engine_voice + "'");
  cst_voice* voice = it->second;
  Shaping shaping = shaping_for(req.voice, *nv);
  // Set on every request: features persist on the shared voice.
  feat_set_float(voice->features, "duration_stretch", static_cast<float>(1 / shaping.engine_rate));
  feat_set_float(voice->features, "f0_shift", static_cast<float>(shaping.engine_f0));

  // flite_synth_text, with the utterance known to the streaming hook.
  Streaming st;
  st.req = &req;
  st.shaping = shaping;
  cst_audio_streaming_info* asi = impl_->streaming[req.engine_voice];
  cst_utterance* u = new_utterance();
  st.utt = u;
  utt_set_input_text(u, req.text.c_str());
  utt_init(u, voice);
  asi->userdata = &st;
  cst_utterance* done = utt_synth(u);
  asi->userdata = nullptr;
  EngineResult out;
  if (st.stopped) {
    delete_utterance(u);
    out.truncated = true;  // the reader went away: nothing more is wanted
    return out;
  }
  if (!done) {
    delete_utterance(u);
    return Status::Internal("flite failed to synthesize");
  }
  cst_wave* w = utt_wave(u);
  if (!w || w->sample_rate <= 0) {
    delete_utterance(u);
    return Status::Internal("flite produced no audio");
  }
  const int rate = w->sample_rate;
  const size_t n = static_cast<size_t>(w->num_samples);
  const double total = static_cast<double>(n) / rate;
  std::vector<PhonemeTiming> phones;
  std::vector<WordTiming> words;
  utterance_timing(u, total, phones, words);
  if (req.max_samples > 0 && static_cast<int64_t>(total * kEngineSampleRate) > req.max_samples) {
    delete_utterance(u);
    out.truncated = true;
    return out;
  }
  size_t from = std::min(st.emitted, n);
  if (!st.finisher) st.finisher = std::make_unique<VoiceFinisher>(rate, shaping);
  out.audio = span_audio(w->samples, rate, from, n, true, *st.finisher, words, phones);
  delete_utterance(u);
  return out;
}

}  // namespace imago::speech

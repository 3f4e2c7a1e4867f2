#include "speech/flite_engine.h"

#include <flite/flite.h>

#include <algorithm>
#include <map>

extern "C" {
cst_voice* register_cmu_us_rms(const char* voxdir);
cst_voice* register_cmu_us_awb(const char* voxdir);
cst_voice* register_cmu_us_slt(const char* voxdir);
cst_voice* register_cmu_us_kal16(const char* voxdir);
}

namespace imago::speech {

namespace {
NativeVoice native(const char* name, double f0, bool female, bool engine_pitch) {
  NativeVoice v{name, {}, engine_pitch};
  v.natural.pitch_base_hz = f0;
  v.natural.pitch_range_hz = 0;
  v.natural.formant_scale = female ? 1.15 : 1.0;
  v.natural.rate_wpm = 175;
  v.natural.female = female;
  return v;
}
}  // namespace

const std::vector<NativeVoice>& FliteEngine::voices() {
  static const std::vector<NativeVoice> v = {native("rms", 102, false, false),
                                             native("awb", 121, false, true), native("slt", 168, true, true),
                                             native("kal16", 91, false, true)};
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
};

Result<std::shared_ptr<FliteEngine>> FliteEngine::create() {
  flite_init();
  auto impl = std::make_unique<Impl>();
  impl->voices["rms"] = register_cmu_us_rms(nullptr);
  impl->voices["awb"] = register_cmu_us_awb(nullptr);
  impl->voices["slt"] = register_cmu_us_slt(nullptr);
  impl->voices["kal16"] = register_cmu_us_kal16(nullptr);
  for (const auto& [name, v] : impl->voices)
    if (!v) return Status::Unavailable("flite voice " + name + " could not be loaded");
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

  cst_utterance* u = flite_synth_text(req.text.c_str(), voice);
  if (!u) return Status::Internal("flite failed to synthesize");
  cst_wave* w = utt_wave(u);
  if (!w || w->sample_rate <= 0) {
    delete_utterance(u);
    return Status::Internal("flite produced no audio");
  }
  std::vector<int16_t> samples(w->samples, w->samples + w->num_samples);
  const int rate = w->sample_rate;
  const double total = static_cast<double>(samples.size()) / rate;

  std::vector<PhonemeTiming> phones;
  double prev = 0;
  for (cst_item* s = relation_head(utt_relation(u, "Segment")); s; s = item_next(s)) {
    double end = std::min(total, static_cast<double>(item_feat_float(s, "end")));
    if (end > prev) phones.push_back({flite_phone_to_neutral(item_feat_string(s, "name")), prev, end});
    prev = std::max(prev, end);
  }
  // Words: the first and last segment of each word in the syllable structure.
  std::vector<WordTiming> words;
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
  delete_utterance(u);

  EngineResult out;
  if (req.max_samples > 0 && static_cast<int64_t>(total * kEngineSampleRate) > req.max_samples) {
    out.truncated = true;
    return out;
  }
  out.audio = finish_voice(samples, rate, shaping, std::move(words), std::move(phones));
  return out;
}

}  // namespace imago::speech

#include "speech/espeak_engine.h"

#include <espeak-ng/espeak_ng.h>
#include <espeak-ng/speak_lib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "util/crypto.h"

namespace imago::speech {
namespace fs = std::filesystem;

namespace {

// Where Debian (and a source build) put espeak-ng's data.
std::string find_system_data() {
  if (const char* env = std::getenv("ESPEAK_DATA_PATH")) {
    fs::path p(env);
    if (fs::is_directory(p / "espeak-ng-data")) return (p / "espeak-ng-data").string();
    if (fs::is_directory(p / "voices")) return p.string();
  }
  for (const char* c :
       {"/usr/lib/x86_64-linux-gnu/espeak-ng-data", "/usr/lib/aarch64-linux-gnu/espeak-ng-data",
        "/usr/share/espeak-ng-data", "/usr/local/share/espeak-ng-data", "/usr/lib/espeak-ng-data"}) {
    if (fs::is_directory(fs::path(c) / "voices")) return c;
  }
  return {};
}

// State of the synthesis in progress; espeak's callback is a plain function pointer.
struct Collector {
  std::vector<int16_t> samples;
  struct Ev {
    espeak_EVENT_TYPE type;
    int text_position;
    int length;
    int64_t sample;
    std::string phoneme;
  };
  std::vector<Ev> events;
  int64_t max_samples = 0;
  bool truncated = false;
};
Collector* g_collector = nullptr;  // guarded by the caller's serialization of Engine

int synth_callback(short* wav, int n, espeak_EVENT* events) {
  Collector* c = g_collector;
  if (!c) return 1;
  for (espeak_EVENT* e = events; e && e->type != espeakEVENT_LIST_TERMINATED; ++e) {
    Collector::Ev ev{e->type, e->text_position, e->length, 0, {}};
    // audio_position is in ms from the start of this espeak_Synth call.
    ev.sample = static_cast<int64_t>(e->audio_position) * EspeakEngine::kSampleRate / 1000;
    if (e->type == espeakEVENT_PHONEME) ev.phoneme.assign(e->id.string, strnlen(e->id.string, 8));
    if (e->type == espeakEVENT_WORD || e->type == espeakEVENT_PHONEME || e->type == espeakEVENT_END ||
        e->type == espeakEVENT_MSG_TERMINATED || e->type == espeakEVENT_SENTENCE) {
      c->events.push_back(std::move(ev));
    }
  }
  if (wav && n > 0) c->samples.insert(c->samples.end(), wav, wav + n);
  if (c->max_samples > 0 && static_cast<int64_t>(c->samples.size()) > c->max_samples) {
    c->truncated = true;
    return 1;  // abort synthesis
  }
  return 0;
}

// Byte offset of the `cp`-th code point (0-based) of UTF-8 `s`.
size_t byte_offset_of_char(const std::string& s, int cp) {
  size_t i = 0;
  int n = 0;
  while (i < s.size() && n < cp) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    size_t len = ch < 0x80 ? 1 : (ch >> 5) == 6 ? 2 : (ch >> 4) == 14 ? 3 : (ch >> 3) == 30 ? 4 : 1;
    i += len;
    ++n;
  }
  return std::min(i, s.size());
}

int clampi(double v, int lo, int hi) {
  return std::clamp(static_cast<int>(std::lround(v)), lo, hi);
}

// A dark tilt raises the low voiced harmonics above 100% (the tone curve only touches voiced
// sound); lower the overall volume by as much so nothing clips, which keeps the balance between
// voiced and noise sounds that the tilt set.
int volume_for(const VoiceDefinition& v) {
  double t = std::clamp(v.tone_tilt, -1.0, 1.0);
  double low = std::min(2.55, std::pow(2.0, t * 1.6 * -2));
  return clampi(100 * std::min(1.0, 1.0 / low), 30, 100);
}

}  // namespace

std::string render_variant_file(const VoiceDefinition& v) {
  std::ostringstream o;
  o << "language variant\n";
  o << "name imago\n";
  o << "gender " << (v.female ? "female" : "male") << "\n";
  int base = clampi(v.pitch_base_hz, 20, 500);
  int top = clampi(v.pitch_base_hz + v.pitch_range_hz, base + 1, 900);
  o << "pitch " << base << " " << top << "\n";
  // Formant 0 is espeak's low "voicing" resonance; 1..5 are the vocal tract formants that a
  // longer/shorter tract moves together. 6..8 follow so the top of the spectrum stays coherent.
  for (int f = 1; f <= 8; ++f)
    o << "formant " << f << " " << clampi(100 * v.formant_scale, 30, 300) << " 100 100\n";
  // "tone": amplitude (%) of the spectrum at up to four frequencies, linearly interpolated by
  // espeak's wave generator. A tilt rotates it around 1.2 kHz.
  double t = std::clamp(v.tone_tilt, -1.0, 1.0);
  auto amp = [&](double octaves_from_pivot) {
    return clampi(100 * std::pow(2.0, t * 1.6 * octaves_from_pivot), 5, 255);
  };
  o << "tone 300 " << amp(-2) << " 1200 " << amp(0) << " 2400 " << amp(1) << " 4800 " << amp(2) << "\n";
  o << "flutter " << v.flutter << "\n";
  if (v.roughness > 0) o << "roughness " << v.roughness << "\n";
  return o.str();
}

namespace {
Status prepare_data_dir(const std::string& scratch_dir) {
  std::string sys = find_system_data();
  if (sys.empty())
    return Status::Internal("espeak-ng-data not found (install espeak-ng-data or set ESPEAK_DATA_PATH)");
  std::error_code ec;
  fs::path root = fs::path(scratch_dir) / "espeak-ng-data";
  fs::create_directories(root / "voices" / "!v", ec);
  if (ec) return Status::Internal("cannot create " + root.string() + ": " + ec.message());
  // Mirror the system data with symlinks; voices/!v is a real directory so that generated
  // variant files can sit beside the stock ones.
  for (const auto& entry : fs::directory_iterator(sys)) {
    fs::path dst = root / entry.path().filename();
    if (entry.path().filename() == "voices") continue;
    if (!fs::exists(fs::symlink_status(dst))) fs::create_symlink(entry.path(), dst, ec);
  }
  for (const auto& entry : fs::directory_iterator(fs::path(sys) / "voices")) {
    if (entry.path().filename() == "!v") continue;
    fs::path dst = root / "voices" / entry.path().filename();
    if (!fs::exists(fs::symlink_status(dst))) fs::create_symlink(entry.path(), dst, ec);
  }
  for (const auto& entry : fs::directory_iterator(fs::path(sys) / "voices" / "!v")) {
    fs::path dst = root / "voices" / "!v" / entry.path().filename();
    if (!fs::exists(fs::symlink_status(dst))) fs::create_symlink(entry.path(), dst, ec);
  }
  return Status::Ok();
}
}  // namespace

Result<std::shared_ptr<EspeakEngine>> EspeakEngine::shared(const std::string& scratch_dir) {
  static std::mutex mu;
  static std::weak_ptr<EspeakEngine> current;
  static bool initialized = false;
  std::lock_guard lock(mu);
  if (auto e = current.lock()) return e;

  std::shared_ptr<EspeakEngine> e(new EspeakEngine());
  e->scratch_ = scratch_dir;
  if (e->scratch_.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "imago-speech-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) return Status::Internal("cannot create a scratch directory for espeak-ng");
    e->scratch_ = tmpl;
    e->owns_scratch_ = true;
  }
  Status st = prepare_data_dir(e->scratch_);
  if (!st.ok()) return st;
  if (!initialized) {
    int rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 100, e->scratch_.c_str(),
                                 espeakINITIALIZE_PHONEME_EVENTS | espeakINITIALIZE_DONT_EXIT);
    if (rate != kSampleRate) {
      return Status::Internal("espeak_Initialize failed (returned " + std::to_string(rate) + ")");
    }
    espeak_SetSynthCallback(&synth_callback);
    initialized = true;
  } else {
    // espeak-ng stays initialized for the life of the process (it cannot be initialized twice);
    // a later engine points it at its own data directory.
    espeak_ng_InitializePath(e->scratch_.c_str());
  }
  current = e;
  return e;
}

EspeakEngine::~EspeakEngine() {
  std::error_code ec;
  if (owns_scratch_) {
    fs::remove_all(scratch_, ec);
  } else {
    for (const auto& p : written_variants_) fs::remove(p, ec);
  }
}

Result<std::string> EspeakEngine::variant_for(const VoiceDefinition& v) {
  // The file name is a hash of the content: espeak may cache a variant by name, so a name never
  // changes meaning; identical definitions reuse their file.
  std::string text = render_variant_file(v);
  std::string name = "im" + sha256_hex(text).substr(0, 14);
  fs::path p = fs::path(scratch_) / "espeak-ng-data" / "voices" / "!v" / name;
  if (!fs::exists(p)) {
    std::ofstream f(p, std::ios::binary);
    f << text;
    if (!f) return Status::Internal("cannot write espeak variant " + p.string());
    written_variants_.push_back(p.string());
  }
  return name;
}

bool EspeakEngine::select_voice(const std::string& name) {
  if (name == selected_voice_) return true;
  selected_voice_.clear();  // a failed selection may leave espeak-ng's voice half-loaded
  if (espeak_SetVoiceByName(name.c_str()) != EE_OK) return false;
  selected_voice_ = name;
  return true;
}

bool EspeakEngine::has_voice(const std::string& espeak_voice) {
  return select_voice(espeak_voice);
}

Result<std::string> EspeakEngine::transcribe_ipa(const std::string& text, const std::string& espeak_voice) {
  if (!select_voice(espeak_voice)) {
    return Status::Internal("espeak-ng cannot load voice " + espeak_voice);
  }
  phonemised_ = true;
  std::string out;
  const void* p = text.c_str();
  // Returns one clause per call and advances p (to null at the end of the text).
  while (p) {
    const char* ph = espeak_TextToPhonemes(&p, espeakCHARS_UTF8, espeakPHONEMES_IPA);
    if (!ph) break;
    if (!out.empty() && *ph) out += ' ';
    out += ph;
  }
  return out;
}

Result<std::vector<std::string>> EspeakEngine::phonemes(const std::string& text,
                                                        const std::string& espeak_voice) {
  if (!select_voice(espeak_voice)) {
    return Status::Internal("espeak-ng cannot load voice " + espeak_voice);
  }
  phonemised_ = true;
  std::vector<std::string> out;
  const void* p = text.c_str();
  // Mnemonics separated by '|' (bits 8-23 of phonememode), words by spaces.
  while (p) {
    const char* ph = espeak_TextToPhonemes(&p, espeakCHARS_UTF8, '|' << 8);
    if (!ph) break;
    std::string cur;
    for (const char* c = ph;; ++c) {
      if (*c == '|' || *c == ' ' || *c == '\0') {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
        if (*c == '\0') break;
      } else {
        cur.push_back(*c);
      }
    }
  }
  return out;
}

Result<EngineResult> EspeakEngine::synthesize(const EngineRequest& req) {
  if (phonemised_) {
    // After espeak_TextToPhonemes the next espeak_Synth loses its first WORD event (measured:
    // "Grüße aus München." came back as two words); a throwaway synthesis of a pause resets that.
    phonemised_ = false;
    espeak_Synth(".", 2, 0, POS_CHARACTER, 0, espeakCHARS_UTF8, nullptr, nullptr);
    espeak_Synchronize();
  }
  auto variant = variant_for(req.voice);
  if (!variant.ok()) return variant.status();
  std::string full = req.espeak_voice + "+" + *variant;
  if (!select_voice(full)) {
    return Status::Internal("espeak-ng cannot load voice " + full);
  }
  // Parameters persist across calls and voice changes: set every one on every request.
  espeak_SetParameter(espeakRATE, std::clamp(req.voice.rate_wpm, espeakRATE_MINIMUM, espeakRATE_MAXIMUM), 0);
  espeak_SetParameter(espeakVOLUME, volume_for(req.voice), 0);
  espeak_SetParameter(espeakPITCH, 50, 0);  // 50 keeps the variant's own pitch base
  espeak_SetParameter(espeakRANGE, 50, 0);
  espeak_SetParameter(espeakPUNCTUATION, espeakPUNCT_NONE, 0);
  espeak_SetParameter(espeakCAPITALS, 0, 0);
  espeak_SetParameter(espeakWORDGAP, 0, 0);
  espeak_SetParameter(espeakINTONATION, 0, 0);

  Collector col;
  col.max_samples = req.max_samples;
  g_collector = &col;
  unsigned int uid = 0;
  espeak_ERROR err = espeak_Synth(req.text.c_str(), req.text.size() + 1, 0, POS_CHARACTER, 0,
                                  espeakCHARS_UTF8, &uid, nullptr);
  espeak_Synchronize();
  g_collector = nullptr;
  if (err != EE_OK && !col.truncated) return Status::Internal("espeak_Synth failed: " + std::to_string(err));

  EngineResult out;
  out.truncated = col.truncated;
  Audio& a = out.audio;
  a.sample_rate = kSampleRate;
  a.samples = std::move(col.samples);
  const double total_s = a.duration_s();
  auto sec = [&](int64_t sample) { return std::min(total_s, static_cast<double>(sample) / kSampleRate); };

  // Each event marks a start; a word or phoneme ends where the next one of its kind starts, or
  // where the clause/message ends.
  for (size_t i = 0; i < col.events.size(); ++i) {
    const auto& e = col.events[i];
    if (e.type == espeakEVENT_PHONEME) {
      if (e.phoneme.empty()) continue;
      double end = total_s;
      for (size_t j = i + 1; j < col.events.size(); ++j) {
        auto t = col.events[j].type;
        if (t == espeakEVENT_PHONEME || t == espeakEVENT_END || t == espeakEVENT_MSG_TERMINATED) {
          end = sec(col.events[j].sample);
          break;
        }
      }
      double start = sec(e.sample);
      if (end > start) a.phonemes.push_back({e.phoneme, start, end});
    } else if (e.type == espeakEVENT_WORD) {
      double end = total_s;
      // The word ends with its last phoneme: the next word, clause end or message end.
      for (size_t j = i + 1; j < col.events.size(); ++j) {
        auto t = col.events[j].type;
        if (t == espeakEVENT_WORD || t == espeakEVENT_END || t == espeakEVENT_MSG_TERMINATED) {
          end = sec(col.events[j].sample);
          break;
        }
      }
      // text_position is 1-based and counts characters.
      size_t b = byte_offset_of_char(req.text, std::max(0, e.text_position - 1));
      size_t eb = byte_offset_of_char(req.text, std::max(0, e.text_position - 1 + e.length));
      std::string word = req.text.substr(b, eb > b ? eb - b : 0);
      // espeak-ng sometimes reports a zero-length "word" at a clause boundary; it is not a word.
      while (!word.empty() && std::isspace(static_cast<unsigned char>(word.back()))) word.pop_back();
      while (!word.empty() && std::isspace(static_cast<unsigned char>(word.front()))) word.erase(0, 1);
      if (word.empty()) continue;
      a.words.push_back({word, sec(e.sample), std::max(sec(e.sample), end)});
    }
  }
  return out;
}

}  // namespace imago::speech

#include "speech/phone_recognizer.h"

#include <pocketsphinx.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <mutex>

#include "speech/dsp.h"
#include "speech/flite_engine.h"

namespace imago::speech {

namespace {

constexpr int kRate = 16000;
constexpr double kFrameS = 0.01;  // PocketSphinx's frame rate: 100 per second

// Model loading goes through sphinxbase's global logging and configuration code.
std::mutex& create_mutex() {
  static std::mutex mu;
  return mu;
}

// A constant low noise floor (about -60 dBFS, deterministic): PocketSphinx's noise estimation
// and cepstral normalisation break down on digital silence (synthesized or gated audio), as for
// the word recogniser (conversation/recognizer.cpp).
void dither(std::vector<int16_t>& s) {
  uint32_t state = 0x9E3779B9u;
  for (auto& x : s) {
    int noise = 0;
    for (int k = 0; k < 4; ++k) {
      state = state * 1664525u + 1013904223u;
      noise += static_cast<int>((state >> 16) % 104) - 52;
    }
    x = static_cast<int16_t>(std::clamp(static_cast<int>(x) + noise, -32768, 32767));
  }
}

// The phone decoder often takes a bilabial stop for a labiodental fricative (p, b heard as f, v:
// both are made at the lips and end in a burst of noise), and a viewer sees the difference: lips
// shut or not. What tells them apart is the stop's closure: silence, where a fricative is noise
// all through. An f or v whose quietest frame (within 20 ms of it) is kStopDipDb under the
// loudest within 150 ms is a stop: f becomes p, v becomes b. (On a 23 s RHVoice passage, the f
// and v heard where the engine spoke them dipped 26-29 dB, the stops heard as f or v 34-58 dB.
// On noisy recordings the dip is shallower and the phone stays as heard.)
constexpr double kStopDipDb = 32;

void relabel_stops_heard_as_fricatives(std::vector<PhonemeTiming>& phones, const std::vector<double>& db) {
  if (db.empty()) return;
  auto frame = [&](double t) {
    return std::clamp(static_cast<long>(t / kFrameS), 0L, static_cast<long>(db.size()) - 1);
  };
  auto extreme = [&](double from, double to, bool lowest) {
    double v = lowest ? 1e9 : -1e9;
    for (long f = frame(from); f <= frame(to); ++f)
      v = lowest ? std::min(v, db[size_t(f)]) : std::max(v, db[size_t(f)]);
    return v;
  };
  for (auto& p : phones) {
    if (p.phoneme != "f" && p.phoneme != "v") continue;
    const double dip =
        extreme(p.start_s - 0.02, p.end_s + 0.02, true) - extreme(p.start_s - 0.15, p.end_s + 0.15, false);
    if (dip <= -kStopDipDb) p.phoneme = p.phoneme == "f" ? "p" : "b";
  }
}

// The decoder also often starts a p, b or m while the vowel before it is still sounding (up to
// 90 ms early), and lips shut on a loud vowel look wrong (and follow the sound less: on one
// portrait, r 0.60 against 0.63 with the start moved). A closure starts where the sound drops: a
// bilabial's start moves forward to the first of its frames within kClosureOnsetDb of its quietest
// (the phone before takes the frames in between); its end stays (a late end still has the lips
// shut over a quiet closure), and it keeps two frames at least.
constexpr double kClosureOnsetDb = 10;

void start_bilabials_where_the_sound_drops(std::vector<PhonemeTiming>& phones,
                                           const std::vector<double>& db) {
  if (db.empty()) return;
  const long last = static_cast<long>(db.size()) - 1;
  for (size_t i = 0; i < phones.size(); ++i) {
    auto& p = phones[i];
    if (p.phoneme != "p" && p.phoneme != "b" && p.phoneme != "m") continue;
    const long f0 = std::clamp(static_cast<long>(p.start_s / kFrameS + 1e-6), 0L, last),
               f1 = std::clamp(static_cast<long>(p.end_s / kFrameS - 1e-6), 0L, last);
    if (f1 - f0 < 2) continue;
    long quiet = f0;
    for (long f = f0; f <= f1; ++f)
      if (db[size_t(f)] < db[size_t(quiet)]) quiet = f;
    long onset = quiet;
    while (onset > f0 && db[size_t(onset - 1)] <= db[size_t(quiet)] + kClosureOnsetDb) --onset;
    onset = std::min(onset, f1 - 1);
    const double start = onset * kFrameS;
    if (start <= p.start_s) continue;
    if (i > 0) phones[i - 1].end_s = start;
    p.start_s = start;
  }
}

}  // namespace

std::string cmu_phone_to_neutral(std::string_view cmu_phone) {
  std::string lower;
  for (char c : cmu_phone) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return flite_phone_to_neutral(lower);  // "sil" and the "+...+" fillers are not in it: "_"
}

struct PhoneRecognizer::Impl {
  std::mutex mu;
  cmd_ln_t* config = nullptr;
  ps_decoder_t* decoder = nullptr;
  ~Impl() {
    if (decoder) {
      // PocketSphinx 0.8's allphone search keeps its last utterance's segment list and ps_free()
      // does not free it; the next segment iteration does. An empty utterance's iteration releases
      // it (found with LeakSanitizer).
      if (ps_start_utt(decoder) >= 0 && ps_end_utt(decoder) >= 0) {
        if (ps_seg_t* seg = ps_seg_iter(decoder)) ps_seg_free(seg);
      }
      ps_free(decoder);
    }
    if (config) cmd_ln_free_r(config);
  }
};

PhoneRecognizer::PhoneRecognizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PhoneRecognizer::~PhoneRecognizer() = default;

Result<std::unique_ptr<PhoneRecognizer>> PhoneRecognizer::create(const PhoneRecognizerOptions& options) {
  namespace fs = std::filesystem;
  const std::string hmm = options.model_dir + "/en-us";
  const std::string lm = options.model_dir + "/en-us-phone.lm.bin";
  for (const auto& p : {hmm, lm}) {
    if (!fs::exists(p)) {
      return Status::Unavailable("phone recognition model missing: " + p +
                                 " (Debian package pocketsphinx-en-us)");
    }
  }
  std::lock_guard lock(create_mutex());
  auto impl = std::make_unique<Impl>();
  // Phone decoding as CMU recommends it, a language weight of 2 (the word decoder's 6.5
  // suppresses phones the model finds unlikely, such as the closures lip sync needs), with beams
  // of 1e-15: the same phones as CMU's 1e-20 on test sentences at less than half the CPU; 1e-10
  // costs less again but starts to miss closures.
  impl->config = cmd_ln_init(nullptr, ps_args(), TRUE, "-hmm", hmm.c_str(), "-allphone", lm.c_str(),
                             "-samprate", "16000", "-lw", "2.0", "-beam", "1e-15", "-pbeam", "1e-15",
                             "-backtrace", "no", "-logfn", "/dev/null", nullptr);
  if (!impl->config) return Status::Internal("pocketsphinx rejected its phone-decoding configuration");
  impl->decoder = ps_init(impl->config);
  if (!impl->decoder)
    return Status::Internal("pocketsphinx could not load its models from " + options.model_dir);
  return std::unique_ptr<PhoneRecognizer>(new PhoneRecognizer(std::move(impl)));
}

Result<std::vector<PhonemeTiming>> PhoneRecognizer::recognize(const std::vector<int16_t>& samples,
                                                              int sample_rate) {
  if (sample_rate < 8000 || sample_rate > 192000)
    return Status::Invalid("sample rate " + std::to_string(sample_rate) + " Hz is outside 8000..192000");
  std::vector<int16_t> pcm;
  if (sample_rate == kRate) {
    pcm = samples;
  } else {
    auto r = resample(samples, sample_rate, kRate, quality_for_steps(8));
    if (!r.ok()) return r.status();
    pcm = std::move(r).value();
  }
  std::vector<PhonemeTiming> out;
  if (pcm.empty()) return out;
  dither(pcm);

  std::lock_guard lock(impl_->mu);
  ps_decoder_t* ps = impl_->decoder;
  if (ps_start_utt(ps) < 0) return Status::Internal("pocketsphinx could not start an utterance");
  // The whole utterance at once, so cepstral normalisation is computed over all of it.
  if (ps_process_raw(ps, pcm.data(), pcm.size(), FALSE, TRUE) < 0) {
    ps_end_utt(ps);
    return Status::Internal("pocketsphinx failed to process audio");
  }
  if (ps_end_utt(ps) < 0) return Status::Internal("pocketsphinx could not end the utterance");
  bool any_speech = false;
  for (ps_seg_t* seg = ps_seg_iter(ps); seg; seg = ps_seg_next(seg)) {
    const char* name = ps_seg_word(seg);
    int sf = 0, ef = 0;
    ps_seg_frames(seg, &sf, &ef);
    if (!name || ef < sf) continue;
    PhonemeTiming p{cmu_phone_to_neutral(name), sf * kFrameS, (ef + 1) * kFrameS};
    any_speech |= p.phoneme != "_";
    // Adjacent pauses (silence next to a filler) become one.
    if (!out.empty() && p.phoneme == "_" && out.back().phoneme == "_" &&
        out.back().end_s >= p.start_s - 1e-9) {
      out.back().end_s = p.end_s;
      continue;
    }
    out.push_back(std::move(p));
  }
  if (!any_speech) out.clear();
  // The loudness of PocketSphinx's own 10 ms frames.
  const std::vector<double> db = frame_loudness_db(pcm, kRate / 100);
  relabel_stops_heard_as_fricatives(out, db);
  start_bilabials_where_the_sound_drops(out, db);
  double total = static_cast<double>(samples.size()) / sample_rate;
  for (auto& p : out) p.end_s = std::min(p.end_s, total);
  return out;
}

PhoneRecognizer* shared_phone_recognizer() {
  static std::unique_ptr<PhoneRecognizer> shared = [] {
    auto r = PhoneRecognizer::create();
    return r.ok() ? std::move(r).value() : nullptr;
  }();
  return shared.get();
}

bool add_recognized_phones(Audio& audio) {
  if (!audio.phonemes.empty() || audio.samples.empty()) return false;
  PhoneRecognizer* rec = shared_phone_recognizer();
  if (!rec) return false;
  auto phones = rec->recognize(audio.samples, audio.sample_rate);
  if (!phones.ok() || phones->empty()) return false;
  audio.phonemes = std::move(phones).value();
  return true;
}

}  // namespace imago::speech

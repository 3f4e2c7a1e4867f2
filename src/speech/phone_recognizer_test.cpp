// Phones recognised from synthesized speech with no text, against the phone timing the engine
// reported when it spoke (flite times every phone itself; RHVoice's are aligned to the audio;
// espeak-ng's are its own events).
#include "speech/phone_recognizer.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "speech/espeak_engine.h"
#include "speech/test_speech.h"
#include "speech/text_phones.h"

namespace imago::speech {
namespace {

const char* kSentence = "Bob bought a big map, but Pam may bring more maps. Please be prompt!";

std::string bare(std::string_view p) {
  std::string s;
  for (char c : p)
    if (c != '\'' && c != ',' && c != '%' && c != '=' && c != ':' && c != ';') s.push_back(c);
  return s;
}
bool is_bilabial(std::string_view p) {
  std::string s = bare(p);
  return s == "p" || s == "b" || s == "m";
}
// Vowels the jaw opens widest for (the avatar's "aa" and "oh" classes).
bool is_open_vowel(std::string_view p) {
  std::string s = bare(p);
  return !s.empty() && (s[0] == 'a' || s[0] == 'A' || s[0] == 'V' || s[0] == 'O' || s[0] == '0');
}

// The sentence as each English engine speaks it: RHVoice (M1), flite (M2), espeak-ng (direct).
Audio speak(const std::string& engine) {
  if (engine == "espeak-ng") {
    auto e = EspeakEngine::shared();
    if (!e.ok()) throw std::runtime_error(e.status().message());
    std::lock_guard lock((*e)->mutex());
    EngineRequest req;
    req.text = kSentence;
    req.espeak_voice = "en-us";
    auto r = (*e)->synthesize(req);
    if (!r.ok()) throw std::runtime_error(r.status().message());
    return r->audio;
  }
  VoiceSettings v;
  v.voice = engine == "rhvoice" ? "M1" : "M2";
  auto a = test_service().synthesize(kSentence, v);
  if (!a.ok()) throw std::runtime_error(a.status().message());
  return *a;
}

// Fraction of the reference phones matching `want` that have a recognised phone matching `got`
// overlapping them widened by `slack_s` on each side.
double found(const std::vector<PhonemeTiming>& ref, const std::vector<PhonemeTiming>& heard,
             bool (*want)(std::string_view), bool (*got)(std::string_view), double slack_s, int* count) {
  int n = 0, hit = 0;
  for (const auto& r : ref) {
    if (!want(r.phoneme)) continue;
    ++n;
    for (const auto& h : heard) {
      if (got(h.phoneme) && h.end_s > r.start_s - slack_s && h.start_s < r.end_s + slack_s) {
        ++hit;
        break;
      }
    }
  }
  *count = n;
  return n ? double(hit) / n : 0;
}

TEST(PhoneRecognizer, MapsCmuPhonesOntoTheNeutralSet) {
  EXPECT_EQ(cmu_phone_to_neutral("AA"), "A:");
  EXPECT_EQ(cmu_phone_to_neutral("P"), "p");
  EXPECT_EQ(cmu_phone_to_neutral("CH"), "tS");
  EXPECT_EQ(cmu_phone_to_neutral("UW"), "u:");
  EXPECT_EQ(cmu_phone_to_neutral("SIL"), "_");
  EXPECT_EQ(cmu_phone_to_neutral("+NSN+"), "_");
  EXPECT_EQ(cmu_phone_to_neutral("??"), "_");
}

TEST(PhoneRecognizer, RefusesBadRatesAndHearsNothingInSilence) {
  auto rec = PhoneRecognizer::create();
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  EXPECT_EQ((*rec)->recognize({1, 2, 3}, 100).status().code(), Code::kInvalidArgument);
  auto empty = (*rec)->recognize({}, 16000);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto silence = (*rec)->recognize(std::vector<int16_t>(16000, 0), 16000);
  ASSERT_TRUE(silence.ok());
  EXPECT_TRUE(silence->empty()) << silence->size() << " phones in silence";
  EXPECT_FALSE(PhoneRecognizer::create({.model_dir = "/nonexistent"}).ok());
}

TEST(PhoneRecognizer, FindsClosuresAndOpenVowelsWhereEachEngineSpokeThem) {
  auto rec = PhoneRecognizer::create();
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  for (const std::string engine : {"rhvoice", "flite", "espeak-ng"}) {
    Audio a = speak(engine);
    ASSERT_FALSE(a.phonemes.empty()) << engine;
    auto heard = (*rec)->recognize(a.samples, a.sample_rate);
    ASSERT_TRUE(heard.ok()) << heard.status().message();
    ASSERT_FALSE(heard->empty()) << engine;
    // In order, inside the audio, no overlaps.
    for (size_t i = 0; i < heard->size(); ++i) {
      EXPECT_LT((*heard)[i].start_s, (*heard)[i].end_s);
      EXPECT_LE((*heard)[i].end_s, a.duration_s() + 1e-9);
      if (i) {
        EXPECT_GE((*heard)[i].start_s, (*heard)[i - 1].end_s - 1e-9);
      }
    }
    int n_closures = 0, n_open = 0;
    // Within one video frame (40 ms) of where the engine put them.
    double closures = found(a.phonemes, *heard, is_bilabial, is_bilabial, 0.04, &n_closures);
    double open = found(a.phonemes, *heard, is_open_vowel, is_vowel_phone, 0.04, &n_open);
    std::string text;
    for (const auto& p : *heard) text += p.phoneme + " ";
    std::printf("%s: p/b/m found %.2f of %d, open vowels heard as vowels %.2f of %d\n  heard: %s\n",
                engine.c_str(), closures, n_closures, open, n_open, text.c_str());
    EXPECT_GE(n_closures, 12) << engine;
    // Stops the decoder hears as f or v are told apart by their closure's silence: RHVoice and
    // flite read 0.79 and 0.85 without that, 0.95 with it; with each closure then starting where
    // the sound drops, RHVoice 0.89 (one b heard 60 ms after where RHVoice placed it is now
    // heard 100 ms after). espeak-ng's misses are other consonants.
    EXPECT_GE(closures, engine == "espeak-ng" ? 0.6 : 0.85) << engine;
    EXPECT_GE(open, 0.75) << engine;
  }
}

}  // namespace
}  // namespace imago::speech

// Phones placed inside word times (RHVoice's words, espeak-ng's phones), on synthetic audio.
#include "speech/text_phones.h"

#include <gtest/gtest.h>

#include <cmath>

namespace imago::speech {
namespace {

constexpr int kRate = 16000;

// Silence, then a tone of `loud_s`, then silence, each given in seconds.
std::vector<int16_t> burst(double quiet1, double loud, double quiet2) {
  std::vector<int16_t> s;
  auto add = [&](double secs, double amp) {
    for (int i = 0; i < static_cast<int>(secs * kRate); ++i)
      s.push_back(static_cast<int16_t>(amp * std::sin(2 * M_PI * 200 * s.size() / kRate)));
  };
  add(quiet1, 30);
  add(loud, 12000);
  add(quiet2, 30);
  return s;
}

TEST(TextPhones, EvenPlacementWeightsVowelsAndFillsGapsWithPauses) {
  std::vector<WordTiming> words = {{"map", 0.1, 0.4}};
  auto p = place_phones_in_words(words, {{"m", "'a", "p"}}, 0.5);
  ASSERT_EQ(p.size(), 5u);  // _ m a p _
  EXPECT_EQ(p[0].phoneme, "_");
  EXPECT_NEAR(p[1].end_s - p[1].start_s, 0.075, 1e-9);
  EXPECT_NEAR(p[2].end_s - p[2].start_s, 0.15, 1e-9);
  EXPECT_EQ(p[4].phoneme, "_");
  EXPECT_DOUBLE_EQ(p[4].end_s, 0.5);
}

TEST(TextPhones, AlignmentPutsTheVowelOnTheLoudPartAndTheClosuresAroundIt) {
  // "map": closure 0.1-0.2, vowel 0.2-0.35, closure 0.35-0.45.
  auto audio = burst(0.2, 0.15, 0.15);
  std::vector<WordTiming> words = {{"map", 0.1, 0.45}};
  auto p = align_phones_in_words(words, {{"m", "'a", "p"}}, audio, kRate);
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[2].phoneme, "'a");
  EXPECT_NEAR(p[2].start_s, 0.2, 0.011);
  EXPECT_NEAR(p[2].end_s, 0.35, 0.011);
  EXPECT_NEAR(p[1].start_s, 0.1, 1e-9);
  EXPECT_NEAR(p[3].end_s, 0.45, 1e-9);
}

TEST(TextPhones, CrowdedWordsShareTheirNeighboursSpan) {
  // RHVoice reported "and" inside the chunk of "thank": no time of its own.
  std::vector<WordTiming> words = {{"and", 0.5, 0.5}, {"thank", 0.5, 0.9}};
  spread_crowded_words(words, {{"a", "n", "d"}, {"T", "'a", "N", "k"}});
  EXPECT_NEAR(words[0].end_s, 0.5 + 0.4 * 4 / 9, 1e-9);
  EXPECT_DOUBLE_EQ(words[0].end_s, words[1].start_s);
}

TEST(TextPhones, RefinedWordsLoseTheirSilence) {
  auto audio = burst(0.3, 0.4, 0.3);
  std::vector<WordTiming> words = {{"hello", 0.0, 1.0}};
  refine_word_times(words, audio, kRate);
  EXPECT_NEAR(words[0].start_s, 0.3, 0.011);
  EXPECT_NEAR(words[0].end_s, 0.7, 0.011);
}

TEST(TextPhones, Utf8SliceCountsCodePoints) {
  EXPECT_EQ(utf8_slice("Grüße aus", 0, 5), "Grüße");
  EXPECT_EQ(utf8_slice("Grüße aus", 6, 3), "aus");
}

}  // namespace
}  // namespace imago::speech

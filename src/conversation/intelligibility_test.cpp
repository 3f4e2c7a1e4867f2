// Intelligibility of the built-in voices: the offline recogniser (PocketSphinx, general US English
// model, no domain) transcribes what each voice says, and the word error rate is bounded: the
// mean over the ten voices at most 35%, the default voice M1 at most 30% (espeak-ng's formant
// voices scored about 90% on the same sentences). A handful of sentences here;
// bench/voices_benchmark.cpp reports every voice on all twenty.
#include <gtest/gtest.h>

#include <cstdio>

#include "conversation/harvard_sentences.h"
#include "conversation/recognizer.h"
#include "speech/test_speech.h"

namespace imago::conversation {
namespace {

// Word errors and reference words of `voice` reading `sentences`.
std::pair<double, double> errors_of(Recognizer& r, const std::string& voice,
                                    const std::vector<std::string>& sentences) {
  double errors = 0, words = 0;
  for (const auto& text : sentences) {
    speech::VoiceSettings s;
    s.voice = voice;
    s.output_rate = kRecognizerSampleRate;
    auto a = speech::test_service().synthesize(text, s);
    EXPECT_TRUE(a.ok()) << a.status().message();
    if (!a.ok()) return {1, 1};
    auto heard = r.recognize(a->samples);
    EXPECT_TRUE(heard.ok());
    double n = static_cast<double>(wer_words(text).size());
    errors += word_error_rate(text, heard.ok() ? *heard : "") * n;
    words += n;
  }
  return {errors, words};
}

TEST(Intelligibility, BuiltinVoicesAreUnderstood) {
  auto r = Recognizer::create();
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Six of the twenty, across both lists.
  std::vector<std::string> sentences;
  for (int i : {1, 4, 6, 10, 14, 18}) sentences.push_back(testdata::kHarvardSentences[i]);
  double sum = 0, m1 = 0;
  int n = 0;
  for (const auto& v : speech::test_service().builtin_voices()) {
    auto [errors, words] = errors_of(**r, v.id, sentences);
    double wer = errors / words;
    std::printf("%s (%s): WER %.0f%%\n", v.id.c_str(), v.engine.c_str(), wer * 100);
    sum += wer;
    ++n;
    if (v.id == "M1") m1 = wer;
  }
  ASSERT_EQ(n, 10);
  std::printf("mean WER %.0f%%, M1 %.0f%%\n", sum / n * 100, m1 * 100);
  EXPECT_LE(sum / n, 0.35);
  EXPECT_LE(m1, 0.30);
}

}  // namespace
}  // namespace imago::conversation

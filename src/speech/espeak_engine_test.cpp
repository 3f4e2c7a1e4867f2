// The espeak-ng engine on its own: its phonemiser (which RHVoice's words use) and synthesis
// sharing one process-wide espeak-ng.
#include "speech/espeak_engine.h"

#include <gtest/gtest.h>

#include "speech/test_speech.h"
#include "speech/voices.h"

namespace imago::speech {
namespace {

TEST(EspeakEngine, PhonemiserGivesMnemonics) {
  auto e = EspeakEngine::shared();
  ASSERT_TRUE(e.ok()) << e.status().message();
  std::lock_guard lock((*e)->mutex());
  auto p = (*e)->phonemes("map", "en-us");
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[0], "m");
  EXPECT_EQ((*p)[2], "p");
}

// espeak_TextToPhonemes (run for RHVoice's words) used to make the next espeak-ng synthesis lose
// its first word event.
TEST(EspeakEngine, SynthesisAfterThePhonemiserKeepsEveryWord) {
  // The sequence that showed it: English texts at several speeds, then German.
  for (double speed : {1.0, 0.7, 1.05, 1.5, 2.0}) {
    VoiceSettings en;
    en.speed = speed;
    ASSERT_TRUE(test_service()
                    .synthesize("Speech synthesis turns text into sound. It should be quick and clear.", en)
                    .ok());
  }
  for (int i = 0; i < 2; ++i) {
    VoiceSettings de;
    de.language = "de";
    auto r = test_service().synthesize("Grüße aus München.", de);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->words.size(), 3u) << "round " << i;
    EXPECT_EQ(r->words[0].text, "Grüße");
  }
}

}  // namespace
}  // namespace imago::speech

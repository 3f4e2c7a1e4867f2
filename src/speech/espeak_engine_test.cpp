// The espeak-ng engine on its own: its phonemiser (which RHVoice's words use) and synthesis
// sharing one process-wide espeak-ng.
#include "speech/espeak_engine.h"

#include <gtest/gtest.h>

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

// espeak_TextToPhonemes used to make the next synthesis lose its first word event.
TEST(EspeakEngine, SynthesisAfterThePhonemiserKeepsEveryWord) {
  auto e = EspeakEngine::shared();
  ASSERT_TRUE(e.ok()) << e.status().message();
  std::lock_guard lock((*e)->mutex());
  ASSERT_TRUE((*e)->phonemes("Hello world", "en-us").ok());
  auto r = (*e)->synthesize({"Grüße aus München.", "de", find_builtin_voice("M1")->espeak, 0});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->audio.words.size(), 3u);
  EXPECT_EQ(r->audio.words[0].text, "Grüße");
}

}  // namespace
}  // namespace imago::speech

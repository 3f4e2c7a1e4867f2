// The language check's comparison of espeak-ng transcriptions (no espeak-ng needed).
#include "speech/languages.h"

#include <gtest/gtest.h>

#include <set>

namespace imago::speech {
namespace {

TEST(LanguageCheck, ExactAndNearReadingsPass) {
  EXPECT_TRUE(check_transcription("həlˈoʊ wˈɜːld", "həlˈoʊ wˈɜːld").passed);
  auto near = check_transcription("hˈaloː vˈɛlt", "haloː vɛlt");  // stress marks are ignored
  EXPECT_TRUE(near.passed);
  EXPECT_DOUBLE_EQ(near.distance, 0.0);
  auto one_off = check_transcription("kˌo̞nnitɕˈihä", "konnitɕiwä");
  EXPECT_TRUE(one_off.passed) << one_off.reason;
  EXPECT_GT(one_off.distance, 0.0);
}

TEST(LanguageCheck, FallbackToAnotherLanguageFails) {
  // What espeak-ng 1.51 makes of Japanese kanji and of Chinese hanzi.
  auto kanji = check_transcription("(en)tʃˈaɪniːz(ja)lˈe̞tə ˈo̞ ɕˈi mˈä sˈɯᵝ", "nihoŋɡo o hanaɕimasɯ");
  EXPECT_FALSE(kanji.passed);
  EXPECT_TRUE(kanji.switched_language);
  EXPECT_NE(kanji.reason.find("(en)"), std::string::npos);
  auto hanzi = check_transcription("(en)nɪθɹˈiː hˌeɪəθɹˈiː(cmn) s.ˈi.5 (en)dʒiːfˈɔː(cmn)", "ni xau ʂɻ tɕje");
  EXPECT_FALSE(hanzi.passed);
}

TEST(LanguageCheck, WrongReadingFails) {
  auto burmese = check_transcription("mŋ  ɡltspˈe", "mɪŋɡəlàbà");
  EXPECT_FALSE(burmese.passed);
  EXPECT_GT(burmese.distance, kMaxPhonemeDistance);
  EXPECT_FALSE(check_transcription("", "abc").passed);
}

TEST(LanguageCheck, TableIsConsistent) {
  std::set<std::string> codes;
  for (const auto& c : language_candidates()) {
    EXPECT_TRUE(codes.insert(c.code).second) << "duplicate " << c.code;
    EXPECT_STRNE(c.expected_ipa, "") << c.code;
  }
  EXPECT_GE(codes.size(), 60u);
  ASSERT_NE(find_partial_language("ja"), nullptr);
  EXPECT_EQ(find_partial_language("en"), nullptr);
}

TEST(LanguageCheck, CjkIdeographs) {
  EXPECT_TRUE(contains_cjk_ideographs("私は"));
  EXPECT_TRUE(contains_cjk_ideographs("abc 日本"));
  EXPECT_FALSE(contains_cjk_ideographs("こんにちは カタカナ"));
  EXPECT_FALSE(contains_cjk_ideographs("hello"));
}

}  // namespace
}  // namespace imago::speech

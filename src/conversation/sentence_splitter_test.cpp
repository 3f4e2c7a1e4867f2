#include "conversation/sentence_splitter.h"

#include <gtest/gtest.h>

namespace imago::conversation {
namespace {

std::vector<std::string> split_streamed(const std::string& text, size_t step) {
  SentenceSplitter s;
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); i += step) {
    for (auto& x : s.push(std::string_view(text).substr(i, step))) out.push_back(x);
  }
  auto rest = s.flush();
  if (!rest.empty()) out.push_back(rest);
  return out;
}

TEST(SentenceSplitter, SplitsAsTextStreamsIn) {
  std::string text = "Hello there! The price is 3.50 euros. Dr. Smith opens at 9. Is that fine? Yes";
  std::vector<std::string> want = {"Hello there!", "The price is 3.50 euros.", "Dr. Smith opens at 9.",
                                   "Is that fine?", "Yes"};
  for (size_t step : {1u, 2u, 5u, 13u, 1000u}) EXPECT_EQ(split_streamed(text, step), want) << step;
}

TEST(SentenceSplitter, EmitsASentenceOnlyOnceItsEndIsSure) {
  SentenceSplitter s;
  EXPECT_TRUE(s.push("It costs 3.").empty());  // could be 3.50
  auto out = s.push("50. Next");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], "It costs 3.50.");
  EXPECT_EQ(s.flush(), "Next");
  EXPECT_EQ(s.flush(), "");
}

TEST(SentenceSplitter, InitialsEllipsesQuotesAndCjk) {
  EXPECT_EQ(split_streamed("J. R. R. Tolkien wrote it... Really?! \"Yes.\" Done", 3),
            (std::vector<std::string>{"J. R. R. Tolkien wrote it...", "Really?!", "\"Yes.\"", "Done"}));
  EXPECT_EQ(split_streamed("こんにちは。げんきですか？", 4),
            (std::vector<std::string>{"こんにちは。", "げんきですか？"}));
}

TEST(SentenceSplitter, MarkdownIsNotSpokenAndLinesEndSentences) {
  EXPECT_EQ(split_streamed("**Bold** answer\n- item one\n# Title", 4),
            (std::vector<std::string>{"Bold answer", "- item one", "Title"}));
}

TEST(SentenceSplitter, RunOnTextIsCutAtAPause) {
  SentenceSplitter s(60);
  std::string run =
      "this goes on and on, without any end in sight, and it keeps going further and further along";
  auto out = s.push(run);
  ASSERT_FALSE(out.empty());
  for (auto& x : out) EXPECT_LE(x.size(), 60u);
  EXPECT_EQ(out[0].back(), ',');
}

}  // namespace
}  // namespace imago::conversation

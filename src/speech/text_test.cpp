#include "speech/text.h"

#include <gtest/gtest.h>

#include "speech/frames.h"

namespace imago::speech {
namespace {

TEST(Text, SplitsSentences) {
  auto s = split_sentences("Hello there. Dr. Smith is here! Is it? Yes...\nNew line");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0], "Hello there.");
  EXPECT_EQ(s[1], "Dr. Smith is here!");
  EXPECT_EQ(s[2], "Is it?");
  EXPECT_EQ(s[3], "Yes...");
  EXPECT_EQ(s[4], "New line");
  auto c = split_sentences("你好。今天很好！");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], "你好。");
  EXPECT_EQ(split_sentences("3.14 is pi.").size(), 1u);
}

TEST(Text, CutsLongSentencesAtCommasOrSpaces) {
  std::string t;
  for (int i = 0; i < 100; ++i) t += "word, ";
  auto s = split_sentences(t, 50);
  ASSERT_GT(s.size(), 10u);
  for (const auto& p : s) EXPECT_LE(utf8_length(p), 50u);
}

TEST(Text, BlankAndLength) {
  EXPECT_TRUE(is_blank(" \t\n\u00a0\u3000"));
  EXPECT_FALSE(is_blank(" a "));
  EXPECT_EQ(utf8_length("Grüße"), 5u);
}

TEST(Frames, RoundTrip) {
  int16_t s[3] = {1, -2, 32767};
  std::string bytes = header_frame(22050) + audio_frame(s, 3) + end_frame(3);
  auto f = parse_frames(bytes);
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->size(), 3u);
  EXPECT_EQ((*f)[0].type, FrameType::kHeader);
  EXPECT_EQ((*f)[0].payload.size(), 8u);
  EXPECT_EQ((*f)[1].type, FrameType::kAudio);
  EXPECT_EQ((*f)[1].payload, std::string("\x01\x00\xfe\xff\xff\x7f", 6));
  EXPECT_EQ((*f)[2].type, FrameType::kEnd);
  EXPECT_FALSE(parse_frames(bytes.substr(0, bytes.size() - 1)).has_value());
}

}  // namespace
}  // namespace imago::speech

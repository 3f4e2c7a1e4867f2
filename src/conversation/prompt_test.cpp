#include "conversation/prompt.h"

#include <gtest/gtest.h>

namespace imago::conversation {
namespace {

TEST(Prompt, ClipCutsAtASentenceOrWordAndNeverInsideUtf8) {
  EXPECT_EQ(clip_text("  short  ", 100), "short");
  std::string s = "First sentence here. Second sentence is longer than the limit allows";
  EXPECT_EQ(clip_text(s, 26), "First sentence here.");
  EXPECT_EQ(clip_text("word another more words", 14), "word another");
  std::string utf = "ééééé";  // 10 bytes
  std::string c = clip_text(utf, 5);
  EXPECT_EQ(c, "éé");
}

TEST(Prompt, KnowledgeKeepsTheNewestWithinBounds) {
  PromptLimits l;
  l.knowledge_items = 3;
  l.knowledge_chars = 1000;
  Knowledge k(l);
  for (int i = 0; i < 5; ++i) k.add("fact " + std::to_string(i));
  ASSERT_EQ(k.items().size(), 3u);
  EXPECT_EQ(k.items().front(), "fact 2");
  EXPECT_EQ(k.dropped(), 2u);
  k.add("   ");  // blank adds nothing
  EXPECT_EQ(k.items().size(), 3u);

  PromptLimits small;
  small.knowledge_chars = 30;
  small.knowledge_item_chars = 20;
  Knowledge k2(small);
  k2.add(std::string(100, 'x'));
  EXPECT_LE(k2.chars(), 20u);
  k2.add("0123456789 0123456789");
  EXPECT_LE(k2.chars(), 30u);
  EXPECT_EQ(k2.items().size(), 1u);
}

TEST(Prompt, HistoryIsBounded) {
  PromptLimits l;
  l.history_turns = 4;
  History h(l);
  for (int i = 0; i < 6; ++i) {
    h.add_user("question " + std::to_string(i));
    h.add_agent("answer " + std::to_string(i));
  }
  ASSERT_EQ(h.turns().size(), 4u);
  EXPECT_EQ(h.turns().front().text, "question 4");
  EXPECT_EQ(h.turns().back().role, "assistant");
}

TEST(Prompt, MessagesCarrySystemPromptKnowledgeHistoryAndQuestion) {
  Knowledge k;
  k.add("Parking is free on Sundays.");
  History h;
  h.add_user("Hi");
  h.add_agent("Hello!");
  auto m = build_messages("You are Bob.", k, h, "Is parking free?", {"data:image/png;base64,AA"});
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].role, "system");
  EXPECT_EQ(m[0].content.rfind("You are Bob.", 0), 0u);
  EXPECT_NE(m[0].content.find("- Parking is free on Sundays."), std::string::npos);
  EXPECT_EQ(m[3].content, "Is parking free?");
  EXPECT_EQ(m[3].image_urls.size(), 1u);
  auto none = build_messages("", Knowledge{}, History{}, "hey");
  EXPECT_EQ(none[0].content.rfind("You are a helpful assistant.", 0), 0u);
  EXPECT_EQ(none[0].content.find("Knowledge"), std::string::npos);
  PromptLimits l;
  l.system_prompt_chars = 10;
  auto clipped = build_messages("Sentence one. Sentence two is long.", Knowledge{}, History{}, "q", {}, l);
  EXPECT_EQ(clipped[0].content.find("two"), std::string::npos);
}

}  // namespace
}  // namespace imago::conversation

namespace imago::conversation {
namespace {

TEST(Prompt, TheAgentsOwnKnowledgeComesFirstAndASessionCannotPushItOut) {
  PromptLimits l;
  l.knowledge_items = 3;
  l.knowledge_chars = 100;
  l.knowledge_item_chars = 40;
  l.agent_knowledge_chars = 60;
  Knowledge session(l);
  for (int i = 0; i < 10; ++i) session.add("Session fact number " + std::to_string(i) + ".");
  ASSERT_EQ(session.items().size(), 3u);
  // The agent's item is longer than a session item may be: it is not cut to that size.
  std::string agent_item = "The agent's own fact is longer than forty characters.";
  Knowledge k =
      with_agent_knowledge({agent_item, "A second agent fact that goes over the budget."}, session, l);
  ASSERT_EQ(k.items().size(), 5u);
  EXPECT_EQ(k.items()[0], agent_item);
  EXPECT_LE(k.items()[1].size(), 60 - agent_item.size());  // the agent's budget is for all its items
  EXPECT_EQ(k.items()[4], "Session fact number 9.");
  EXPECT_EQ(k.dropped(), 0u);
  auto m = build_messages("You are Nora.", k, History{}, "hi");
  EXPECT_LT(m[0].content.find(agent_item), m[0].content.find("Session fact number 9."));
}

}  // namespace
}  // namespace imago::conversation

#include "conversation/builtin_responder.h"

#include <gtest/gtest.h>

#include "conversation/test_knowledge.h"

namespace imago::conversation {
namespace {

using namespace testdata;

TEST(BuiltinResponder, AnswersEveryQuestionFromTheKnowledge) {
  Knowledge k = knowledge();
  for (const auto& q : kQuestions) {
    auto a = builtin_answer(kSystemPrompt, k, q.text);
    EXPECT_EQ(a.kind, AnswerKind::kRetrieved) << q.text;
    EXPECT_NE(a.text.find(q.expected_fact), std::string::npos) << q.text << " -> " << a.text;
  }
}

TEST(BuiltinResponder, AnswersFromInjectedContextOnlyOnceItIsThere) {
  Knowledge k;
  auto before = builtin_answer("You are a helpful guide.", k, "Where is the swimming pool?");
  EXPECT_EQ(before.kind, AnswerKind::kUnknown);
  EXPECT_EQ(before.text, kUnknownAnswer);
  k.add("The swimming pool is in the basement, next to the sauna.");
  auto after = builtin_answer("You are a helpful guide.", k, "Where is the swimming pool?");
  EXPECT_EQ(after.kind, AnswerKind::kRetrieved);
  EXPECT_EQ(after.text, "Here is what I know: The swimming pool is in the basement, next to the sauna.");
}

// What a recogniser makes of "Where can I park my car?": the contraction is a function word, not
// a rare term that pulls the match below the threshold.
TEST(BuiltinResponder, ContractionsDoNotCountAsTerms) {
  auto a = builtin_answer(kSystemPrompt, knowledge(), "we're can park my car");
  EXPECT_EQ(a.kind, AnswerKind::kRetrieved);
  EXPECT_NE(a.text.find("Parking is available"), std::string::npos) << a.text;
}

TEST(BuiltinResponder, SaysPlainlyWhenItDoesNotKnow) {
  Knowledge k = knowledge();
  for (const char* q :
       {"What is the capital of France?", "Who won the football match yesterday?", "How do I bake bread?",
        // Words, not meaning: "photos" is not "photography", and "take" alone must
        // not pick "takes place".
        "Can I take photos?"}) {
    auto a = builtin_answer(kSystemPrompt, k, q);
    EXPECT_EQ(a.kind, AnswerKind::kUnknown) << q << " -> " << a.text;
    EXPECT_EQ(a.text, kUnknownAnswer);
  }
  EXPECT_EQ(builtin_answer("", Knowledge{}, "When do you open?").kind, AnswerKind::kUnknown);
}

TEST(BuiltinResponder, SocialTurnsAndIdentity) {
  Knowledge k = knowledge();
  EXPECT_EQ(builtin_answer(kSystemPrompt, k, "Hello there!").kind, AnswerKind::kGreeting);
  EXPECT_EQ(builtin_answer(kSystemPrompt, k, "good morning").kind, AnswerKind::kGreeting);
  EXPECT_EQ(builtin_answer(kSystemPrompt, k, "Thank you so much").kind, AnswerKind::kThanks);
  EXPECT_EQ(builtin_answer(kSystemPrompt, k, "bye").kind, AnswerKind::kGoodbye);
  auto who = builtin_answer(kSystemPrompt, k, "Who are you?");
  EXPECT_EQ(who.kind, AnswerKind::kIdentity);
  EXPECT_EQ(who.text, "I am Nora, the virtual guide of the City Science Museum.");
  EXPECT_EQ(builtin_answer(kSystemPrompt, k, "What's your name?").kind, AnswerKind::kIdentity);
}

TEST(BuiltinResponder, SystemPromptSentencesAreSpokenInTheFirstPerson) {
  EXPECT_EQ(first_person("You are Nora."), "I am Nora.");
  EXPECT_EQ(first_person("Your shop is open, and you were late."), "My shop is open, and I was late.");
  EXPECT_EQ(first_person("People ask you things."), "People ask me things.");
  EXPECT_EQ(first_person("You're kind."), "I'm kind.");
}

TEST(BuiltinResponder, IsDeterministic) {
  Knowledge k = knowledge();
  for (const auto& q : kQuestions) {
    EXPECT_EQ(builtin_answer(kSystemPrompt, k, q.text).text, builtin_answer(kSystemPrompt, k, q.text).text);
  }
}

TEST(BuiltinResponder, IndexTerms) {
  // Stop words dropped, stems kept (time -> tim).
  EXPECT_EQ(index_terms("What time does the museum open?"),
            (std::vector<std::string>{"tim", "museum", "open"}));
  EXPECT_EQ(index_terms("Tickets cost"), index_terms("ticket costs"));
  EXPECT_EQ(index_terms("opens"), index_terms("open"));
}

}  // namespace
}  // namespace imago::conversation

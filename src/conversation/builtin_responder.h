// The built-in responder: how an agent converses when the operator configured no language model,
// so a fresh install answers offline. It is retrieval, not generation: the agent's own knowledge
// (its system prompt and the session's injected context) is split into sentences, the viewer's
// question is matched against them with BM25 (Okapi, k1 = 1.2, b = 0.75, English stop words
// removed, light suffix stemming), and the best sentence is spoken inside a short template. When
// no sentence matches enough of the question it says plainly that it does not know. A few social
// turns (greeting, thanks, "who are you") have fixed answers. Deterministic: the same knowledge
// and question always give the same answer.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "conversation/prompt.h"

namespace imago::conversation {

enum class AnswerKind { kGreeting, kThanks, kGoodbye, kIdentity, kRetrieved, kUnknown };

struct BuiltinAnswer {
  AnswerKind kind = AnswerKind::kUnknown;
  std::string text;      // what the agent says
  std::string sentence;  // the knowledge sentence it is based on (kRetrieved, kIdentity)
  double score = 0;      // BM25 score of that sentence
  double coverage = 0;   // share of the question's term weight the sentence matched, 0..1
};

// Share of the question's (idf-weighted) terms a sentence must match to be used as the answer.
inline constexpr double kMinCoverage = 0.34;

inline constexpr const char* kUnknownAnswer =
    "I'm sorry, I don't know that. I can only answer from what I have been told.";

BuiltinAnswer builtin_answer(std::string_view system_prompt, const Knowledge& knowledge,
                             std::string_view question);

// Exposed for tests: the index terms of a text (lower case, stop words removed, stemmed).
std::vector<std::string> index_terms(std::string_view text);
// Exposed for tests: a system-prompt sentence addressed to the agent, turned to the first person
// ("You are Nora" -> "I am Nora").
std::string first_person(std::string_view sentence);

}  // namespace imago::conversation

// A small agent knowledge base and twenty questions about it, each with the fact that answers
// it: shared by the built-in responder tests and the recognition tests (questions spoken by the
// project's own TTS, recognised, then answered).
#pragma once
#include <string>
#include <vector>

#include "conversation/prompt.h"

namespace imago::conversation::testdata {

inline const char* kSystemPrompt =
    "You are Nora, the virtual guide of the City Science Museum. You speak warmly and briefly. "
    "The museum opens at nine in the morning and closes at six in the evening.";

inline const std::vector<std::string> kContext = {
    "Tickets cost twelve dollars for adults and six dollars for children.",
    "Entry is free for members and for children under five.",
    "The planetarium show starts every hour on the hour.",
    "The cafe on the ground floor serves coffee, sandwiches and soup.",
    "Parking is available in the garage behind the museum for ten dollars a day.",
    "The dinosaur hall is on the second floor.",
    "Photography is allowed everywhere except in the planetarium.",
    "Strollers and wheelchairs can be borrowed at the front desk.",
    "The gift shop sells books, puzzles and telescopes.",
    "The museum is closed on Mondays and on public holidays.",
    "Guided tours leave from the main entrance at eleven and at three.",
    "Lost items are kept at the information desk for thirty days.",
    "The nearest subway station is Central Park, two blocks north.",
    "Dogs are not allowed inside, except for service animals.",
    "Members get a discount of ten percent in the gift shop.",
    "The robot workshop for kids takes place every Saturday afternoon.",
    "Free wireless internet is available in the whole building.",
    "School groups must book their visit two weeks in advance.",
};

struct Question {
  std::string text;
  std::string expected_fact;  // a sentence (or part of one) the answer must contain
};

inline const std::vector<Question> kQuestions = {
    {"What time does the museum open?", "opens at nine"},
    {"How much are the tickets?", "Tickets cost twelve dollars"},
    {"Where is the dinosaur hall?", "dinosaur hall is on the second floor"},
    {"When does the planetarium show start?", "planetarium show starts"},
    {"Is there a cafe?", "The cafe on the ground floor"},
    {"Where can I park my car?", "Parking is available"},
    {"Is photography allowed?", "Photography is allowed"},
    {"Can I borrow a wheelchair?", "wheelchairs can be borrowed"},
    {"What does the gift shop sell?", "gift shop sells"},
    {"Are you open on Mondays?", "closed on Mondays"},
    {"When do the guided tours leave?", "Guided tours leave"},
    {"I lost my bag, where are lost items kept?", "Lost items are kept"},
    {"Where is the nearest subway station?", "nearest subway station"},
    {"Can I bring my dog?", "Dogs are not allowed"},
    {"Do members get a discount?", "discount of ten percent"},
    {"When is the robot workshop?", "robot workshop"},
    {"Is there wireless internet?", "wireless internet"},
    {"How early must school groups book?", "School groups must book"},
    {"Is entry free for children?", "Entry is free"},
    {"What time does the museum close?", "closes at six"},
};

inline Knowledge knowledge() {
  Knowledge k;
  for (const auto& c : kContext) k.add(c);
  return k;
}

}  // namespace imago::conversation::testdata

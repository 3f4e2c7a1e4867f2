// The turn-taking engine with the built-in responder and with the fake streaming model: what is
// spoken and when, what the model was sent, interrupts, a viewer speaking over the agent, failures.
#include "conversation/conversation.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "conversation/test_knowledge.h"
#include "fixtures/fake_llm.h"

namespace imago::conversation {
namespace {

using Clock = std::chrono::steady_clock;

// Records everything a conversation emits.
struct Recorder {
  std::mutex mu;
  std::vector<std::string> spoken;
  std::vector<Clock::time_point> spoken_at;
  std::vector<std::tuple<std::string, std::string, bool>> transcripts;
  int thinking = 0;
  std::vector<std::string> errors;

  ConversationSink sink() {
    ConversationSink s;
    s.speak = [this](const std::string& x) {
      std::lock_guard l(mu);
      spoken.push_back(x);
      spoken_at.push_back(Clock::now());
    };
    s.transcript = [this](const std::string& role, const std::string& text, bool final) {
      std::lock_guard l(mu);
      transcripts.emplace_back(role, text, final);
    };
    s.thinking = [this] {
      std::lock_guard l(mu);
      ++thinking;
    };
    s.error = [this](const std::string& code, const std::string& message) {
      std::lock_guard l(mu);
      errors.push_back(code + ": " + message);
    };
    return s;
  }
  size_t spoken_count() {
    std::lock_guard l(mu);
    return spoken.size();
  }
};

// Waits for something that must happen; the bound only ends a test that would otherwise hang.
bool wait_for(const std::function<bool()>& f, int ms = 30000) {
  auto until = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < until) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

ChatClientOptions llm_options(const testing::FakeLlmServer& s) {
  ChatClientOptions o;
  o.base_url = s.base_url();
  o.model = "fake";
  o.allow_private = true;
  return o;
}

TEST(Conversation, BuiltinResponderAnswersFromInjectedKnowledge) {
  Recorder rec;
  Conversation c({testdata::kSystemPrompt, std::nullopt, {}}, rec.sink());
  c.user_text("Where is the swimming pool?");
  c.wait_idle();
  ASSERT_EQ(rec.spoken.size(), 2u);
  EXPECT_EQ(rec.spoken[0], "I'm sorry, I don't know that.");
  c.add_context("The swimming pool is in the basement.");
  EXPECT_EQ(c.knowledge_items(), 1u);
  EXPECT_EQ(rec.spoken.size(), 2u);  // knowledge gets no spoken reply
  c.user_text("Where is the swimming pool?");
  c.wait_idle();
  ASSERT_EQ(rec.spoken.size(), 3u);
  EXPECT_EQ(rec.spoken[2], "Here is what I know: The swimming pool is in the basement.");
  EXPECT_EQ(rec.thinking, 2);
  // transcript: the user's turn (final), each spoken sentence (not final), the whole answer (final).
  EXPECT_EQ(rec.transcripts.front(),
            std::make_tuple(std::string("user"), std::string("Where is the swimming pool?"), true));
  EXPECT_EQ(rec.transcripts.back(),
            std::make_tuple(std::string("agent"),
                            std::string("Here is what I know: The swimming pool is in the basement."), true));
  auto h = c.history();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[3].role, "assistant");
  EXPECT_EQ(c.stats().answers, 2);
}

TEST(Conversation, TheAgentsOwnKnowledgeAnswersFromTheFirstTurnBesideTheSessions) {
  Recorder rec;
  ConversationOptions o{testdata::kSystemPrompt, std::nullopt, {}};
  o.agent_knowledge = {"The swimming pool is on the roof.", "Lockers cost one euro."};
  Conversation c(o, rec.sink());
  c.user_text("Where is the swimming pool?");
  c.wait_idle();
  ASSERT_FALSE(rec.spoken.empty());
  EXPECT_EQ(rec.transcripts.back(),
            std::make_tuple(std::string("agent"),
                            std::string("Here is what I know: The swimming pool is on the roof."), true));
  EXPECT_EQ(c.knowledge_items(), 0u);  // the session's own knowledge is still empty
  c.add_context("The sauna is next to the pool.");
  c.user_text("Where is the sauna?");
  c.wait_idle();
  EXPECT_EQ(std::get<1>(rec.transcripts.back()), "Here is what I know: The sauna is next to the pool.");
}

TEST(Conversation, TheModelIsSentTheAgentsKnowledgeBeforeTheSessions) {
  testing::FakeLlmServer llm;
  llm.control({{"reply", "On the roof."}});
  Recorder rec;
  ConversationOptions o{"You are Nora.", llm_options(llm), {}};
  o.agent_knowledge = {"The swimming pool is on the roof."};
  Conversation c(o, rec.sink());
  c.add_context("The sauna is next to the pool.");
  c.user_text("Where is the pool?");
  c.wait_idle();
  auto sent = llm.requests().at(0).at("body").at("messages").as_array();
  std::string system(sent[0].at("content").as_string());
  size_t agent = system.find("The swimming pool is on the roof."),
         session = system.find("The sauna is next to the pool.");
  ASSERT_NE(agent, std::string::npos) << system;
  ASSERT_NE(session, std::string::npos) << system;
  EXPECT_LT(agent, session);
}

TEST(Conversation, ModelAnswerIsSpokenSentenceBySentenceWhileItStreams) {
  testing::FakeLlmServer llm;
  // The model stops after the first sentence and the next word (the splitter needs to see what
  // follows a full stop) until released: that sentence must reach speech while the rest of the
  // answer has not even been written.
  llm.control({{"reply", "The museum opens at nine. Tickets cost twelve dollars. Enjoy your visit today."},
               {"hold_after", 6}});
  Recorder rec;
  Conversation c({"You are Nora, a museum guide.", llm_options(llm), {}}, rec.sink());
  c.add_context("The museum opens at nine in the morning.");
  c.agent_said("Welcome to the museum!");
  c.user_text("When do you open?");
  for (int i = 0; i < 1000 && rec.spoken_count() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(rec.spoken_count(), 1u) << "the first sentence was not spoken while the model held the rest";
  llm.release();
  c.wait_idle();
  ASSERT_EQ(rec.spoken.size(), 3u);
  EXPECT_EQ(rec.spoken[0], "The museum opens at nine.");
  EXPECT_EQ(rec.spoken[2], "Enjoy your visit today.");

  auto sent = llm.requests().at(0).at("body").at("messages").as_array();
  std::string system(sent[0].at("content").as_string());
  EXPECT_NE(system.find("You are Nora, a museum guide."), std::string::npos);
  EXPECT_NE(system.find("The museum opens at nine in the morning."), std::string::npos);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[1].at("role"), "assistant");
  EXPECT_EQ(sent[1].at("content"), "Welcome to the museum!");
  EXPECT_EQ(sent[2].at("content"), "When do you open?");
  // The next turn carries this exchange in its history.
  c.user_text("Thanks");
  c.wait_idle();
  auto second = llm.requests().at(1).at("body").at("messages").as_array();
  ASSERT_EQ(second.size(), 5u);
  EXPECT_EQ(second[3].at("content"),
            "The museum opens at nine. Tickets cost twelve dollars. Enjoy your visit today.");
}

TEST(Conversation, TheLatestCameraFrameGoesWithTheNextTurnOnlyWhenImagesAreAttached) {
  testing::FakeLlmServer llm;
  Recorder rec;
  ConversationOptions o{"", llm_options(llm), {}};
  o.attach_images = true;
  Conversation c(o, rec.sink());
  c.camera_frame("data:image/jpeg;base64,b2xk");
  c.camera_frame("data:image/jpeg;base64,bmV3");  // replaces the first
  c.user_text("What do you see?");
  c.wait_idle();
  c.user_text("And now?");  // no new frame: text only
  c.wait_idle();
  auto reqs = llm.requests();
  ASSERT_EQ(reqs.size(), 2u);
  auto first = reqs[0].at("body").at("messages").as_array();
  ASSERT_TRUE(first.back().at("content").is_array());
  auto parts = first.back().at("content").as_array();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].at("text"), "What do you see?");
  EXPECT_EQ(parts[1].at("image_url").at("url"), "data:image/jpeg;base64,bmV3");
  for (auto& m : reqs[1].at("body").at("messages").as_array()) EXPECT_TRUE(m.at("content").is_string());

  // A conversation that does not attach images never sends one.
  testing::FakeLlmServer llm2;
  Conversation plain({"", llm_options(llm2), {}}, rec.sink());
  plain.camera_frame("data:image/jpeg;base64,bmV3");
  plain.user_text("What do you see?");
  plain.wait_idle();
  auto plain_reqs = llm2.requests();
  ASSERT_EQ(plain_reqs.size(), 1u);
  for (auto& m : plain_reqs[0].at("body").at("messages").as_array()) EXPECT_TRUE(m.at("content").is_string());
}

TEST(Conversation, InterruptStopsAStreamingAnswerMidSentence) {
  testing::FakeLlmServer llm;
  llm.control({{"reply",
                "First sentence is short. The second sentence is much longer and keeps going on and on "
                "for quite a while before it ends."},
               {"hold_after", 7}});  // the model stops mid second sentence for up to 20 s
  Recorder rec;
  Conversation c({"", llm_options(llm), {}}, rec.sink());
  c.user_text("Talk to me");
  ASSERT_TRUE(wait_for([&] { return rec.spoken_count() == 1; }));
  c.interrupt();
  c.wait_idle();
  llm.release();
  EXPECT_EQ(rec.spoken.size(), 1u);
  EXPECT_EQ(c.stats().cancelled, 1);
  // What the viewer heard is what the history keeps.
  auto h = c.history();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1].text, "First sentence is short.");
  EXPECT_TRUE(rec.errors.empty());
  // The model's stream was closed by us, not read to the end: the rest would have been spoken.
  EXPECT_TRUE(wait_for([&] { return llm.cancelled() >= 1; }));
}

TEST(Conversation, AViewerSpeakingOverTheAgentGetsTheNextAnswer) {
  testing::FakeLlmServer llm;
  llm.control({{"delay_ms", 50}});
  Recorder rec;
  Conversation c({"", llm_options(llm), {}}, rec.sink());
  c.user_text("first question that is being answered slowly");
  ASSERT_TRUE(wait_for([&] { return llm.requests().size() == 1; }));
  c.user_text("second question");
  c.wait_idle();
  ASSERT_FALSE(rec.spoken.empty());
  EXPECT_EQ(rec.spoken.back(), "That is all I know.");
  EXPECT_NE(rec.spoken[rec.spoken.size() - 2].find("second question"), std::string::npos);
  EXPECT_EQ(c.stats().answers, 1);
  EXPECT_EQ(c.stats().cancelled, 1);
}

TEST(Conversation, UpstreamFailureIsAnErrorEventAndASpokenApology) {
  testing::FakeLlmServer llm;
  llm.control({{"mode", "status"}, {"status", 500}});
  Recorder rec;
  Conversation c({"", llm_options(llm), {}}, rec.sink());
  c.user_text("hello?");
  c.wait_idle();
  ASSERT_EQ(rec.errors.size(), 1u);
  EXPECT_EQ(rec.errors[0].rfind("LLM_UNAVAILABLE: ", 0), 0u) << rec.errors[0];
  ASSERT_EQ(rec.spoken.size(), 1u);
  EXPECT_EQ(rec.spoken[0], kApology);
  EXPECT_EQ(c.stats().failed, 1);
  // A timeout ends the same way, and the conversation goes on afterwards.
  ChatClientOptions o = llm_options(llm);
  o.first_token_timeout_ms = 200;
  Recorder rec2;
  Conversation c2({"", o, {}}, rec2.sink());
  llm.control({{"mode", "hang"}});
  c2.user_text("anyone there?");
  c2.wait_idle();
  ASSERT_EQ(rec2.errors.size(), 1u);
  EXPECT_NE(rec2.errors[0].find("no answer within 200 ms"), std::string::npos);
  llm.control({{"mode", "ok"}});
  c2.user_text("and now?");
  c2.wait_idle();
  EXPECT_EQ(rec2.spoken.back(), "That is all I know.");
}

TEST(Conversation, BlankTurnsAreIgnoredAndDestructionCancels) {
  testing::FakeLlmServer llm;
  llm.control({{"hold_after", 1}});  // the answer stops after one word for up to 20 s
  Recorder rec;
  {
    Conversation c({"", llm_options(llm), {}}, rec.sink());
    c.user_text("   ");
    EXPECT_FALSE(c.busy());
    c.user_text("a question with a slow answer");
    ASSERT_TRUE(wait_for([&] { return llm.requests().size() == 1; }));
  }
  // Destruction closed the stream instead of reading it to the end: the fake sees a closed
  // connection when it goes on after the release (a reader would have taken the rest).
  llm.release();
  EXPECT_TRUE(wait_for([&] { return llm.cancelled() >= 1; }));
}

}  // namespace
}  // namespace imago::conversation

// The streaming chat client against the fake OpenAI-compatible server (tests/fixtures): streaming,
// what was sent, cancellation mid-stream, timeouts, upstream errors, the address policy.
#include "conversation/chat_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "conversation/prompt.h"
#include "fixtures/fake_llm.h"

namespace imago::conversation {
namespace {

namespace json = boost::json;
using testing::FakeLlmServer;

ChatClientOptions options_for(const FakeLlmServer& s) {
  ChatClientOptions o;
  o.base_url = s.base_url();
  o.model = "fake-model";
  o.api_key = "sk-test-key";
  o.allow_private = true;
  return o;
}

std::vector<ChatMessage> question(const std::string& text) {
  return {{"system", "Be brief.", {}}, {"user", text, {}}};
}

TEST(ChatClient, StreamsDeltasAndSendsTheMessages) {
  FakeLlmServer llm;
  ChatClient client(options_for(llm));
  std::vector<std::string> deltas;
  auto r = client.stream(question("What is the weather"), [&](std::string_view d) {
    deltas.emplace_back(d);
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.text, "You said: What is the weather. That is all I know.");
  EXPECT_GT(deltas.size(), 5u);  // word by word, not one block
  EXPECT_EQ(r.http_status, 200);
  EXPECT_GE(r.first_token_ms, 0);

  auto reqs = llm.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const auto& body = reqs[0].at("body").as_object();
  EXPECT_EQ(body.at("model"), "fake-model");
  EXPECT_EQ(body.at("stream"), true);
  const auto& msgs = body.at("messages").as_array();
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].at("role"), "system");
  EXPECT_EQ(msgs[1].at("content"), "What is the weather");
  EXPECT_EQ(reqs[0].at("headers").at("authorization"), "Bearer sk-test-key");
}

TEST(ChatClient, SystemPromptKnowledgeAndHistoryReachTheModel) {
  FakeLlmServer llm;
  ChatClient client(options_for(llm));
  Knowledge k;
  k.add("The museum opens at nine in the morning.");
  k.add("Tickets cost twelve euros.");
  History h;
  h.add_user("Hello");
  h.add_agent("Hello! How can I help?");
  auto msgs = build_messages("You are Ada, a museum guide.", k, h, "When do you open?");
  auto r = client.stream(msgs, [](std::string_view) { return true; });
  ASSERT_TRUE(r.ok()) << r.message;
  auto sent = llm.requests()[0].at("body").at("messages").as_array();
  ASSERT_EQ(sent.size(), 4u);
  std::string system(sent[0].at("content").as_string());
  EXPECT_NE(system.find("You are Ada, a museum guide."), std::string::npos);
  EXPECT_NE(system.find("The museum opens at nine in the morning."), std::string::npos);
  EXPECT_NE(system.find("Tickets cost twelve euros."), std::string::npos);
  EXPECT_EQ(sent[1].at("role"), "user");
  EXPECT_EQ(sent[2].at("role"), "assistant");
  EXPECT_EQ(sent[3].at("content"), "When do you open?");
}

TEST(ChatClient, CancelStopsAStreamingAnswerMidSentence) {
  FakeLlmServer llm;
  llm.control({{"reply", "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"},
               {"hold_after", 3}});  // then nothing more for up to 20 s
  ChatClient client(options_for(llm));
  CancelFlag cancel;
  std::atomic<bool> got_text{false};
  // Cancels once the answer has started (bounded wait), whenever that is on this machine.
  std::thread canceller([&] {
    for (int i = 0; i < 3000 && !got_text.load(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cancel.cancel();
  });
  auto r = client.stream(
      question("count"),
      [&](std::string_view) {
        got_text = true;
        return true;
      },
      &cancel);
  canceller.join();
  // A client that read on instead of closing would have waited out the hold and got the rest.
  EXPECT_EQ(r.outcome, ChatOutcome::kCancelled);
  EXPECT_FALSE(r.text.empty());
  EXPECT_EQ(r.text.find("fourteen"), std::string::npos);
  llm.release();
}

TEST(ChatClient, CallbackReturningFalseCancels) {
  FakeLlmServer llm;
  llm.control({{"reply", "alpha beta gamma delta"}, {"delay_ms", 20}});
  ChatClient client(options_for(llm));
  int calls = 0;
  auto r = client.stream(question("x"), [&](std::string_view) { return ++calls < 2; });
  EXPECT_EQ(r.outcome, ChatOutcome::kCancelled);
  EXPECT_EQ(calls, 2);
}

TEST(ChatClient, UpstreamErrorStatusIsAClearFailure) {
  FakeLlmServer llm;
  llm.control({{"mode", "status"}, {"status", 503}});
  ChatClient client(options_for(llm));
  auto r = client.stream(question("x"), [](std::string_view) { return true; });
  EXPECT_EQ(r.outcome, ChatOutcome::kFailed);
  EXPECT_EQ(r.http_status, 503);
  EXPECT_NE(r.message.find("503"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("failing on purpose"), std::string::npos) << r.message;
}

TEST(ChatClient, StreamCutShortAndGarbageFail) {
  FakeLlmServer llm;
  ChatClient client(options_for(llm));
  llm.control({{"mode", "cut"}});
  auto cut = client.stream(question("a b c d e f"), [](std::string_view) { return true; });
  EXPECT_EQ(cut.outcome, ChatOutcome::kFailed);
  EXPECT_NE(cut.message.find("[DONE]"), std::string::npos) << cut.message;
  EXPECT_FALSE(cut.text.empty());
  llm.control({{"mode", "garbage"}});
  auto garbage = client.stream(question("x"), [](std::string_view) { return true; });
  EXPECT_EQ(garbage.outcome, ChatOutcome::kFailed);
  EXPECT_NE(garbage.message.find("server-sent events"), std::string::npos) << garbage.message;
}

TEST(ChatClient, TimeoutsEndAHungOrStalledEndpoint) {
  FakeLlmServer llm;
  ChatClientOptions o = options_for(llm);
  o.first_token_timeout_ms = 300;
  o.idle_timeout_ms = 300;
  ChatClient client(o);
  llm.control({{"mode", "hang"}});
  auto hung = client.stream(question("x"), [](std::string_view) { return true; });
  EXPECT_EQ(hung.outcome, ChatOutcome::kTimedOut);
  EXPECT_NE(hung.message.find("no answer within 300 ms"), std::string::npos) << hung.message;
  llm.control({{"mode", "ok"}, {"reply", "slow words here"}, {"delay_ms", 1500}});
  auto stalled = client.stream(question("x"), [](std::string_view) { return true; });
  EXPECT_EQ(stalled.outcome, ChatOutcome::kTimedOut);
  EXPECT_EQ(stalled.text, "slow");
}

TEST(ChatClient, NothingListeningIsAFailureNotAHang) {
  ChatClientOptions o;
  o.base_url = "http://127.0.0.1:1/v1";
  o.model = "m";
  o.allow_private = true;
  auto r = ChatClient(o).stream(question("x"), [](std::string_view) { return true; });
  EXPECT_EQ(r.outcome, ChatOutcome::kFailed);
  EXPECT_FALSE(r.message.empty());
}

TEST(ChatClient, PrivateAddressesNeedTheOperatorsPermission) {
  FakeLlmServer llm;
  ChatClientOptions o = options_for(llm);
  o.allow_private = false;
  auto r = ChatClient(o).stream(question("x"), [](std::string_view) { return true; });
  EXPECT_EQ(r.outcome, ChatOutcome::kRefused);
  EXPECT_NE(r.message.find("loopback"), std::string::npos) << r.message;
  EXPECT_TRUE(llm.requests().empty());
  o.base_url = "http://169.254.169.254/v1";  // metadata: refused even when private is allowed
  o.allow_private = true;
  EXPECT_EQ(ChatClient(o).stream(question("x"), [](std::string_view) { return true; }).outcome,
            ChatOutcome::kRefused);
  o.base_url = "ftp://127.0.0.1/v1";
  EXPECT_FALSE(ChatClient::validate(o).ok());
  o.base_url = "http://127.0.0.1/v1";
  o.model = "";
  EXPECT_FALSE(ChatClient::validate(o).ok());
}

TEST(ChatStreamParser, EventsSplitAnywhere) {
  std::string stream =
      ": keep-alive\r\n\r\n"
      "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\r\n\r\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
      "event: message\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n"
      "data: [DONE]\n\n";
  for (size_t step : {1u, 3u, 7u, 1000u}) {
    ChatStreamParser p;
    std::string text;
    for (size_t i = 0; i < stream.size(); i += step) {
      ASSERT_TRUE(p.feed(std::string_view(stream).substr(i, step), [&](std::string_view d) { text += d; }))
          << p.error();
    }
    EXPECT_EQ(text, "Hello");
    EXPECT_TRUE(p.done());
  }
  ChatStreamParser err;
  EXPECT_FALSE(err.feed("data: {\"error\":{\"message\":\"model not found\"}}\n\n", [](std::string_view) {}));
  EXPECT_NE(err.error().find("model not found"), std::string::npos);
}

TEST(ChatRequest, ImagesBecomeContentParts) {
  ChatClientOptions o;
  o.model = "m";
  std::string body = chat_request_body(o, {{"user", "What do you see?", {"data:image/jpeg;base64,AAAA"}}});
  auto v = json::parse(body);
  const auto& content = v.at("messages").as_array()[0].at("content").as_array();
  ASSERT_EQ(content.size(), 2u);
  EXPECT_EQ(content[1].at("type"), "image_url");
  EXPECT_EQ(content[1].at("image_url").at("url"), "data:image/jpeg;base64,AAAA");
  EXPECT_EQ(v.at("stream"), true);
}

}  // namespace
}  // namespace imago::conversation

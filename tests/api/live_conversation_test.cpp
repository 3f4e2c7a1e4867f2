// Conversation in live sessions over real WebSockets against the real imagod
// (docs/conversation.md): the built-in responder answering from injected knowledge, the operator's
// language model (the fake streaming server on loopback) receiving the system prompt, the
// injected context and the history, interrupt cancelling a streaming answer mid-sentence, and an
// upstream failure answered with an apology while the session goes on.
#include <gtest/gtest.h>

#include "fixtures/fake_llm.h"
#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "support/ws_client.h"
#include "util/base64.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

json::object obj(const WsMessage& m) {
  return json::parse(m.data).as_object();
}

bool speaking_audio(const WsMessage& m) {
  // Media header (docs/live-protocol.md): kind 2 = audio, flags bit 0 = speaking.
  return !m.text && m.data.size() >= 20 && uint8_t(m.data[0]) == 2 && (uint8_t(m.data[2]) & 1);
}

const char* kPrompt = "You are Nora, a guide at the city museum.";

struct Session {
  TestServer s;
  TestAccount acct;
  std::string code;
  std::unique_ptr<WsClient> ws;

  explicit Session(std::vector<std::string> args = {}, const std::string& query = "") : s(std::move(args)) {
    acct = s.create_account("enterprise", 5000);
    auto r = s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})",
                    acct.api_secret);
    EXPECT_EQ(r.status, 200) << r.body;
    code = str(r.json(), "agent_id");
    EXPECT_TRUE(eventually(
        [&] {
          return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready";
        },
        120));
    r = s.post("/v1/agent/" + code, json::serialize(json::object{{"system_prompt", kPrompt}}),
               acct.api_secret);
    EXPECT_EQ(r.status, 200) << r.body;
    std::string token =
        str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
    WsClient::Options o;
    o.bearer = token;
    ws = WsClient::connect(s.port(), "/v1/runtime/rooms/lobby?agent_code=" + code + query, o);
    EXPECT_TRUE(ws);
    if (ws) {
      EXPECT_TRUE(ws->read_event("session.started"));
    }
  }

  void send(const json::object& o) { ASSERT_TRUE(ws->send_text(json::serialize(o))); }

  // Every text event until `until` says stop (or 20 s), counting speaking audio frames.
  std::vector<json::object> events_until(const std::function<bool(const json::object&)>& until,
                                         int* speaking = nullptr, int timeout_ms = 20000) {
    std::vector<json::object> out;
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < end) {
      auto m = ws->read(1000);
      if (!m) continue;
      if (speaking_audio(*m) && speaking) ++*speaking;
      if (!m->text) continue;
      out.push_back(obj(*m));
      if (until(out.back())) break;
    }
    return out;
  }
};

bool is_final_agent(const json::object& e) {
  return e.at("type").as_string() == "transcript" && e.at("role").as_string() == "agent" &&
         e.at("final").as_bool();
}

const json::object* find(const std::vector<json::object>& ev, const std::string& type) {
  for (auto& e : ev)
    if (e.at("type").as_string() == type) return &e;
  return nullptr;
}

TEST(LiveConversation, BuiltinResponderAnswersFromInjectedContextWithCaptionsAndAudio) {
  Session S;
  ASSERT_TRUE(S.ws);
  auto r = S.s.post("/v1/agent/" + S.code + "/add-context",
                    R"({"context":"The museum opens at nine in the morning."})", S.acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  S.send({{"type", "user_text"}, {"text", "When does the museum open?"}});
  int speaking = 0;
  auto ev = S.events_until(
      [](const json::object& e) { return e.at("type").as_string() == "playback_finished"; }, &speaking);
  // The user's caption, thinking, the agent's answer (from the knowledge), its speech and audio.
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev[0].at("type").as_string(), "transcript");
  EXPECT_EQ(ev[0].at("role").as_string(), "user");
  EXPECT_EQ(ev[0].at("text").as_string(), "When does the museum open?");
  EXPECT_TRUE(ev[0].at("final").as_bool());
  EXPECT_TRUE(find(ev, "agent.thinking"));
  const json::object* final = nullptr;
  for (auto& e : ev)
    if (is_final_agent(e)) final = &e;
  ASSERT_TRUE(final);
  EXPECT_NE(std::string(final->at("text").as_string()).find("opens at nine"), std::string::npos)
      << json::serialize(*final);
  const json::object* started = find(ev, "speech.started");
  ASSERT_TRUE(started);
  // add_context itself said nothing: the first speech is the answer.
  EXPECT_NE(std::string(started->at("text").as_string()).find("opens at nine"), std::string::npos);
  EXPECT_GT(speaking, 10);
  EXPECT_FALSE(find(ev, "error"));
}

TEST(LiveConversation, LanguageModelGetsSystemPromptContextAndSpokenHistory) {
  FakeLlmServer llm;
  Session S({"--llm-base-url", llm.base_url(), "--llm-model", "fake-model", "--llm-allow-private"});
  ASSERT_TRUE(S.ws);
  S.send({{"type", "add_context"}, {"text", "The secret word is pineapple."}});
  S.send({{"type", "speak"}, {"text", "Hello, I am Nora."}});
  auto ev =
      S.events_until([](const json::object& e) { return e.at("type").as_string() == "playback_finished"; });
  ASSERT_TRUE(find(ev, "speech.started"));
  EXPECT_EQ(find(ev, "speech.started")->at("text").as_string(), "Hello, I am Nora.");

  S.send({{"type", "user_text"}, {"text", "What is the secret word?"}});
  int speaking = 0;
  ev = S.events_until([](const json::object& e) { return e.at("type").as_string() == "playback_finished"; },
                      &speaking);
  const json::object* final = nullptr;
  for (auto& e : ev)
    if (is_final_agent(e)) final = &e;
  ASSERT_TRUE(final);
  EXPECT_EQ(final->at("text").as_string(), "You said: What is the secret word?. That is all I know.");
  EXPECT_GT(speaking, 10);

  auto reqs = llm.requests();
  ASSERT_EQ(reqs.size(), 1u);
  json::object body = reqs[0].at("body").as_object();
  EXPECT_EQ(body.at("model").as_string(), "fake-model");
  EXPECT_TRUE(body.at("stream").as_bool());
  auto& msgs = body.at("messages").as_array();
  ASSERT_GE(msgs.size(), 3u);
  std::string system(msgs[0].at("content").as_string());
  EXPECT_EQ(msgs[0].at("role").as_string(), "system");
  EXPECT_NE(system.find(kPrompt), std::string::npos) << system;
  EXPECT_NE(system.find("The secret word is pineapple."), std::string::npos) << system;
  bool said = false;
  for (auto& m : msgs)
    said = said ||
           (m.at("role").as_string() == "assistant" && m.at("content").as_string() == "Hello, I am Nora.");
  EXPECT_TRUE(said) << json::serialize(msgs);
  EXPECT_EQ(msgs.back().at("content").as_string(), "What is the secret word?");
}

TEST(LiveConversation, InterruptCancelsAStreamingAnswerMidSentence) {
  FakeLlmServer llm;
  llm.control({{"reply",
                "Our first sentence is short. The second one streams so slowly that nobody should ever hear "
                "it end, because the viewer interrupts."},
               {"delay_ms", 250}});
  Session S({"--llm-base-url", llm.base_url(), "--llm-model", "fake-model", "--llm-allow-private"});
  ASSERT_TRUE(S.ws);
  S.send({{"type", "user_text"}, {"text", "Tell me a story."}});
  auto ev =
      S.events_until([](const json::object& e) { return e.at("type").as_string() == "speech.started"; });
  ASSERT_TRUE(find(ev, "speech.started"));
  EXPECT_EQ(find(ev, "speech.started")->at("text").as_string(), "Our first sentence is short.");
  S.send({{"type", "interrupt"}});
  ev = S.events_until([](const json::object& e) { return e.at("type").as_string() == "playback_finished"; });
  ASSERT_TRUE(find(ev, "playback_finished"));
  EXPECT_TRUE(find(ev, "playback_finished")->at("interrupted").as_bool());
  // The model request was aborted, and the rest of the answer is never spoken.
  EXPECT_TRUE(eventually([&] { return llm.cancelled() == 1; }, 5));
  ev = S.events_until([](const json::object&) { return false; }, nullptr, 3000);
  EXPECT_FALSE(find(ev, "speech.started"));
  for (auto& e : ev) {
    if (is_final_agent(e)) {
      EXPECT_EQ(e.at("text").as_string(), "Our first sentence is short.");
    }
  }
}

TEST(LiveConversation, UpstreamFailureApologisesAndTheSessionGoesOn) {
  FakeLlmServer llm;
  llm.control({{"mode", "status"}, {"status", 500}});
  Session S({"--llm-base-url", llm.base_url(), "--llm-model", "fake-model", "--llm-allow-private"});
  ASSERT_TRUE(S.ws);
  S.send({{"type", "user_text"}, {"text", "Are you there?"}});
  auto ev =
      S.events_until([](const json::object& e) { return e.at("type").as_string() == "playback_finished"; });
  const json::object* err = find(ev, "error");
  ASSERT_TRUE(err);
  EXPECT_EQ(err->at("code").as_string(), "LLM_UNAVAILABLE");
  ASSERT_TRUE(find(ev, "speech.started"));
  EXPECT_EQ(find(ev, "speech.started")->at("text").as_string(), "I'm sorry, I can't answer that right now.");

  llm.control({{"mode", "ok"}});
  S.send({{"type", "user_text"}, {"text", "And now?"}});
  ev = S.events_until(is_final_agent);
  ASSERT_FALSE(ev.empty());
  EXPECT_FALSE(find(ev, "error")) << json::serialize(*find(ev, "error"));
  EXPECT_TRUE(is_final_agent(ev.back()));
  EXPECT_EQ(ev.back().at("text").as_string(), "You said: And now?. That is all I know.");
}

TEST(LiveConversation, VoiceChatSendsAudioWithoutFramesAndBillsTenCreditsAMinute) {
  Session S({"--live-billing-period-s", "1"}, "&billing_type=voice_chat");
  ASSERT_TRUE(S.ws);
  S.send({{"type", "user_text"}, {"text", "Hello!"}});
  int audio = 0, video = 0, speaking = 0;
  for (int i = 0; i < 400 && speaking < 10; ++i) {
    auto m = S.ws->read();
    ASSERT_TRUE(m);
    if (m->text || m->data.size() < 20) continue;
    if (uint8_t(m->data[0]) == 1) ++video;
    if (uint8_t(m->data[0]) == 2) ++audio;
    if (speaking_audio(*m)) ++speaking;
  }
  EXPECT_GE(speaking, 10);
  EXPECT_GE(audio, speaking);
  EXPECT_EQ(video, 0);
  EXPECT_TRUE(eventually(
      [&] {
        json::value usage = S.s.get("/v1/usage?limit=100", S.acct.api_secret).json();
        for (auto& e : usage.at("data").as_array())
          if (str(e, "reason") == "live_minute:voice_chat") return e.at("amount").as_int64() == -10;
        return false;
      },
      10));
  EXPECT_EQ(str(S.s.get("/v1/rooms/lobby", S.acct.api_secret).json().at("data"), "billing_type"),
            "voice_chat");

  // Another mode in the query is refused before upgrading.
  int status = 0;
  std::string body;
  WsClient::Options o;
  o.bearer = str(S.s.post("/v1/runtime-tokens/request", "", S.acct.api_secret).json().at("data"), "token");
  EXPECT_FALSE(WsClient::connect(S.s.port(),
                                 "/v1/runtime/rooms/x?agent_code=" + S.code + "&billing_type=video_chat", o,
                                 &status, &body));
  EXPECT_EQ(status, 400) << body;
}

std::string jpeg_url(const std::string& file) {
  return "data:image/jpeg;base64," +
         base64_encode(read_file("/usr/share/doc/opencv-doc/examples/data/" + file));
}

TEST(LiveConversation, CameraChatSendsTheLatestFrameWithTheNextTurnAndBillsThirtyCreditsAMinute) {
  FakeLlmServer llm;
  Session S({"--llm-base-url", llm.base_url(), "--llm-model", "fake-model", "--llm-allow-private",
             "--llm-vision", "--live-billing-period-s", "1"},
            "&billing_type=camera_chat");
  ASSERT_TRUE(S.ws);
  auto is_error = [](const json::object& e) { return e.at("type").as_string() == "error"; };

  // A frame that is not what it declares is an error event; the session goes on.
  std::string fish = read_file("/usr/share/doc/opencv-doc/examples/data/HappyFish.jpg");
  S.send({{"type", "camera_frame"}, {"image", "data:image/png;base64," + base64_encode(fish)}});
  auto ev = S.events_until(is_error);
  ASSERT_TRUE(find(ev, "error"));
  EXPECT_EQ(find(ev, "error")->at("code").as_string(), "VALIDATION_ERROR");

  // Only the latest frame goes, with the next turn.
  S.send({{"type", "camera_frame"}, {"image", jpeg_url("blox.jpg")}});
  S.send({{"type", "camera_frame"}, {"image", jpeg_url("HappyFish.jpg")}});
  S.send({{"type", "user_text"}, {"text", "What am I holding?"}});
  ev = S.events_until(is_final_agent);
  ASSERT_FALSE(ev.empty());
  EXPECT_TRUE(is_final_agent(ev.back()));
  EXPECT_FALSE(find(ev, "error"));
  auto reqs = llm.requests();
  ASSERT_EQ(reqs.size(), 1u);
  auto& msgs = reqs[0].at("body").at("messages").as_array();
  ASSERT_TRUE(msgs.back().at("content").is_array()) << json::serialize(msgs.back());
  auto& parts = msgs.back().at("content").as_array();
  ASSERT_EQ(parts.size(), 2u) << json::serialize(parts);
  EXPECT_EQ(parts[0].at("type").as_string(), "text");
  EXPECT_EQ(parts[0].at("text").as_string(), "What am I holding?");
  EXPECT_EQ(parts[1].at("type").as_string(), "image_url");
  EXPECT_EQ(parts[1].at("image_url").at("url").as_string(), jpeg_url("HappyFish.jpg"));

  // A frame goes once: the next turn without a new one is text only, and the history stays text.
  S.send({{"type", "user_text"}, {"text", "Thanks."}});
  ev = S.events_until(is_final_agent);
  reqs = llm.requests();
  ASSERT_EQ(reqs.size(), 2u);
  for (auto& m : reqs[1].at("body").at("messages").as_array())
    EXPECT_TRUE(m.at("content").is_string()) << json::serialize(m);

  EXPECT_TRUE(eventually(
      [&] {
        json::value usage = S.s.get("/v1/usage?limit=100", S.acct.api_secret).json();
        for (auto& e : usage.at("data").as_array())
          if (str(e, "reason") == "live_minute:camera_chat") return e.at("amount").as_int64() == -30;
        return false;
      },
      10));
  EXPECT_EQ(str(S.s.get("/v1/rooms/lobby", S.acct.api_secret).json().at("data"), "billing_type"),
            "camera_chat");
}

TEST(LiveConversation, CameraChatNeedsAModelThatSeesAndFramesNeedACameraChatSession) {
  Session S;  // built-in responder, an avatar session
  ASSERT_TRUE(S.ws);
  S.send({{"type", "camera_frame"}, {"image", jpeg_url("HappyFish.jpg")}});
  auto ev = S.events_until([](const json::object& e) { return e.at("type").as_string() == "error"; });
  ASSERT_TRUE(find(ev, "error"));
  EXPECT_EQ(find(ev, "error")->at("code").as_string(), "VALIDATION_ERROR");
  EXPECT_NE(std::string(find(ev, "error")->at("message").as_string()).find("camera_chat"), std::string::npos);

  // Without a model that accepts images, camera_chat is refused before upgrading (nothing billed).
  int status = 0;
  std::string body;
  WsClient::Options o;
  o.bearer = str(S.s.post("/v1/runtime-tokens/request", "", S.acct.api_secret).json().at("data"), "token");
  EXPECT_FALSE(WsClient::connect(S.s.port(),
                                 "/v1/runtime/rooms/cam?agent_code=" + S.code + "&billing_type=camera_chat",
                                 o, &status, &body));
  EXPECT_EQ(status, 400);
  EXPECT_NE(body.find("--llm-vision"), std::string::npos) << body;
}

}  // namespace
}  // namespace imago::testing

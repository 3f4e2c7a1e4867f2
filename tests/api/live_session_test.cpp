// Live sessions over real WebSockets against the real imagod (docs/live-protocol.md): join and
// frames, two viewers of one room, speak/add-context/interrupt/trigger-dynamics, billing ticks,
// insufficient balance, pause after a rotated key, embed scope, capacity, ending.
#include <gtest/gtest.h>

#include <thread>

#include "fixtures/fixture.h"
#include "support/media_message.h"
#include "support/test_server.h"
#include "support/ws_client.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

json::object obj(const WsMessage& m) {
  return json::parse(m.data).as_object();
}

std::string ready_agent(const TestServer& s, const std::string& secret) {
  auto r = s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})", secret);
  EXPECT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  EXPECT_TRUE(eventually(
      [&] { return str(s.get("/v1/agent/" + code, secret).json().at("data"), "status") == "ready"; }, 120));
  return code;
}

std::string runtime_token(const TestServer& s, const std::string& secret) {
  return str(s.post("/v1/runtime-tokens/request", "", secret).json().at("data"), "token");
}

std::unique_ptr<WsClient> join(const TestServer& s, const std::string& room, const std::string& code,
                               const std::string& token, bool subprotocol = false, int* status = nullptr,
                               std::string* body = nullptr, std::string* proto = nullptr) {
  WsClient::Options o;
  o.bearer = token;
  o.via_subprotocol = subprotocol;
  return WsClient::connect(s.port(), "/v1/runtime/rooms/" + room + "?agent_code=" + code, o, status, body,
                           proto);
}

int count_reason(const TestServer& s, const std::string& secret, const std::string& reason) {
  int n = 0;
  json::value usage = s.get("/v1/usage?limit=100", secret).json();
  for (auto& e : usage.at("data").as_array()) n += str(e, "reason") == reason;
  return n;
}

struct Live {
  TestServer s;
  TestAccount acct;
  std::string code;
  explicit Live(std::vector<std::string> args = {}, long long credits = 2000) : s(std::move(args)) {
    acct = s.create_account("enterprise", credits);
    code = ready_agent(s, acct.api_secret);
  }
};

TEST(LiveSession, JoinSendsSessionStartedThenJpegFramesAndPcm) {
  Live L;
  auto ws = join(L.s, "lobby", L.code, runtime_token(L.s, L.acct.api_secret));
  ASSERT_TRUE(ws);
  auto first = ws->read();
  ASSERT_TRUE(first && first->text);
  auto st = obj(*first);
  EXPECT_EQ(st.at("type").as_string(), "session.started");
  EXPECT_EQ(st.at("room_id").as_string(), "lobby");
  EXPECT_EQ(st.at("agent_code").as_string(), L.code);
  EXPECT_EQ(std::string(st.at("session_id").as_string()).rfind("ses_", 0), 0u);
  EXPECT_EQ(st.at("fps").as_int64(), 25);
  EXPECT_EQ(st.at("audio_rate").as_int64(), 24000);
  EXPECT_EQ(st.at("width").as_int64(), 512);
  EXPECT_EQ(st.at("height").as_int64(), 512);
  int video = 0, audio = 0;
  std::map<uint32_t, int64_t> video_pts;
  for (int i = 0; i < 200 && (video < 10 || audio < 10); ++i) {
    auto m = ws->read();
    ASSERT_TRUE(m);
    auto x = media(*m);
    if (!x) continue;
    EXPECT_EQ(x->pts, int64_t(x->index) * 40000);
    if (x->kind == 1) {
      ++video;
      EXPECT_EQ(x->codec, 1);
      EXPECT_EQ(x->a, 512);
      EXPECT_EQ(x->b, 512);
      ASSERT_GE(x->payload.size(), 4u);
      EXPECT_EQ(uint8_t(x->payload[0]), 0xFF);  // JPEG SOI
      EXPECT_EQ(uint8_t(x->payload[1]), 0xD8);
    } else {
      ++audio;
      EXPECT_EQ(x->kind, 2);
      EXPECT_EQ(x->a, 960);
      EXPECT_EQ(x->payload.size(), 1920u);
    }
  }
  EXPECT_GE(video, 10);
  EXPECT_GE(audio, 10);
}

TEST(LiveSession, BadJoinsAreRefusedBeforeUpgrading) {
  Live L({"--max-live-sessions", "1"});
  int status = 0;
  std::string body;
  EXPECT_FALSE(join(L.s, "lobby", L.code, "", false, &status, &body));
  EXPECT_EQ(status, 401);
  EXPECT_FALSE(join(L.s, "lobby", L.code, "nope", false, &status, &body));
  EXPECT_EQ(status, 401);
  std::string t = runtime_token(L.s, L.acct.api_secret);
  EXPECT_FALSE(join(L.s, "lobby", "Z99ZZZ9999", t, false, &status, &body));
  EXPECT_EQ(status, 404);
  EXPECT_NE(body.find("Agent not found for code: Z99ZZZ9999"), std::string::npos) << body;
  EXPECT_FALSE(join(L.s, "lob%20by", L.code, t, false, &status, &body));
  EXPECT_EQ(status, 400);
  auto ws = join(L.s, "one", L.code, t);
  ASSERT_TRUE(ws);
  EXPECT_FALSE(join(L.s, "two", L.code, t, false, &status, &body));
  EXPECT_EQ(status, 503);  // capacity 1
}

TEST(LiveSession, TwoViewersShareOneSessionAndRestSpeakReachesBoth) {
  Live L;
  std::string t = runtime_token(L.s, L.acct.api_secret);
  auto a = join(L.s, "lobby", L.code, t);
  std::string proto;
  auto b = join(L.s, "lobby", L.code, t, true, nullptr, nullptr, &proto);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(proto, "imago.v1");
  auto sa = a->read_event("session.started");
  auto sb = b->read_event("session.started");
  ASSERT_TRUE(sa && sb);
  EXPECT_EQ(obj(*sa).at("session_id"), obj(*sb).at("session_id"));
  auto rooms = L.s.get("/v1/rooms", L.acct.api_secret).json().at("data").as_array();
  ASSERT_EQ(rooms.size(), 1u);
  EXPECT_EQ(rooms[0].at("viewers").as_int64(), 2);
  EXPECT_EQ(str(rooms[0], "state"), "active");

  auto r =
      L.s.post("/v1/agent/" + L.code + "/speak", R"({"message":"Hello both of you."})", L.acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = r.json();
  EXPECT_EQ(str(j, "agent_code"), L.code);
  EXPECT_EQ(str(j, "context_type"), "speak");
  EXPECT_EQ(j.at("delivered_to_rooms").as_int64(), 1);
  EXPECT_EQ(j.as_object().size(), 3u);
  for (auto* ws : {a.get(), b.get()}) {
    auto started = ws->read_event("speech.started");
    ASSERT_TRUE(started);
    EXPECT_EQ(obj(*started).at("text").as_string(), "Hello both of you.");
    int speaking = 0;
    std::optional<WsMessage> finished;
    for (int i = 0; i < 2000 && !finished; ++i) {
      auto m = ws->read();
      ASSERT_TRUE(m);
      if (auto x = media(*m); x && x->kind == 2 && (x->flags & 1)) ++speaking;
      if (m->text && obj(*m).at("type").as_string() == "playback_finished") finished = m;
    }
    ASSERT_TRUE(finished);
    EXPECT_GT(speaking, 10);
    EXPECT_FALSE(obj(*finished).at("interrupted").as_bool());
    EXPECT_EQ(obj(*finished).at("utterance_id"), obj(*started).at("utterance_id"));
  }
  // A named room that is not running.
  r = L.s.post("/v1/agent/" + L.code + "/speak", R"({"message":"x","room_id":"elsewhere"})",
               L.acct.api_secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(str(r.json().at("error"), "message"), "No active rooms found for agent " + L.code);
}

TEST(LiveSession, AddContextIsKeptAndSpeakTypeSpeaks) {
  Live L;
  auto ws = join(L.s, "lobby", L.code, runtime_token(L.s, L.acct.api_secret));
  ASSERT_TRUE(ws && ws->read_event("session.started"));
  auto r = L.s.post("/v1/agent/" + L.code + "/add-context", R"({"context":"The shop opens at nine."})",
                    L.acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(str(r.json(), "context_type"), "add_context");
  EXPECT_EQ(r.json().at("delivered_to_rooms").as_int64(), 1);
  EXPECT_EQ(L.s.get("/v1/rooms/lobby", L.acct.api_secret).json().at("data").at("context_items").as_int64(),
            1);
  r = L.s.post("/v1/agent/" + L.code + "/add-context",
               R"({"context":"Say this.","type":"speak","room_id":"lobby"})", L.acct.api_secret);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(str(r.json(), "context_type"), "speak");
  auto started = ws->read_event("speech.started");
  ASSERT_TRUE(started);
  EXPECT_EQ(obj(*started).at("text").as_string(), "Say this.");
}

TEST(LiveSession, InterruptSilencesAtOnceAndReportsInterruptedPlayback) {
  Live L;
  auto ws = join(L.s, "lobby", L.code, runtime_token(L.s, L.acct.api_secret));
  ASSERT_TRUE(ws && ws->read_event("session.started"));
  ASSERT_TRUE(ws->send_text(
      R"({"type":"speak","text":"This is a long sentence that would keep the agent talking for quite a few seconds if nobody stopped it."})"));
  ASSERT_TRUE(ws->read_event("speech.started"));
  auto r = L.s.post("/v1/rooms/lobby/interrupt", "", L.acct.api_secret);
  ASSERT_EQ(r.status, 200);
  auto finished = ws->read_event("playback_finished", 2000);
  ASSERT_TRUE(finished);
  EXPECT_TRUE(obj(*finished).at("interrupted").as_bool());
  // Nothing after the event carries speech.
  int after = 0, speaking_after = 0;
  for (int i = 0; i < 40; ++i) {
    auto m = ws->read(1000);
    ASSERT_TRUE(m);
    if (auto x = media(*m); x && x->kind == 2) {
      ++after;
      if (x->flags & 1) ++speaking_after;
    }
  }
  EXPECT_GT(after, 5);
  EXPECT_EQ(speaking_after, 0);
}

TEST(LiveSession, TriggerDynamicsAnswersAndFollowsTheToggle) {
  Live L;
  auto ws = join(L.s, "lobby", L.code, runtime_token(L.s, L.acct.api_secret));
  ASSERT_TRUE(ws && ws->read_event("session.started"));
  ws->send_text(R"({"type":"trigger_dynamics","action":"mini_wave_hello"})");
  auto d = ws->read_event("dynamics.triggered");
  ASSERT_TRUE(d);
  EXPECT_EQ(obj(*d).at("action").as_string(), "mini_wave_hello");
  EXPECT_FALSE(obj(*d).at("animation_triggered").as_bool());
  ws->send_text(R"({"type":"trigger_dynamics","action":"moonwalk"})");
  auto e = ws->read_event("error");
  ASSERT_TRUE(e);
  EXPECT_EQ(obj(*e).at("code").as_string(), "VALIDATION_ERROR");
  EXPECT_EQ(
      L.s.post("/v1/agent/" + L.code + "/trigger-dynamics", R"({"action":"moonwalk"})", L.acct.api_secret)
          .status,
      400);

  ASSERT_EQ(
      L.s.put("/v1/dynamics/" + L.code, R"({"dynamics":{},"toggle_enabled":true})", L.acct.api_secret).status,
      200);
  // The room re-reads the agent's dynamics every few seconds: no restart.
  ASSERT_TRUE(eventually(
      [&] {
        auto r = L.s.post("/v1/agent/" + L.code + "/trigger-dynamics", R"({"action":"laugh_react"})",
                          L.acct.api_secret);
        return r.status == 200 && r.json().at("animation_triggered").as_bool();
      },
      10));
  auto r = L.s.post("/v1/agent/" + L.code + "/trigger-dynamics",
                    R"({"action":"laugh_react","room_id":"lobby"})", L.acct.api_secret);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json().at("delivered_to_rooms").as_int64(), 1);
  EXPECT_TRUE(ws->read_event("dynamics.triggered"));
}

TEST(LiveSession, BillingTicksChargeEachMinuteOnceInTheLedger) {
  Live L({"--live-billing-period-s", "1"});
  auto ws = join(L.s, "lobby", L.code, runtime_token(L.s, L.acct.api_secret));
  ASSERT_TRUE(ws);
  auto started = ws->read_event("session.started");
  ASSERT_TRUE(started);
  std::string session = std::string(obj(*started).at("session_id").as_string());
  ASSERT_TRUE(
      eventually([&] { return count_reason(L.s, L.acct.api_secret, "live_minute:essence_cloud") >= 3; }, 10));
  std::set<std::string> keys;
  json::value usage = L.s.get("/v1/usage?limit=100", L.acct.api_secret).json();
  for (auto& e : usage.at("data").as_array()) {
    if (str(e, "reason") != "live_minute:essence_cloud") continue;
    EXPECT_EQ(e.at("amount").as_int64(), -2);
    keys.insert(str(e, "operation_key"));
  }
  EXPECT_TRUE(keys.count("live_minute:" + session + ":0"));
  EXPECT_TRUE(keys.count("live_minute:" + session + ":1"));
  EXPECT_TRUE(keys.count("live_minute:" + session + ":2"));
  EXPECT_GE(L.s.get("/v1/rooms/lobby", L.acct.api_secret).json().at("data").at("billed_minutes").as_int64(),
            3);
}

TEST(LiveSession, InsufficientBalanceEndsTheSession) {
  // 250 credits pay the agent; 3 more pay one essence minute (2) but not the second.
  Live L({"--live-billing-period-s", "1"}, 253);
  auto ws = join(L.s, "lobby", L.code, runtime_token(L.s, L.acct.api_secret));
  ASSERT_TRUE(ws && ws->read_event("session.started"));
  auto ended = ws->read_event("session.ended", 10000);
  ASSERT_TRUE(ended);
  EXPECT_EQ(obj(*ended).at("reason").as_string(), "insufficient_balance");
  EXPECT_TRUE(eventually([&] { return ws->closed(); }, 5));
  EXPECT_EQ(ws->close_code(), 1000);
  EXPECT_EQ(count_reason(L.s, L.acct.api_secret, "live_minute:essence_cloud"), 1);
  EXPECT_TRUE(L.s.get("/v1/rooms", L.acct.api_secret).json().at("data").as_array().empty());
}

TEST(LiveSession, RotatedKeyFailsTheHeartbeatThenThePauseEndsWithANewToken) {
  Live L({"--live-grace-s", "2"});
  std::string old_token = runtime_token(L.s, L.acct.api_secret);
  auto ws = join(L.s, "lobby", L.code, old_token);
  ASSERT_TRUE(ws && ws->read_event("session.started"));
  std::string key_id = str(L.s.get("/v1/keys", L.acct.api_secret).json().at("data").as_array().at(0), "id");
  auto rot = L.s.post("/v1/keys/" + key_id + "/rotate", "", L.acct.api_secret);
  ASSERT_EQ(rot.status, 201);
  std::string new_secret = str(rot.json().at("data"), "api_secret");
  ws->send_text(json::serialize(json::object{{"type", "heartbeat"}, {"token", old_token}}));
  auto e = ws->read_event("error");
  ASSERT_TRUE(e);
  EXPECT_EQ(obj(*e).at("code").as_string(), "UNAUTHORIZED");
  ASSERT_TRUE(ws->read_event("session.paused", 6000));
  EXPECT_EQ(str(L.s.get("/v1/rooms/lobby", new_secret).json().at("data"), "state"), "paused");
  // Paused: no frames.
  int media_msgs = 0;
  for (int i = 0; i < 5; ++i) {
    auto m = ws->read(200);
    if (m && !m->text) ++media_msgs;
  }
  EXPECT_LE(media_msgs, 12);  // at most what was in flight
  ws->send_text(
      json::serialize(json::object{{"type", "heartbeat"}, {"token", runtime_token(L.s, new_secret)}}));
  ASSERT_TRUE(ws->read_event("heartbeat.ok"));
  ASSERT_TRUE(ws->read_event("session.resumed", 3000));
}

TEST(LiveSession, EmbedTokenJoinsOnlyItsAgentAndCannotAddContext) {
  Live L;
  std::string other = ready_agent(L.s, L.acct.api_secret);
  auto r = L.s.post("/v1/embed-tokens/request", R"({"agent_id":")" + L.code + R"(","fingerprint":"f00d"})",
                    L.acct.api_secret);
  std::string embed = str(r.json().at("data"), "token");
  int status = 0;
  EXPECT_FALSE(join(L.s, "lobby", other, embed, true, &status));
  EXPECT_EQ(status, 403);
  auto ws = join(L.s, "lobby", L.code, embed, true);
  ASSERT_TRUE(ws && ws->read_event("session.started"));
  ws->send_text(R"({"type":"add_context","text":"secret"})");
  auto e = ws->read_event("error");
  ASSERT_TRUE(e);
  EXPECT_EQ(obj(*e).at("code").as_string(), "FORBIDDEN");
  // An embed viewer may talk: the conversation hears the turn and the agent answers it.
  ws->send_text(R"({"type":"user_text","text":"Hello from the page."})");
  auto t = ws->read_event("transcript");
  ASSERT_TRUE(t);
  EXPECT_EQ(obj(*t).at("role").as_string(), "user");
  EXPECT_EQ(obj(*t).at("text").as_string(), "Hello from the page.");
  ASSERT_TRUE(ws->read_event("speech.started"));
}

TEST(LiveSession, DeleteEndsTheSessionAndAReconnectStartsAFreshOne) {
  Live L({"--live-left-s", "1"});
  std::string t = runtime_token(L.s, L.acct.api_secret);
  auto ws = join(L.s, "lobby", L.code, t);
  auto first = ws->read_event("session.started");
  ASSERT_TRUE(first);
  // A dropped viewer that comes back within the left window gets the same session.
  ws->close();
  auto again = join(L.s, "lobby", L.code, t);
  auto second = again->read_event("session.started");
  ASSERT_TRUE(second);
  EXPECT_EQ(obj(*first).at("session_id"), obj(*second).at("session_id"));

  auto r = L.s.del("/v1/rooms/lobby", L.acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(str(r.json(), "reason"), "terminated");
  auto ended = again->read_event("session.ended");
  ASSERT_TRUE(ended);
  EXPECT_EQ(obj(*ended).at("reason").as_string(), "terminated");
  EXPECT_TRUE(L.s.get("/v1/rooms", L.acct.api_secret).json().at("data").as_array().empty());
  // Left: the last viewer gone for longer than --live-left-s ends it.
  auto third = join(L.s, "lobby", L.code, t);
  ASSERT_TRUE(third && third->read_event("session.started"));
  third->close();
  EXPECT_TRUE(eventually(
      [&] { return L.s.get("/v1/rooms", L.acct.api_secret).json().at("data").as_array().empty(); }, 5));
}

TEST(LiveSession, ShutdownEndsSessionsWithReasonShutdown) {
  Live L;
  auto ws = join(L.s, "lobby", L.code, runtime_token(L.s, L.acct.api_secret));
  ASSERT_TRUE(ws && ws->read_event("session.started"));
  L.s.stop();
  auto ended = ws->read_event("session.ended", 10000);
  ASSERT_TRUE(ended);
  EXPECT_EQ(obj(*ended).at("reason").as_string(), "shutdown");
}

}  // namespace
}  // namespace imago::testing

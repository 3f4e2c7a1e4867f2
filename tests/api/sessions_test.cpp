// /v1/sessions against the real imagod (docs/sessions.md): a session with speak text and a typed
// turn, ended with DELETE, listed, its transcript read in order with times, the signed
// session.ended webhook; recordings switched on at the join and by REST, their validation and
// deletion; another account sees nothing.
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "support/ws_client.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

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

std::unique_ptr<WsClient> join(const TestServer& s, const std::string& path, const std::string& token,
                               int* status = nullptr, std::string* body = nullptr) {
  WsClient::Options o;
  o.bearer = token;
  return WsClient::connect(s.port(), path, o, status, body);
}

json::object obj(const WsMessage& m) {
  return json::parse(m.data).as_object();
}

// Reads until a `transcript` event matching `pred`.
std::optional<json::object> transcript_event(WsClient& ws,
                                             const std::function<bool(const json::object&)>& pred) {
  for (int i = 0; i < 4000; ++i) {
    auto m = ws.read(20000);
    if (!m) return std::nullopt;
    if (!m->text) continue;
    auto o = obj(*m);
    if (o.at("type").as_string() == "transcript" && pred(o)) return o;
  }
  return std::nullopt;
}

TEST(Sessions, SpeakAndATurnEndListTranscriptInOrderWithTimesAndWebhook) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 2000);
  auto other = s.create_account("enterprise", 2000);
  auto hook = s.post("/v1/webhooks",
                     json::serialize(json::object{{"url", fx.url() + "/hook/ended"},
                                                  {"events", json::array{"session.ended"}}}),
                     acct.api_secret);
  ASSERT_EQ(hook.status, 200) << hook.body;
  fx.set_secret("ended", str(hook.json().at("data"), "secret"));
  const std::string code = ready_agent(s, acct.api_secret);

  auto ws = join(s, "/v1/runtime/rooms/lobby?agent_code=" + code, runtime_token(s, acct.api_secret));
  ASSERT_TRUE(ws);
  auto started = ws->read_event("session.started");
  ASSERT_TRUE(started);
  const std::string id(obj(*started).at("session_id").as_string());

  // Text given to speak: one final transcript event (with its times) once it has been played.
  const std::string welcome = "Welcome to the demo.";
  auto sp = s.post("/v1/agent/" + code + "/speak", json::serialize(json::object{{"message", welcome}}),
                   acct.api_secret);
  ASSERT_EQ(sp.status, 200) << sp.body;
  auto said =
      transcript_event(*ws, [](const json::object& o) { return o.at("role").as_string() == "agent"; });
  ASSERT_TRUE(said);
  EXPECT_EQ(said->at("text").as_string(), welcome);
  EXPECT_EQ(said->at("source").as_string(), "speak");
  EXPECT_TRUE(said->at("final").as_bool());
  EXPECT_LE(said->at("start_ms").as_int64(), said->at("end_ms").as_int64());
  EXPECT_GT(said->at("end_ms").as_int64(), 0);

  // A typed turn and the (built-in) answer: its sentences come as non-final captions, then final.
  const std::string question = "What can you tell me about this place?";
  ASSERT_TRUE(ws->send_text(json::serialize(json::object{{"type", "user_text"}, {"text", question}})));
  auto answer = transcript_event(*ws, [](const json::object& o) {
    return o.at("role").as_string() == "agent" && o.at("final").as_bool();
  });
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->at("source").as_string(), "responder");
  const std::string answer_text(answer->at("text").as_string());

  auto live = s.get("/v1/sessions/" + id, acct.api_secret);
  ASSERT_EQ(live.status, 200) << live.body;
  EXPECT_EQ(str(live.json(), "status"), "active");
  EXPECT_TRUE(live.json().at("ended_at").is_null());
  EXPECT_TRUE(live.json().at("end_reason").is_null());

  ASSERT_EQ(s.del("/v1/rooms/lobby", acct.api_secret).status, 200);
  auto ended = s.get("/v1/sessions/" + id, acct.api_secret);
  ASSERT_EQ(ended.status, 200) << ended.body;
  auto e = ended.json();
  EXPECT_EQ(str(e, "status"), "ended");
  EXPECT_EQ(str(e, "end_reason"), "terminated");
  EXPECT_EQ(str(e, "agent_code"), code);
  EXPECT_EQ(str(e, "room_id"), "lobby");
  EXPECT_EQ(str(e, "billing_type"), "essence_cloud");
  EXPECT_FALSE(e.at("ended_at").is_null());
  EXPECT_GT(e.at("duration_seconds").to_number<double>(), 0.0);
  EXPECT_GE(e.at("minutes_charged").as_int64(), 1);
  EXPECT_EQ(e.at("viewers_peak").as_int64(), 1);
  EXPECT_TRUE(e.at("recording").is_null());
  EXPECT_EQ(str(e, "transcript_url"), s.url() + "/v1/sessions/" + id + "/transcript");

  auto list = s.get("/v1/sessions?limit=10", acct.api_secret);
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.json().at("data").as_array().size(), 1u);
  EXPECT_EQ(str(list.json().at("data").as_array()[0], "session_id"), id);
  EXPECT_EQ(list.json().at("pagination").at("total").as_int64(), 1);
  EXPECT_FALSE(list.json().at("pagination").at("has_more").as_bool());
  EXPECT_EQ(s.get("/v1/sessions?limit=0", acct.api_secret).status, 400);

  // The transcript: each line once, in time order, with times.
  json::array lines;
  ASSERT_TRUE(eventually([&] {
    auto t = s.get("/v1/sessions/" + id + "/transcript", acct.api_secret);
    if (t.status != 200) return false;
    lines = t.json().at("data").as_array();
    return lines.size() >= 3;
  }));
  ASSERT_EQ(lines.size(), 3u) << json::serialize(lines);
  EXPECT_EQ(str(lines[0], "role"), "agent");
  EXPECT_EQ(str(lines[0], "source"), "speak");
  EXPECT_EQ(str(lines[0], "text"), welcome);
  EXPECT_EQ(str(lines[1], "role"), "user");
  EXPECT_EQ(str(lines[1], "source"), "text");
  EXPECT_EQ(str(lines[1], "text"), question);
  EXPECT_EQ(str(lines[2], "role"), "agent");
  EXPECT_EQ(str(lines[2], "source"), "responder");
  EXPECT_EQ(str(lines[2], "text"), answer_text);
  int64_t last = 0;
  for (const auto& l : lines) {
    EXPECT_GE(l.at("start_ms").as_int64(), last);
    EXPECT_LE(l.at("start_ms").as_int64(), l.at("end_ms").as_int64());
    last = l.at("start_ms").as_int64();
  }

  // No recording; another account's view is 404 everywhere.
  auto rec = s.get("/v1/sessions/" + id + "/recording", acct.api_secret);
  EXPECT_EQ(rec.status, 404);
  EXPECT_EQ(str(rec.json().at("error"), "code"), "NOT_FOUND");
  EXPECT_EQ(s.del("/v1/sessions/" + id + "/recording", acct.api_secret).status, 404);
  EXPECT_EQ(s.get("/v1/sessions/" + id, other.api_secret).status, 404);
  EXPECT_EQ(s.get("/v1/sessions/" + id + "/transcript", other.api_secret).status, 404);
  EXPECT_EQ(s.get("/v1/sessions/" + id + "/recording", other.api_secret).status, 404);
  EXPECT_EQ(s.get("/v1/sessions", other.api_secret).json().at("pagination").at("total").as_int64(), 0);
  EXPECT_EQ(s.get("/v1/sessions/ses_nope", acct.api_secret).status, 404);

  // session.ended, signed, once.
  json::array got;
  ASSERT_TRUE(eventually([&] {
    got = fx.hooks("ended");
    return !got.empty();
  }));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(str(got[0].at("headers"), "x-imago-event"), "session.ended");
  EXPECT_EQ(got[0].at("verified"), json::value(true));
  auto payload = json::parse(str(got[0], "body"));
  EXPECT_EQ(str(payload, "type"), "session.ended");
  const auto& d = payload.at("data");
  EXPECT_EQ(str(d, "session_id"), id);
  EXPECT_EQ(str(d, "agent_code"), code);
  EXPECT_EQ(str(d, "room_id"), "lobby");
  EXPECT_EQ(str(d, "end_reason"), "terminated");
  EXPECT_EQ(d.at("minutes_charged").as_int64(), e.at("minutes_charged").as_int64());
  EXPECT_GT(d.at("duration_seconds").to_number<double>(), 0.0);
  EXPECT_TRUE(d.at("recording_url").is_null());
  EXPECT_EQ(str(d, "transcript_url"), s.url() + "/v1/sessions/" + id + "/transcript");
}

TEST(Sessions, RecordingIsAskedAtTheJoinOrByRestAndValidated) {
  TestServer s;
  auto acct = s.create_account("enterprise", 2000);
  const std::string code = ready_agent(s, acct.api_secret);
  const std::string token = runtime_token(s, acct.api_secret);

  int status = 0;
  std::string body;
  EXPECT_FALSE(join(s, "/v1/runtime/rooms/rec?agent_code=" + code + "&record=maybe", token, &status, &body));
  EXPECT_EQ(status, 400) << body;
  auto embed = s.post("/v1/embed-tokens/request", R"({"agent_id":")" + code + R"(","fingerprint":"f00d"})",
                      acct.api_secret);
  ASSERT_EQ(embed.status, 200) << embed.body;
  EXPECT_FALSE(join(s, "/v1/runtime/rooms/rec?agent_code=" + code + "&record=true",
                    str(embed.json().at("data"), "token"), &status, &body));
  EXPECT_EQ(status, 403) << body;
  EXPECT_EQ(s.post("/v1/rooms/nope/recording", "", acct.api_secret).status, 404);

  auto ws = join(s, "/v1/runtime/rooms/rec?agent_code=" + code + "&record=true", token);
  ASSERT_TRUE(ws);
  auto started = ws->read_event("session.started");
  ASSERT_TRUE(started);
  const std::string id(obj(*started).at("session_id").as_string());
  auto live = s.get("/v1/sessions/" + id, acct.api_secret);
  ASSERT_EQ(live.status, 200);
  ASSERT_TRUE(live.json().at("recording").is_object()) << live.body;
  EXPECT_EQ(str(live.json().at("recording"), "status"), "recording");
  EXPECT_TRUE(live.json().at("recording").at("url").is_null());

  EXPECT_EQ(s.post("/v1/rooms/rec/recording", R"({"enabled":false})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/rooms/rec/recording", R"({"enabled":"yes"})", acct.api_secret).status, 400);
  auto again = s.post("/v1/rooms/rec/recording", R"({"enabled":true})", acct.api_secret);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(str(again.json(), "session_id"), id);
  EXPECT_TRUE(again.json().at("recording").as_bool());

  // The room's one encoder feeds the recorder (a MediaSink beside the viewers): let it speak.
  auto sp =
      s.post("/v1/agent/" + code + "/speak",
             json::serialize(json::object{{"message", "This session is being recorded."}}), acct.api_secret);
  ASSERT_EQ(sp.status, 200) << sp.body;
  ASSERT_TRUE(ws->read_event("playback_finished", 30000));
  ASSERT_EQ(s.del("/v1/rooms/rec", acct.api_secret).status, 200);
  // Once the recorder has finished, the session says how it went; the recording downloads as MP4
  // with H.264 and Opus.
  json::value after;
  ASSERT_TRUE(eventually([&] {
    after = s.get("/v1/sessions/" + id, acct.api_secret).json();
    return after.at("recording").is_object() && str(after.at("recording"), "status") != "recording";
  }));
  ASSERT_EQ(str(after.at("recording"), "status"), "ready") << json::serialize(after);
  EXPECT_EQ(str(after.at("recording"), "video_codec"), "h264") << json::serialize(after);
  EXPECT_EQ(str(after.at("recording"), "audio_codec"), "opus") << json::serialize(after);
  EXPECT_GT(after.at("recording").at("duration_seconds").to_number<double>(), 1.0) << json::serialize(after);
  auto mp4 = s.get("/v1/sessions/" + id + "/recording", acct.api_secret);
  ASSERT_EQ(mp4.status, 200);
  EXPECT_EQ(mp4.body.substr(4, 4), "ftyp");
  EXPECT_NE(mp4.body.find("avc1"), std::string::npos);
  EXPECT_NE(mp4.body.find("Opus"), std::string::npos);
  EXPECT_EQ(s.del("/v1/sessions/" + id + "/recording", acct.api_secret).status, 200);
  EXPECT_TRUE(s.get("/v1/sessions/" + id, acct.api_secret).json().at("recording").is_null());
  EXPECT_EQ(s.del("/v1/sessions/" + id + "/recording", acct.api_secret).status, 404);

  // A room started without recording is recorded from the REST call on.
  auto ws2 = join(s, "/v1/runtime/rooms/later?agent_code=" + code, token);
  ASSERT_TRUE(ws2);
  auto started2 = ws2->read_event("session.started");
  ASSERT_TRUE(started2);
  const std::string id2(obj(*started2).at("session_id").as_string());
  EXPECT_TRUE(s.get("/v1/sessions/" + id2, acct.api_secret).json().at("recording").is_null());
  ASSERT_EQ(s.post("/v1/rooms/later/recording", "", acct.api_secret).status, 200);
  EXPECT_EQ(str(s.get("/v1/sessions/" + id2, acct.api_secret).json().at("recording"), "status"), "recording");
}

}  // namespace
}  // namespace imago::testing

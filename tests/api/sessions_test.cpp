// /v1/sessions against the real imagod (docs/sessions.md): a session with speak text and a typed
// turn, ended with DELETE, listed, its transcript read in order with times, the signed
// session.ended webhook; recordings switched on at the join and by REST, their validation and
// deletion; another account sees nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

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
  // One agent's sessions (the agent page lists them): this agent's, none of another code's.
  auto mine = s.get("/v1/sessions?agent_code=" + code, acct.api_secret);
  ASSERT_EQ(mine.status, 200) << mine.body;
  ASSERT_EQ(mine.json().at("data").as_array().size(), 1u);
  EXPECT_EQ(str(mine.json().at("data").as_array()[0], "session_id"), id);
  auto others = s.get("/v1/sessions?agent_code=NOSUCHAGENT", acct.api_secret);
  ASSERT_EQ(others.status, 200) << others.body;
  EXPECT_EQ(others.json().at("data").as_array().size(), 0u);
  EXPECT_EQ(others.json().at("pagination").at("total").as_int64(), 0);
  auto bad = s.get("/v1/sessions?agent_code=", acct.api_secret);
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.json().at("error").at("code").as_string(), "VALIDATION_ERROR") << bad.body;

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

// ffprobe's view of an MP4 (streams and format as JSON); null when it cannot read it.
json::value ffprobe(const std::string& mp4_bytes) {
  char path[] = "/tmp/imago-recording-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return nullptr;
  const bool written = ::write(fd, mp4_bytes.data(), mp4_bytes.size()) == ssize_t(mp4_bytes.size());
  ::close(fd);
  std::string out;
  if (written) {
    const std::string cmd =
        std::string("ffprobe -v error -count_packets -show_streams -show_format -of json ") + path +
        " 2>/dev/null";
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
      pclose(p);
    }
  }
  ::unlink(path);
  boost::system::error_code ec;
  auto v = json::parse(out, ec);
  return ec ? json::value(nullptr) : v;
}

const json::object* stream_of(const json::value& probe, const std::string& type) {
  if (!probe.is_object()) return nullptr;
  for (const auto& st : probe.at("streams").as_array())
    if (st.as_object().at("codec_type").as_string() == type) return &st.as_object();
  return nullptr;
}

double number(const json::object& o, const char* key) {
  const auto& v = o.at(key);
  return v.is_string() ? std::stod(std::string(v.as_string())) : v.to_number<double>();
}

// What a customer downloads after a session with speech, an interrupt and a gesture: H.264 at 25
// fps and Opus, each as long as the session ran (within half a second), and the transcript in
// the order things were said.
TEST(Sessions, ARecordedSessionWithSpeechAnInterruptAndAGestureProbesAsH264AndOpusAt25Fps) {
  TestServer s;
  auto acct = s.create_account("enterprise", 2000);
  const std::string code = ready_agent(s, acct.api_secret);
  ASSERT_EQ(s.put("/v1/dynamics/" + code, R"({"dynamics":{},"toggle_enabled":true})", acct.api_secret).status,
            200);
  auto ws = join(s, "/v1/runtime/rooms/probe?agent_code=" + code + "&record=true",
                 runtime_token(s, acct.api_secret));
  ASSERT_TRUE(ws);
  auto started = ws->read_event("session.started");
  ASSERT_TRUE(started);
  const std::string id(obj(*started).at("session_id").as_string());
  auto say = [&](const std::string& text) {
    auto r = s.post("/v1/agent/" + code + "/speak",
                    json::serialize(json::object{{"message", text}, {"room_id", "probe"}}), acct.api_secret);
    ASSERT_EQ(r.status, 200) << r.body;
  };
  say("This is a long first sentence that will be cut off by an interrupt before it can finish at all.");
  ASSERT_TRUE(ws->read_event("speech.started", 30000));
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  ASSERT_EQ(s.post("/v1/rooms/probe/interrupt", "", acct.api_secret).status, 200);
  ASSERT_TRUE(eventually(
      [&] {
        auto r = s.post("/v1/agent/" + code + "/trigger-dynamics",
                        R"({"action":"mini_wave_hello","room_id":"probe"})", acct.api_secret);
        return r.status == 200 && r.json().at("animation_triggered").as_bool();
      },
      10));
  say("And this second sentence is heard to its end.");
  for (int i = 0; i < 3; ++i) {  // the interrupted turn's, then the second sentence's
    auto f = ws->read_event("playback_finished", 30000);
    ASSERT_TRUE(f);
    if (!obj(*f).at("interrupted").as_bool()) break;
  }
  ASSERT_EQ(s.del("/v1/rooms/probe", acct.api_secret).status, 200);

  json::value after;
  ASSERT_TRUE(eventually([&] {
    after = s.get("/v1/sessions/" + id, acct.api_secret).json();
    return after.at("recording").is_object() && str(after.at("recording"), "status") != "recording";
  }));
  ASSERT_EQ(str(after.at("recording"), "status"), "ready") << json::serialize(after);
  const double session_s = after.at("duration_seconds").to_number<double>();
  auto probe = ffprobe(s.get("/v1/sessions/" + id + "/recording", acct.api_secret).body);
  ASSERT_TRUE(probe.is_object()) << "ffprobe could not read the recording";
  const auto* video = stream_of(probe, "video");
  const auto* audio = stream_of(probe, "audio");
  ASSERT_TRUE(video && audio) << json::serialize(probe);
  EXPECT_EQ(video->at("codec_name").as_string(), "h264");
  EXPECT_EQ(video->at("r_frame_rate").as_string(), "25/1");
  EXPECT_EQ(audio->at("codec_name").as_string(), "opus");
  // Audio is never dropped: its 40 ms packets (one per picture, two Opus frames each) add up to
  // the session. Pictures are what a loaded room skips (each then shows longer), so the video
  // track's span is compared, not its count.
  EXPECT_NEAR(number(*audio, "nb_read_packets") * 0.040, session_s, 0.5) << json::serialize(probe);
  EXPECT_NEAR(number(*video, "duration"), session_s, 0.5) << json::serialize(probe);
  EXPECT_NEAR(number(*audio, "duration"), session_s, 0.5) << json::serialize(probe);
  EXPECT_NEAR(number(probe.at("format").as_object(), "duration"), session_s, 0.5);
  EXPECT_NEAR(after.at("recording").at("duration_seconds").to_number<double>(), session_s, 0.5);

  auto t = s.get("/v1/sessions/" + id + "/transcript", acct.api_secret);
  ASSERT_EQ(t.status, 200) << t.body;
  std::vector<std::string> texts;
  const json::value lines = t.json();
  for (const auto& line : lines.at("data").as_array()) texts.emplace_back(line.at("text").as_string());
  auto at = [&](const std::string& part) {
    for (size_t i = 0; i < texts.size(); ++i)
      if (texts[i].find(part) != std::string::npos) return int(i);
    return -1;
  };
  EXPECT_GE(at("long first sentence"), 0) << t.body;
  EXPECT_GT(at("second sentence"), at("long first sentence")) << t.body;
}

// kill -9 mid-session: at the node's next start the session is ended (reason shutdown, at its
// last sign of life), its recording holds what was flushed before the kill and plays, and the
// session.ended webhook goes out once.
TEST(Sessions, ASessionKilledMidwayEndsAtTheNodesRestartWithAPlayableRecording) {
  FixtureServer fx;
  const std::string dir = make_temp_dir();
  std::string id, code;
  TestAccount acct;
  {
    TestServer s(dir, {"--allow-private-fetch"}, {});
    acct = s.create_account("enterprise", 2000);
    auto hook = s.post("/v1/webhooks",
                       json::serialize(json::object{{"url", fx.url() + "/hook/killed"},
                                                    {"events", json::array{"session.ended"}}}),
                       acct.api_secret);
    ASSERT_EQ(hook.status, 200) << hook.body;
    fx.set_secret("killed", str(hook.json().at("data"), "secret"));
    code = ready_agent(s, acct.api_secret);
    auto ws = join(s, "/v1/runtime/rooms/crash?agent_code=" + code + "&record=true",
                   runtime_token(s, acct.api_secret));
    ASSERT_TRUE(ws);
    auto started = ws->read_event("session.started");
    ASSERT_TRUE(started);
    id = std::string(obj(*started).at("session_id").as_string());
    auto r = s.post("/v1/agent/" + code + "/speak",
                    json::serialize(json::object{
                        {"message",
                         "I will keep talking for a while, long enough for a few key frames to be "
                         "written to the recording before the process is killed without warning."}}),
                    acct.api_secret);
    ASSERT_EQ(r.status, 200) << r.body;
    // Key frames come every two seconds and each closes a flushed fragment: 5 s of pictures.
    int frames = 0;
    for (int i = 0; i < 2000 && frames < 125; ++i) {
      auto m = ws->read(5000);
      ASSERT_TRUE(m);
      frames += !m->text && !m->data.empty() && m->data[0] == 1;
    }
    s.kill9();
  }
  TestServer s(dir, {"--allow-private-fetch"}, {});
  auto after = s.get("/v1/sessions/" + id, acct.api_secret);
  ASSERT_EQ(after.status, 200) << after.body;
  EXPECT_EQ(str(after.json(), "status"), "ended") << after.body;
  EXPECT_EQ(str(after.json(), "end_reason"), "shutdown") << after.body;
  const double session_s = after.json().at("duration_seconds").to_number<double>();
  EXPECT_GT(session_s, 4.0) << after.body;
  ASSERT_TRUE(after.json().at("recording").is_object()) << after.body;
  ASSERT_EQ(str(after.json().at("recording"), "status"), "ready") << after.body;
  // Everything up to the last flushed fragment: at least the first two seconds, at most the session.
  const double rec_s = after.json().at("recording").at("duration_seconds").to_number<double>();
  EXPECT_GE(rec_s, 2.0) << after.body;
  EXPECT_LE(rec_s, session_s + 0.5) << after.body;
  auto probe = ffprobe(s.get("/v1/sessions/" + id + "/recording", acct.api_secret).body);
  ASSERT_TRUE(probe.is_object()) << "ffprobe could not read the recovered recording";
  const auto* video = stream_of(probe, "video");
  ASSERT_TRUE(video) << json::serialize(probe);
  EXPECT_EQ(video->at("codec_name").as_string(), "h264");
  EXPECT_NEAR(number(*video, "duration"), rec_s, 0.5) << json::serialize(probe);
  // The webhook, signed, once.
  json::array got;
  ASSERT_TRUE(eventually([&] {
    got = fx.hooks("killed");
    return !got.empty();
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  got = fx.hooks("killed");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].at("verified"), json::value(true));
  auto payload = json::parse(str(got[0], "body"));
  EXPECT_EQ(str(payload.at("data"), "session_id"), id);
  EXPECT_EQ(str(payload.at("data"), "end_reason"), "shutdown");
  // A second restart finds nothing left to recover.
  s.stop();
  TestServer again(dir, {"--allow-private-fetch"}, {});
  EXPECT_EQ(str(again.get("/v1/sessions/" + id, acct.api_secret).json(), "end_reason"), "shutdown");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(fx.hooks("killed").size(), 1u);
  again.stop();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace imago::testing

// The agent's own voice (docs/api/agents.md): the voice given at generate is the one
// its live sessions and its videos speak with. Heard, not read from a field: the pitch of what a
// live viewer receives and of a video's sound track is compared with /v1/tts of the same text in
// the same voice.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "fixtures/fixture.h"
#include "support/audio_measure.h"
#include "support/test_server.h"
#include "support/ws_client.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

constexpr const char* kText = "Hello there, this is how I sound when I talk to you about the museum.";

std::string agent_with_voice(const TestServer& s, const std::string& secret, const std::string& voice) {
  auto r =
      s.post("/v1/agent/generate",
             R"({"prompt":"A friendly guide.","aspect_ratio":"1:1","voice":")" + voice + R"("})", secret);
  EXPECT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  EXPECT_TRUE(eventually(
      [&] { return str(s.get("/v1/agent/" + code, secret).json().at("data"), "status") == "ready"; }, 120));
  return code;
}

// /v1/tts of kText in `voice`, as raw samples.
Pcm tts(const TestServer& s, const std::string& secret, const std::string& voice) {
  json::object body{{"text", kText}, {"voice", voice}, {"format", "pcm_s16le"}};
  auto r = s.post("/v1/tts", json::serialize(body), secret);
  EXPECT_EQ(r.status, 200) << r.body;
  return Pcm{std::atoi(r.header("x-sample-rate").c_str()), samples_of(r.body)};
}

// What a live viewer hears when the agent speaks kText: the speaking audio messages until the
// utterance's playback_finished.
Pcm live(const TestServer& s, const std::string& secret, const std::string& code) {
  WsClient::Options o;
  o.bearer = str(s.post("/v1/runtime-tokens/request", "", secret).json().at("data"), "token");
  auto ws = WsClient::connect(s.port(), "/v1/runtime/rooms/voice-" + code + "?agent_code=" + code, o);
  EXPECT_TRUE(ws);
  if (!ws) return {};
  Pcm p;
  auto started = ws->read_event("session.started");
  EXPECT_TRUE(started);
  if (!started) return {};
  p.rate = static_cast<int>(json::parse(started->data).at("audio_rate").as_int64());
  ws->send_text(json::serialize(json::object{{"type", "speak"}, {"text", kText}}));
  bool finished = false;
  for (int i = 0; i < 2000 && !finished; ++i) {
    auto m = ws->read();
    if (!m) break;
    if (m->text) {
      finished = json::parse(m->data).at("type").as_string() == "playback_finished";
    } else if (m->data.size() > 20 && uint8_t(m->data[0]) == 2 && (uint8_t(m->data[2]) & 1)) {
      auto s16 = samples_of(m->data.substr(20));
      p.s.insert(p.s.end(), s16.begin(), s16.end());
    }
  }
  EXPECT_TRUE(finished);
  return p;
}

// The sound track of a video of the agent saying kText, decoded by Debian's ffmpeg.
Pcm video(const TestServer& s, const std::string& secret, const std::string& code) {
  HttpRequestOptions o;
  o.timeout_ms = 120000;
  auto r =
      s.request("POST", "/v1/video/generate",
                json::serialize(json::object{
                    {"agent_code", code}, {"input", {{"type", "text"}, {"text", kText}}}, {"wait", true}}),
                secret, o);
  EXPECT_EQ(r.status, 200) << r.body;
  std::string url = str(r.json(), "video_url");
  EXPECT_EQ(url.rfind(s.url(), 0), 0u) << r.body;
  if (url.rfind(s.url(), 0) != 0) return {};
  auto mp4 = s.get(url.substr(s.url().size()), secret);
  EXPECT_EQ(mp4.status, 200);
  const std::string dir = s.data_dir();
  const std::string in = dir + "/voice-" + code + ".mp4", out = dir + "/voice-" + code + ".s16";
  std::ofstream(in, std::ios::binary) << mp4.body;
  std::string cmd =
      "ffmpeg -nostdin -loglevel error -y -i '" + in + "' -vn -ac 1 -ar 24000 -f s16le '" + out + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return Pcm{24000, samples_of(bytes)};
}

TEST(AgentVoice, LiveSessionsAndVideosSpeakWithTheVoiceGivenAtGenerate) {
  TestServer s;
  auto acct = s.create_account("enterprise", 100000);
  std::map<std::string, double> heard;
  // A high female and a low male voice: about 300 Hz and 100 Hz (docs/speech.md, "Voices").
  for (const std::string voice : {"F3", "M2"}) {
    std::string code = agent_with_voice(s, acct.api_secret, voice);
    EXPECT_EQ(str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data").at("voice"), "id"), voice);
    const double reference = median_f0(tts(s, acct.api_secret, voice));
    ASSERT_GT(reference, 60) << voice;
    const double in_live = median_f0(live(s, acct.api_secret, code));
    const double in_video = median_f0(video(s, acct.api_secret, code));
    std::printf("[voice] %s: tts %.0f Hz, live %.0f Hz, video %.0f Hz\n", voice.c_str(), reference, in_live,
                in_video);
    // The same synthesis resampled and framed (live) or AAC-coded (video): the pitch survives.
    EXPECT_NEAR(in_live, reference, 0.08 * reference) << voice;
    EXPECT_NEAR(in_video, reference, 0.08 * reference) << voice;
    heard[voice] = in_live;
  }
  EXPECT_GT(heard["F3"], 2 * heard["M2"]);
}

}  // namespace
}  // namespace imago::testing

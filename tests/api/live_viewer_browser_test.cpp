// Runs tests/node/live_viewer_test.mjs: the viewer page in Debian's chromium (playwright-core from
// npm, no browser download) against a real imagod, which this side restarts on the same port when
// the page asks, to check the page reconnects by itself. Missing node or chromium is a failure.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include "fixtures/fake_llm.h"
#include "fixtures/fixture.h"
#include "support/browser_tools.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

namespace fs = std::filesystem;

// tests/node with its packages installed, after checking node and chromium are there. Missing
// tools are a failure, not a skip.
::testing::AssertionResult node_tools_ready(fs::path* dir) {
  *dir = fs::path(tests_dir()) / "node";
  return browser_tools_ready(dir->string());
}

// A ready agent made from a prompt (a 1:1 procedural avatar) and an embed token for its viewer
// page; empty strings (after a failed expectation) when either fails.
struct ViewerAgent {
  std::string code, token;
};
// `billing_type`: the session type the token starts (empty: the avatar session).
ViewerAgent ready_agent_with_embed_token(TestServer& s, const TestAccount& acct,
                                         const std::string& billing_type = "") {
  auto g =
      s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})", acct.api_secret);
  EXPECT_EQ(g.status, 200) << g.body;
  if (g.status != 200) return {};
  std::string code = str(g.json(), "agent_id");
  bool ready = eventually(
      [&] { return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready"; },
      120);
  EXPECT_TRUE(ready) << "agent " << code << " never became ready";
  if (!ready) return {};
  auto e =
      s.post("/v1/embed-tokens/request",
             R"({"agent_id":")" + code + R"(","fingerprint":"browser")" +
                 (billing_type.empty() ? std::string() : R"(,"billing_type":")" + billing_type + "\"") + "}",
             acct.api_secret);
  EXPECT_EQ(e.status, 200) << e.body;
  if (e.status != 200) return {};
  return {code, str(e.json().at("data"), "token")};
}

TEST(LiveViewerBrowser, PageShowsFramesPlaysSpeechAndReconnects) {
  fs::path dir;
  ASSERT_TRUE(node_tools_ready(&dir));
  auto s = std::make_unique<TestServer>();
  auto acct = s->create_account("enterprise", 2000);
  auto [code, token] = ready_agent_with_embed_token(*s, acct);
  ASSERT_FALSE(token.empty());

  std::string sync = make_temp_dir();
  const char* shots = std::getenv("IMAGO_SCREENSHOT_DIR");
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + s->url() + "' AGENT_CODE='" + code +
                    "' EMBED_TOKEN='" + token + "' API_SECRET='" + acct.api_secret + "' SYNC_DIR='" + sync +
                    "' " + (shots ? "SCREENSHOT_DIR='" + std::string(shots) + "' " : "") +
                    "timeout 150 node live_viewer_test.mjs";
  auto node = std::async(std::launch::async, [cmd] { return run_command(cmd); });

  // When the page is ready, drop every socket by restarting imagod on the same port and data.
  const std::string data_dir = s->data_dir();
  const int port = s->port();
  bool restarted = false;
  std::unique_ptr<TestServer> s2;
  while (node.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (!restarted && fs::exists(fs::path(sync) / "ready_for_drop")) {
      s->stop();
      s2 = std::make_unique<TestServer>(
          data_dir, std::vector<std::string>{"--listen", "127.0.0.1:" + std::to_string(port)},
          std::map<std::string, std::string>{});
      std::ofstream(fs::path(sync) / "restarted") << "1";
      restarted = true;
    }
  }
  EXPECT_EQ(node.get(), 0) << "tests/node/live_viewer_test.mjs failed (its output is above)";
  EXPECT_TRUE(restarted);
  s2.reset();
  fs::remove_all(sync);
}

// The viewer page on encoded media: Chromium's WebCodecs decode the room's H.264 and Opus, the
// picture changes while the agent speaks and the decoded audio is played
// (tests/node/live_encoded_viewer_test.mjs). The test above keeps the JPEG + PCM fallback covered.
TEST(LiveViewerBrowser, EncodedMediaIsDecodedWithWebCodecsAndPlayed) {
  fs::path dir;
  ASSERT_TRUE(node_tools_ready(&dir));
  TestServer s;
  auto acct = s.create_account("enterprise", 2000);
  auto [code, token] = ready_agent_with_embed_token(s, acct);
  ASSERT_FALSE(token.empty());
  const char* shots = std::getenv("IMAGO_SCREENSHOT_DIR");
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + s.url() + "' AGENT_CODE='" + code +
                    "' EMBED_TOKEN='" + token + "' API_SECRET='" + acct.api_secret + "' " +
                    (shots ? "SCREENSHOT_DIR='" + std::string(shots) + "' " : "") +
                    "timeout 150 node live_encoded_viewer_test.mjs";
  EXPECT_EQ(run_command(cmd), 0) << "tests/node/live_encoded_viewer_test.mjs failed (its output is above)";
}

// A WAV (16-bit mono) of `pcm` at `rate` with `before_s` / `after_s` of silence around it.
std::string wav_with_silence(const std::string& pcm, int rate, double before_s, double after_s) {
  std::string data(static_cast<size_t>(before_s * rate) * 2, '\0');
  data += pcm;
  data.append(static_cast<size_t>(after_s * rate) * 2, '\0');
  auto u32 = [](uint32_t v) {
    return std::string{char(v & 255), char(v >> 8 & 255), char(v >> 16 & 255), char(v >> 24)};
  };
  auto u16 = [](uint16_t v) { return std::string{char(v & 255), char(v >> 8)}; };
  return "RIFF" + u32(static_cast<uint32_t>(36 + data.size())) + "WAVEfmt " + u32(16) + u16(1) + u16(1) +
         u32(static_cast<uint32_t>(rate)) + u32(static_cast<uint32_t>(rate * 2)) + u16(2) + u16(16) + "data" +
         u32(static_cast<uint32_t>(data.size())) + data;
}

// The viewer's microphone for real: Chromium's fake audio capture plays a question spoken by this
// server's TTS, the page's Mic button streams it, the server hears it (the caption shows its key
// word) and the agent answers, in captions and audio. It once failed inside the full suite on the
// shared 2-core machine: the session's ears thread (~0.45 s of CPU per second of speech) fell
// behind real time next to the room's rendering and a dozen busy processes; the ears now raise
// their priority and rendering lowers its own (docs/conversation.md, "Keeping up with the viewer").
// On failure the server's account of every turn (how far behind its ears were) is printed.
TEST(LiveViewerBrowser, MicrophoneQuestionIsHeardAndAnswered) {
  fs::path dir;
  ASSERT_TRUE(node_tools_ready(&dir));
  TestServer s;
  auto acct = s.create_account("enterprise", 2000);
  auto [code, token] = ready_agent_with_embed_token(s, acct);
  ASSERT_FALSE(token.empty());
  auto p = s.post(
      "/v1/agent/" + code,
      R"({"system_prompt":"You are Nora, a guide at the city museum. Members get a discount of twenty percent on tickets."})",
      acct.api_secret);
  ASSERT_EQ(p.status, 200) << p.body;
  // The question, spoken by this server's own TTS.
  auto t = s.post("/v1/tts", R"({"text":"Do members get a discount?","format":"pcm","speed":1.0})",
                  acct.api_secret);
  ASSERT_EQ(t.status, 200) << t.body;
  std::string dir_wav = make_temp_dir();
  fs::path wav = fs::path(dir_wav) / "question.wav";
  std::ofstream(wav, std::ios::binary) << wav_with_silence(t.body, 22050, 1.0, 4.0);
  const char* shots = std::getenv("IMAGO_SCREENSHOT_DIR");
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + s.url() + "' AGENT_CODE='" + code +
                    "' EMBED_TOKEN='" + token + "' MIC_WAV='" + wav.string() + "' EXPECT_HEARD='discount' " +
                    (shots ? "SCREENSHOT_DIR='" + std::string(shots) + "' " : "") +
                    "timeout 240 node live_mic_test.mjs";
  const int rc = run_command(cmd);
  EXPECT_EQ(rc, 0) << "tests/node/live_mic_test.mjs failed (its output is above)";
  if (rc != 0) {
    std::ifstream log(s.data_dir() + "/imagod.log");
    for (std::string line; std::getline(log, line);)
      if (line.find("\"live_") != std::string::npos) std::printf("imagod: %s\n", line.c_str());
  }
  fs::remove_all(dir_wav);
}

// camera_chat from the viewer page: Chromium's fake camera, the Camera button, a typed question;
// the operator's model (a fake that accepts images) must get the question with a JPEG still.
TEST(LiveViewerBrowser, CameraChatSendsCameraStillsWithTheQuestion) {
  fs::path dir;
  ASSERT_TRUE(node_tools_ready(&dir));
  FakeLlmServer llm;
  llm.control({{"reply", "I see a colourful test pattern."}});
  TestServer s({"--llm-base-url", llm.base_url(), "--llm-model", "fake-vision", "--llm-allow-private",
                "--llm-vision"});
  auto acct = s.create_account("enterprise", 2000);
  auto [code, token] = ready_agent_with_embed_token(s, acct, "camera_chat");
  ASSERT_FALSE(token.empty());
  const char* shots = std::getenv("IMAGO_SCREENSHOT_DIR");
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + s.url() + "' AGENT_CODE='" + code +
                    "' EMBED_TOKEN='" + token + "' " +
                    (shots ? "SCREENSHOT_DIR='" + std::string(shots) + "' " : "") +
                    "timeout 180 node live_camera_test.mjs";
  ASSERT_EQ(run_command(cmd), 0) << "tests/node/live_camera_test.mjs failed (its output is above)";

  auto reqs = llm.requests();
  ASSERT_FALSE(reqs.empty());
  auto msgs = reqs.back().at("body").at("messages").as_array();
  ASSERT_TRUE(msgs.back().at("content").is_array()) << boost::json::serialize(msgs.back());
  auto parts = msgs.back().at("content").as_array();
  ASSERT_EQ(parts.size(), 2u) << boost::json::serialize(parts);
  EXPECT_EQ(parts[0].at("text").as_string(), "What do you see?");
  const std::string image(parts[1].at("image_url").at("url").as_string());
  EXPECT_EQ(image.rfind("data:image/jpeg;base64,", 0), 0u) << image.substr(0, 40);
  EXPECT_GT(image.size(), 1000u) << "a real still, not an empty canvas";
}

}  // namespace
}  // namespace imago::testing

// Talking videos over real HTTP (docs/api/video.md): text and audio input, the per-minute charge
// made once (Idempotency-Key), the refund when the render fails, 402, 404, 400 with nothing
// charged, and wait: true.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cmath>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

void expect_error(const HttpResponse& r, long status, const std::string& code,
                  const std::string& needle = "") {
  EXPECT_EQ(r.status, status) << r.body;
  auto v = r.json();
  ASSERT_TRUE(v.is_object() && v.as_object().contains("error")) << r.body;
  EXPECT_EQ(v.at("error").at("code").as_string(), code) << r.body;
  if (!needle.empty()) {
    EXPECT_NE(std::string(v.at("error").at("message").as_string()).find(needle), std::string::npos) << r.body;
  }
}

int64_t usage_count(const TestServer& s, const std::string& secret, const std::string& kind) {
  json::value usage = s.get("/v1/usage?limit=100", secret).json();
  int64_t n = 0;
  for (const auto& e : usage.at("data").as_array()) n += str(e, "kind") == kind;
  return n;
}

// A ready agent made from a prompt (the procedural default avatar): 250 credits.
std::string ready_agent(const TestServer& s, const std::string& secret) {
  auto r = s.post("/v1/agent/generate", R"({"prompt": "a talking head"})", secret);
  EXPECT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  auto st = wait_agent(s, secret, code, 120);
  EXPECT_EQ(str(st, "status"), "ready") << json::serialize(st);
  return code;
}

// Mono 16-bit WAV of a syllable-rate modulated vowel-like tone, `seconds` long.
std::string speech_like_wav(double seconds, int rate = 16000) {
  auto n = static_cast<uint32_t>(seconds * rate);
  std::string out;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto u16 = [&](uint16_t v) {
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>(v >> 8));
  };
  out += "RIFF";
  u32(36 + n * 2);
  out += "WAVEfmt ";
  u32(16);
  u16(1);
  u16(1);
  u32(rate);
  u32(rate * 2);
  u16(2);
  u16(16);
  out += "data";
  u32(n * 2);
  for (uint32_t i = 0; i < n; ++i) {
    double t = double(i) / rate;
    double env = 0.5 + 0.5 * std::sin(2 * M_PI * 4 * t);
    double v = env * (0.5 * std::sin(2 * M_PI * 180 * t) + 0.3 * std::sin(2 * M_PI * 720 * t));
    u16(static_cast<uint16_t>(static_cast<int16_t>(v * 12000)));
  }
  return out;
}

json::value wait_video(const TestServer& s, const std::string& secret, const std::string& job,
                       double seconds = 120) {
  json::value last;
  eventually(
      [&] {
        auto r = s.get("/v1/video/" + job, secret);
        if (r.status != 200) return false;
        last = r.json();
        return str(last, "status") != "processing";
      },
      seconds);
  return last;
}

// The MP4 behind video_url: an ISO BMFF file with an H.264 and an AAC track.
void expect_mp4(const TestServer& s, const std::string& secret, const std::string& url) {
  ASSERT_EQ(url.rfind(s.url() + "/v1/files/", 0), 0u) << url;
  ASSERT_EQ(url.substr(url.size() - 4), ".mp4") << url;
  auto r = s.get(url.substr(s.url().size()), secret);
  ASSERT_EQ(r.status, 200);
  EXPECT_GT(r.body.size(), 1000u);
  EXPECT_EQ(r.body.substr(4, 4), "ftyp");
  EXPECT_NE(r.body.find("avc1"), std::string::npos);
  EXPECT_NE(r.body.find("mp4a"), std::string::npos);
}

TEST(Video, TextWithWaitReturnsTheFinishedVideoAndIsChargedOnce) {
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  std::string code = ready_agent(s, acct.api_secret);
  ASSERT_EQ(balance_of(s, acct.api_secret), 750);

  HttpRequestOptions o;
  o.headers["Idempotency-Key"] = "video-1";
  o.timeout_ms = 120000;
  std::string body =
      R"({"agent_code": ")" + code +
      R"(", "input": {"type": "text", "text": "Hello there, nice to meet you."}, "wait": true})";
  auto r = s.request("POST", "/v1/video/generate", body, acct.api_secret, o);
  ASSERT_EQ(r.status, 200) << r.body;
  auto v = r.json();
  EXPECT_EQ(v.at("success"), true);
  EXPECT_EQ(str(v, "status"), "completed") << r.body;
  EXPECT_EQ(str(v, "agent_code"), code);
  EXPECT_GT(v.at("duration").to_number<double>(), 1.0);
  EXPECT_EQ(v.at("credits").to_number<int64_t>(), 2);  // essence: 2 credits per started minute
  expect_mp4(s, acct.api_secret, str(v, "video_url"));
  EXPECT_EQ(balance_of(s, acct.api_secret), 748);

  // The same key again: the same job, no second charge.
  auto again = s.request("POST", "/v1/video/generate", body, acct.api_secret, o);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(str(again.json(), "job_id"), str(v, "job_id"));
  EXPECT_EQ(str(again.json(), "video_url"), str(v, "video_url"));
  EXPECT_EQ(balance_of(s, acct.api_secret), 748);
  EXPECT_EQ(usage_count(s, acct.api_secret, "charge"), 2);  // the agent and the video

  auto g = s.get("/v1/video/" + str(v, "job_id"), acct.api_secret);
  ASSERT_EQ(g.status, 200) << g.body;
  EXPECT_EQ(str(g.json(), "status"), "completed");
  // The agent's videos (its page lists them): this one once, with its download URL.
  auto listed = s.get("/v1/video?agent_code=" + code, acct.api_secret);
  ASSERT_EQ(listed.status, 200) << listed.body;
  const json::value page = listed.json();
  ASSERT_EQ(page.at("data").as_array().size(), 1u);
  const json::value& item = page.at("data").as_array()[0];
  EXPECT_EQ(str(item, "job_id"), str(v, "job_id"));
  EXPECT_EQ(str(item, "status"), "completed");
  EXPECT_EQ(str(item, "video_url"), str(v, "video_url"));
  EXPECT_FALSE(str(item, "created_at").empty());
  EXPECT_EQ(page.at("pagination").at("total").as_int64(), 1);
  EXPECT_EQ(s.get("/v1/video", acct.api_secret).json().at("data").as_array().size(), 1u);
  EXPECT_EQ(s.get("/v1/video?agent_code=NOSUCHAGENT", acct.api_secret).json().at("data").as_array().size(),
            0u);
  expect_error(s.get("/v1/video?agent_code=", acct.api_secret), 400, "VALIDATION_ERROR", "agent_code");
  EXPECT_EQ(s.get("/v1/video?limit=0", acct.api_secret).status, 400);
  // Another account sees nothing.
  auto other = s.create_account("enterprise", 1000);
  expect_error(s.get("/v1/video/" + str(v, "job_id"), other.api_secret), 404, "NOT_FOUND");
  EXPECT_EQ(s.get("/v1/video", other.api_secret).json().at("data").as_array().size(), 0u);
}

TEST(Video, AudioFromAUrlIsRenderedInTheBackground) {
  FixtureServer fx;
  TestServer s({"--allow-private-fetch"});
  auto acct = s.create_account("enterprise", 1000);
  std::string code = ready_agent(s, acct.api_secret);
  std::string url = fx.put_file("speech.wav", speech_like_wav(3.0));
  auto r = s.post(
      "/v1/video/generate",
      R"({"agent_code": ")" + code + R"(", "input": {"type": "audio", "audio_url": ")" + url + R"("}})",
      acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(str(r.json(), "status"), "processing");
  // When it was queued: now, not the epoch, also when read back.
  EXPECT_EQ(str(r.json(), "created_at").substr(0, 2), "20") << r.body;
  std::string job = str(r.json(), "job_id");
  ASSERT_FALSE(job.empty());
  EXPECT_EQ(str(s.get("/v1/video/" + job, acct.api_secret).json(), "created_at").substr(0, 2), "20");
  auto v = wait_video(s, acct.api_secret, job);
  ASSERT_EQ(str(v, "status"), "completed") << json::serialize(v);
  EXPECT_NEAR(v.at("duration").to_number<double>(), 3.4, 0.05);  // the audio plus the idle tail
  expect_mp4(s, acct.api_secret, str(v, "video_url"));
  EXPECT_EQ(balance_of(s, acct.api_secret), 748);

  // The same audio inline as a data: URI (well over 64 KiB of body) is accepted too.
  std::string inline_audio = "data:audio/wav;base64," + base64_encode(speech_like_wav(3.0));
  ASSERT_GT(inline_audio.size(), 64u << 10);
  auto in = s.post("/v1/video/generate",
                   R"({"agent_code": ")" + code + R"(", "input": {"type": "audio", "audio_url": ")" +
                       inline_audio + R"("}})",
                   acct.api_secret);
  ASSERT_EQ(in.status, 200) << in.body.substr(0, 300);
  EXPECT_EQ(str(in.json(), "status"), "processing");
}

TEST(Video, BadInputIsRejectedAndNothingIsCharged) {
  FixtureServer fx;
  TestServer s({"--allow-private-fetch"});
  auto acct = s.create_account("enterprise", 1000);
  std::string code = ready_agent(s, acct.api_secret);
  const std::string& k = acct.api_secret;
  auto post = [&](const std::string& body) { return s.post("/v1/video/generate", body, k); };
  std::string a = R"({"agent_code": ")" + code + R"(", )";

  expect_error(post(a + R"("input": {"type": "text", "text": "hi"}, "colour": "red"})"), 400,
               "VALIDATION_ERROR", "colour");
  expect_error(post(a + R"("input": {"type": "text", "text": "hi", "speed": 2}})"), 400, "VALIDATION_ERROR",
               "speed");
  expect_error(post(a + R"("wait": true})"), 400, "VALIDATION_ERROR", "input");
  expect_error(post(a + R"("input": {"type": "song", "text": "hi"}})"), 400, "VALIDATION_ERROR", "type");
  expect_error(post(a + R"("input": {"type": "text", "text": "  "}})"), 400, "VALIDATION_ERROR", "text");
  expect_error(post(a + R"("input": {"type": "text", "text": ")" + std::string(5001, 'a') + R"("}})"), 400,
               "VALIDATION_ERROR", "5000");
  expect_error(post(a + R"("input": {"type": "text", "text": "hi", "voice": "Z9"}})"), 400,
               "VALIDATION_ERROR");
  expect_error(post(a + R"("input": {"type": "audio"}})"), 400, "VALIDATION_ERROR", "audio_url");
  expect_error(
      post(a + R"("input": {"type": "audio", "audio_url": ")" + fx.url() + R"(/files/missing.wav"}})"), 400,
      "VALIDATION_ERROR", "audio_url");
  std::string noise = fx.put_file("not-audio.wav", std::string(4000, 'x'));
  expect_error(post(a + R"("input": {"type": "audio", "audio_url": ")" + noise + R"("}})"), 400,
               "VALIDATION_ERROR", "audio_url");
  std::string long_audio = fx.put_file("long.wav", speech_like_wav(121, 8000));
  expect_error(post(a + R"("input": {"type": "audio", "audio_url": ")" + long_audio + R"("}})"), 400,
               "VALIDATION_ERROR", "120");
  expect_error(post(R"({"input": {"type": "text", "text": "hi"}})"), 400, "VALIDATION_ERROR", "agent_code");
  expect_error(post(R"({"agent_code": "NOPE12345", "input": {"type": "text", "text": "hi"}})"), 404,
               "NOT_FOUND", "Agent not found for code: NOPE12345");
  expect_error(s.get("/v1/video/job_doesnotexist", k), 404, "NOT_FOUND");

  EXPECT_EQ(balance_of(s, k), 750);
  EXPECT_EQ(usage_count(s, k, "charge"), 1);  // the agent only
}

TEST(Video, InsufficientBalanceIs402AndQueuesNothing) {
  TestServer s;
  auto acct = s.create_account("enterprise", 251);
  std::string code = ready_agent(s, acct.api_secret);
  auto r = s.post("/v1/video/generate",
                  R"({"agent_code": ")" + code + R"(", "input": {"type": "text", "text": "Hello."}})",
                  acct.api_secret);
  expect_error(r, 402, "INSUFFICIENT_BALANCE");
  EXPECT_EQ(balance_of(s, acct.api_secret), 1);
}

// `imagod worker` on the server's data directory; stopped (SIGTERM) by stop_worker.
pid_t start_worker(const TestServer& s) {
  std::vector<std::string> args = {imagod_path(),  "worker", "--data-dir",    s.data_dir(),
                                   "--public-url", s.url(),  "--job-workers", "1"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string log = s.data_dir() + "/worker.log";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}
void stop_worker(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
}

TEST(Video, AFailedRenderIsRefunded) {
  // Jobs run in a separate worker process, so the video can be queued while no worker runs and
  // its agent deleted before the render starts.
  TestServer s({"--no-workers"});
  auto acct = s.create_account("enterprise", 1000);
  pid_t worker = start_worker(s);
  ASSERT_GT(worker, 0);
  std::string code = ready_agent(s, acct.api_secret);
  stop_worker(worker);

  auto r = s.post("/v1/video/generate",
                  R"({"agent_code": ")" + code + R"(", "input": {"type": "text", "text": "Hello."}})",
                  acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string job = str(r.json(), "job_id");
  EXPECT_EQ(balance_of(s, acct.api_secret), 748);
  ASSERT_EQ(s.del("/v1/agent/" + code, acct.api_secret).status, 200);

  worker = start_worker(s);
  auto v = wait_video(s, acct.api_secret, job);
  stop_worker(worker);
  EXPECT_EQ(str(v, "status"), "failed") << json::serialize(v) << read_file(s.data_dir() + "/worker.log");
  EXPECT_NE(str(v, "error_message").find("deleted"), std::string::npos) << json::serialize(v);
  EXPECT_FALSE(v.as_object().contains("video_url"));
  // The video's 2 credits come back (the agent's deletion refunds nothing: it was ready).
  EXPECT_EQ(usage_count(s, acct.api_secret, "refund"), 1);
  int64_t refunded = 0;
  json::value usage = s.get("/v1/usage?limit=100", acct.api_secret).json();  // outlives the loop
  for (const auto& e : usage.at("data").as_array()) {
    if (str(e, "kind") == "refund") refunded = e.at("amount").to_number<int64_t>();
  }
  EXPECT_EQ(refunded, 2);
}

}  // namespace
}  // namespace imago::testing

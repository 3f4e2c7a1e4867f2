// Agents over real HTTP (SPEC 4.2-4.7): lifecycle, validation, 402, refunds, isolation, SSRF.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::set<std::string> keys_of(const json::value& v) {
  std::set<std::string> out;
  if (v.is_object()) {
    for (const auto& kv : v.as_object()) out.insert(std::string(kv.key()));
  }
  return out;
}

void expect_error(const HttpResponse& r, long status, const std::string& code,
                  const std::string& needle = "") {
  EXPECT_EQ(r.status, status) << r.body;
  auto v = r.json();
  ASSERT_TRUE(v.is_object()) << r.body;
  ASSERT_TRUE(v.as_object().contains("error")) << r.body;
  EXPECT_EQ(v.at("error").at("code").as_string(), code) << r.body;
  if (!needle.empty()) {
    EXPECT_NE(std::string(v.at("error").at("message").as_string()).find(needle), std::string::npos) << r.body;
  }
}

int64_t usage_count(const TestServer& s, const std::string& secret, const std::string& kind) {
  auto r = s.get("/v1/usage?limit=100", secret);
  json::value usage = r.json();  // the range below must not outlive the parsed document
  int64_t n = 0;
  for (const auto& e : usage.at("data").as_array()) {
    if (str(e, "kind") == kind) ++n;
  }
  return n;
}

TEST(Agents, FullLifecycle) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  auto other = s.create_account("enterprise", 1000);
  std::string image_url = fx.put_file("face.jpg", face_jpeg());

  auto r = s.post("/v1/agent/generate",
                  json::serialize(json::object{{"prompt", "You are a cheerful guide."},
                                               {"image", image_url},
                                               {"aspect_ratio", "1:1"},
                                               {"model", "essence"}}),
                  acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto g = r.json();
  EXPECT_EQ(keys_of(g), (std::set<std::string>{"success", "message", "agent_id", "status"}));
  EXPECT_TRUE(g.at("success").as_bool());
  EXPECT_EQ(str(g, "status"), "processing");
  std::string code = str(g, "agent_id");
  EXPECT_TRUE(std::regex_match(code, std::regex("[A-Z][0-9]{2}[A-Z]{3}[0-9]{4}"))) << code;
  EXPECT_EQ(balance_of(s, acct.api_secret), 750);

  // Poll until ready, collecting the statuses seen on the way.
  std::set<std::string> seen;
  json::value last;
  ASSERT_TRUE(eventually(
      [&] {
        auto st = s.get("/v1/agent/status/" + code, acct.api_secret);
        if (st.status != 200) return false;
        last = st.json().at("data");
        seen.insert(str(last, "status"));
        return str(last, "status") == "ready" || str(last, "status") == "failed";
      },
      60));
  ASSERT_EQ(str(last, "status"), "ready") << json::serialize(last);
  EXPECT_EQ(keys_of(last), (std::set<std::string>{"agent_id", "status", "progress", "progress_msg",
                                                  "current_step", "error_message", "system_prompt",
                                                  "image_url", "video_url", "model_url", "name"}));
  EXPECT_DOUBLE_EQ(last.at("progress").to_number<double>(), 1.0);
  EXPECT_TRUE(last.at("error_message").is_null());
  EXPECT_EQ(str(last, "system_prompt"), "You are a cheerful guide.");
  std::string model_url = str(last, "model_url");
  ASSERT_EQ(model_url.rfind(s.url() + "/v1/files/file_", 0), 0u) << model_url;
  EXPECT_EQ(model_url.substr(model_url.size() - 4), ".imx");
  EXPECT_EQ(str(last, "image_url").rfind(s.url() + "/v1/files/file_", 0), 0u) << str(last, "image_url");
  for (const auto& st : seen) {
    EXPECT_TRUE(st == "processing" || st == "generating" || st == "completed" || st == "ready") << st;
  }

  // The model downloads with the owner's key only.
  std::string path = model_url.substr(s.url().size());
  auto dl = s.get(path, acct.api_secret);
  ASSERT_EQ(dl.status, 200);
  EXPECT_GT(dl.body.size(), 1000u);
  EXPECT_EQ(s.get(path).status, 401);
  expect_error(s.get(path, other.api_secret), 404, "NOT_FOUND");
  auto img = s.get(str(last, "image_url").substr(s.url().size()), acct.api_secret);
  EXPECT_EQ(img.body, face_jpeg());

  // Get: exactly the SPEC 4.4 fields, plus the voice the agent speaks with.
  auto got = s.get("/v1/agent/" + code, acct.api_secret);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(keys_of(got.json().at("data")),
            (std::set<std::string>{"agent_id", "status", "system_prompt", "image_url", "video_url",
                                   "model_url", "name", "voice"}));

  // A second agent (inline data URI, custom id), then list with paging, newest first.
  std::string data_uri = "data:image/jpeg;base64," + base64_encode(face_jpeg());
  auto r2 =
      s.post("/v1/agent/generate",
             json::serialize(json::object{{"image", data_uri}, {"agent_id", "my-agent_2"}}), acct.api_secret);
  ASSERT_EQ(r2.status, 200) << r2.body;
  EXPECT_EQ(str(r2.json(), "agent_id"), "my-agent_2");
  auto page1 = s.get("/v1/agents?limit=1", acct.api_secret);
  ASSERT_EQ(page1.status, 200) << page1.body;
  auto p1 = page1.json();
  ASSERT_EQ(p1.at("data").as_array().size(), 1u);
  EXPECT_EQ(str(p1.at("data").as_array()[0], "code"), "my-agent_2");
  EXPECT_EQ(p1.at("pagination").at("total").as_int64(), 2);
  EXPECT_TRUE(p1.at("pagination").at("has_more").as_bool());
  auto page2 = s.get("/v1/agents?limit=1&offset=1", acct.api_secret).json();
  EXPECT_EQ(str(page2.at("data").as_array()[0], "code"), code);
  EXPECT_FALSE(page2.at("pagination").at("has_more").as_bool());
  auto ready_only = s.get("/v1/agents?status=ready", acct.api_secret).json();
  for (const auto& a : ready_only.at("data").as_array()) EXPECT_EQ(str(a, "status"), "ready");
  expect_error(s.get("/v1/agents?limit=101", acct.api_secret), 400, "VALIDATION_ERROR", "limit");
  EXPECT_EQ(s.get("/v1/agents", other.api_secret).json().at("pagination").at("total").as_int64(), 0);

  // Update the prompt: no regeneration, visible in later gets.
  auto up = s.post("/v1/agent/" + code, R"({"system_prompt": "You are terse."})", acct.api_secret);
  ASSERT_EQ(up.status, 200) << up.body;
  EXPECT_EQ(keys_of(up.json()), (std::set<std::string>{"agent_code", "updated"}));
  EXPECT_TRUE(up.json().at("updated").as_bool());
  EXPECT_EQ(str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "system_prompt"),
            "You are terse.");
  EXPECT_EQ(str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status"), "ready");
  expect_error(s.post("/v1/agent/" + code, R"({"system_prompt": 5})", acct.api_secret), 400,
               "VALIDATION_ERROR");
  expect_error(s.post("/v1/agent/" + code, R"({})", acct.api_secret), 400, "VALIDATION_ERROR",
               "system_prompt");

  // Delete: 404 afterwards everywhere, the file is gone, the ledger stays.
  wait_agent(s, acct.api_secret, "my-agent_2");
  auto del = s.del("/v1/agent/" + code, acct.api_secret);
  ASSERT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(keys_of(del.json()), (std::set<std::string>{"success", "agent_code", "deleted"}));
  EXPECT_TRUE(del.json().at("deleted").as_bool());
  expect_error(s.get("/v1/agent/" + code, acct.api_secret), 404, "NOT_FOUND",
               "Agent not found for code: " + code);
  expect_error(s.get("/v1/agent/status/" + code, acct.api_secret), 404, "NOT_FOUND");
  expect_error(s.del("/v1/agent/" + code, acct.api_secret), 404, "NOT_FOUND");
  expect_error(s.get(path, acct.api_secret), 404, "NOT_FOUND");
  EXPECT_EQ(usage_count(s, acct.api_secret, "charge"), 2);
  EXPECT_EQ(balance_of(s, acct.api_secret), 500);
}

TEST(Agents, ValidationErrorsChargeNothing) {
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  std::string pdf = base64_encode("%PDF-1.7 not an image at all");
  std::string png_as_audio = base64_encode(faceless_png());
  struct Case {
    std::string body;
    std::string field;
  } cases[] = {
      {R"({"model": "turbo"})", "model"},
      {R"({"model": 3})", "model"},
      {R"({"aspect_ratio": "4:3"})", "aspect_ratio"},
      {R"({"video_aspect_ratio": "2:1"})", "video_aspect_ratio"},
      {R"({"duration": -1})", "duration"},
      {R"({"duration": 0})", "duration"},
      {R"({"duration": "ten"})", "duration"},
      {R"({"duration": 100000})", "duration"},
      {R"({"prompt": 5})", "prompt"},
      {R"({"agent_id": "bad id!"})", "agent_id"},
      {R"({"agent_id": "ab"})", "agent_id"},
      {R"({"agent_id": "status"})", "agent_id"},
      {R"({"image": "ftp://example.com/a.png"})", "image"},
      {R"({"image": "file:///etc/passwd"})", "image"},
      {R"({"image": "!!!not base64!!!"})", "image"},
      {R"({"image": ")" + pdf + R"("})", "image"},
      {R"({"audio": ")" + png_as_audio + R"("})", "audio"},
      {R"({"video": 12})", "video"},
      {R"({"image": "file_AAAAAAAAAAAAAAAAAAAA"})", "image"},
      {R"(not json)", ""},
      {R"([1, 2])", ""},
  };
  for (const auto& c : cases) {
    auto r = s.post("/v1/agent/generate", c.body, acct.api_secret);
    expect_error(r, 400, "VALIDATION_ERROR", c.field);
  }
  // Oversized inline image (over 10 MB once decoded).
  std::string big = face_jpeg() + std::string(11 << 20, '\0');
  expect_error(s.post("/v1/agent/generate", R"({"image": ")" + base64_encode(big) + R"("})", acct.api_secret),
               400, "VALIDATION_ERROR", "image");
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
  EXPECT_EQ(s.get("/v1/agents", acct.api_secret).json().at("pagination").at("total").as_int64(), 0);

  // A taken custom id is a 409 and charges nothing more.
  ASSERT_EQ(s.post("/v1/agent/generate", R"({"agent_id": "taken-id"})", acct.api_secret).status, 200);
  expect_error(s.post("/v1/agent/generate", R"({"agent_id": "taken-id"})", acct.api_secret), 409, "CONFLICT",
               "taken-id");
  EXPECT_EQ(balance_of(s, acct.api_secret), 750);
}

TEST(Agents, InsufficientBalanceCreatesNothing) {
  TestServer s;
  auto acct = s.create_account("enterprise", 249);
  auto r = s.post("/v1/agent/generate", R"({"prompt": "hi"})", acct.api_secret);
  expect_error(r, 402, "INSUFFICIENT_BALANCE");
  EXPECT_EQ(str(r.json().at("error"), "message"), "Insufficient credits");
  EXPECT_EQ(balance_of(s, acct.api_secret), 249);
  EXPECT_EQ(s.get("/v1/agents", acct.api_secret).json().at("pagination").at("total").as_int64(), 0);
  EXPECT_EQ(usage_count(s, acct.api_secret, "charge"), 0);
}

TEST(Agents, AnIdempotencyKeyMakesARetryChargeOnce) {
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  HttpRequestOptions o;
  o.headers["Idempotency-Key"] = "5b0c9a52-retry-me";
  auto first = s.request("POST", "/v1/agent/generate", R"({"prompt": "once"})", acct.api_secret, o);
  auto again = s.request("POST", "/v1/agent/generate", R"({"prompt": "once"})", acct.api_secret, o);
  ASSERT_EQ(first.status, 200) << first.body;
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(str(first.json(), "agent_id"), str(again.json(), "agent_id"));
  EXPECT_EQ(s.get("/v1/agents", acct.api_secret).json().at("pagination").at("total").as_int64(), 1);
  EXPECT_EQ(balance_of(s, acct.api_secret), 750);
  o.headers["Idempotency-Key"] = std::string(201, 'k');
  expect_error(s.request("POST", "/v1/agent/generate", "{}", acct.api_secret, o), 400, "VALIDATION_ERROR",
               "Idempotency-Key");
}

TEST(Agents, APictureWithoutAFaceIsRefusedBeforeAnythingIsCharged) {
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  // Inline data: refused at once with the builder's message; no agent, no charge.
  for (const char* name : {"fruits.jpg", "baboon.jpg", "HappyFish.jpg"}) {
    std::string img = read_file(std::string("/usr/share/doc/opencv-doc/examples/data/") + name);
    expect_error(s.post("/v1/agent/generate", json::serialize(json::object{{"image", base64_encode(img)}}),
                        acct.api_secret),
                 400, "VALIDATION_ERROR", "No face found in the image");
  }
  // An upload of the caller's: the same.
  auto up = s.post(
      "/v1/files/upload",
      json::serialize(json::object{{"file_data", base64_encode(faceless_png())}, {"file_name", "board.png"}}),
      acct.api_secret);
  ASSERT_EQ(up.status, 200) << up.body;
  expect_error(s.post("/v1/agent/generate",
                      json::serialize(json::object{{"image", str(up.json().at("data"), "file_url")}}),
                      acct.api_secret),
               400, "VALIDATION_ERROR", "No face found in the image");
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
  EXPECT_EQ(s.get("/v1/agents", acct.api_secret).json().at("pagination").at("total").as_int64(), 0);
}

TEST(Agents, FailedGenerationIsRefundedWithAReason) {
  TestServer s;
  FixtureServer fx;
  auto acct = s.create_account("enterprise", 1000);
  // By URL the picture is fetched by the job: the generation fails and the charge comes back.
  auto r = s.post("/v1/agent/generate",
                  json::serialize(json::object{{"image", fx.put_file("board.png", faceless_png())}}),
                  acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto st = wait_agent(s, acct.api_secret, str(r.json(), "agent_id"));
  ASSERT_EQ(str(st, "status"), "failed") << json::serialize(st);
  EXPECT_EQ(str(st, "error_message"), "No face found in the image");
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
  auto usage = s.get("/v1/usage", acct.api_secret).json().at("data").as_array();
  bool refund = false;
  for (const auto& e : usage) {
    if (str(e, "kind") == "refund") {
      refund = true;
      EXPECT_NE(str(e, "reason").find("agent generation failed"), std::string::npos) << str(e, "reason");
    }
  }
  EXPECT_TRUE(refund);
}

TEST(Agents, AnotherAccountsAgentIsNotFoundEverywhere) {
  TestServer s;
  auto a = s.create_account("enterprise", 1000);
  auto b = s.create_account("enterprise", 1000);
  auto r = s.post("/v1/agent/generate", R"({"prompt": "mine"})", a.api_secret);
  ASSERT_EQ(r.status, 200);
  std::string code = str(r.json(), "agent_id");
  std::string msg = "Agent not found for code: " + code;
  expect_error(s.get("/v1/agent/status/" + code, b.api_secret), 404, "NOT_FOUND", msg);
  expect_error(s.get("/v1/agent/" + code, b.api_secret), 404, "NOT_FOUND", msg);
  expect_error(s.post("/v1/agent/" + code, R"({"system_prompt": "x"})", b.api_secret), 404, "NOT_FOUND", msg);
  expect_error(s.del("/v1/agent/" + code, b.api_secret), 404, "NOT_FOUND", msg);
  expect_error(s.get("/v1/dynamics/" + code, b.api_secret), 404, "NOT_FOUND", msg);
  expect_error(s.put("/v1/dynamics/" + code, R"({"dynamics": {}})", b.api_secret), 404, "NOT_FOUND", msg);
  expect_error(s.post("/v1/dynamics/generate", R"({"agent_id": ")" + code + R"("})", b.api_secret), 404,
               "NOT_FOUND", msg);
  expect_error(s.get("/v1/agent/NOPE000000", a.api_secret), 404, "NOT_FOUND",
               "Agent not found for code: NOPE000000");
  EXPECT_EQ(balance_of(s, b.api_secret), 1000);
  EXPECT_EQ(str(s.get("/v1/agent/" + code, a.api_secret).json().at("data"), "agent_id"), code);
}

TEST(Agents, DeletingAnAgentMidGenerationCancelsItsJob) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  ASSERT_EQ(
      s.post("/v1/webhooks", json::serialize(json::object{{"url", fx.url() + "/hook/del"}}), acct.api_secret)
          .status,
      200);
  std::string video = read_file("/usr/share/doc/opencv-doc/examples/data/Megamind.avi");
  auto r = s.post("/v1/agent/generate", json::serialize(json::object{{"video", fx.put_file("m.avi", video)}}),
                  acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  ASSERT_TRUE(eventually(
      [&] {
        return str(s.get("/v1/agent/status/" + code, acct.api_secret).json().at("data"), "status") !=
               "processing";
      },
      20));
  ASSERT_EQ(s.del("/v1/agent/" + code, acct.api_secret).status, 200);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  expect_error(s.get("/v1/agent/status/" + code, acct.api_secret), 404, "NOT_FOUND");
  // The cancelled job recorded nothing: no event, and the agent did not come back.
  EXPECT_TRUE(fx.hooks("del").empty()) << json::serialize(fx.hooks("del"));
  EXPECT_EQ(s.get("/v1/agents", acct.api_secret).json().at("pagination").at("total").as_int64(), 0);
}

TEST(Agents, UnsafeUrlsFailTheJobAndAreRefunded) {
  FixtureServer fx;
  std::string local = fx.put_file("face.jpg", face_jpeg());
  {
    // Operator default: private addresses refused, checked by the job after DNS resolution.
    TestServer strict({"--allow-private-fetch=false"});
    auto acct = strict.create_account("enterprise", 1000);
    for (const std::string& url :
         {local, std::string("http://localhost:9/x.jpg"), std::string("http://[::1]:9/x.jpg")}) {
      auto r =
          strict.post("/v1/agent/generate", json::serialize(json::object{{"image", url}}), acct.api_secret);
      ASSERT_EQ(r.status, 200) << r.body;
      auto st = wait_agent(strict, acct.api_secret, str(r.json(), "agent_id"));
      EXPECT_EQ(str(st, "status"), "failed") << url;
      EXPECT_NE(str(st, "error_message").find("refusing"), std::string::npos) << str(st, "error_message");
    }
    EXPECT_EQ(balance_of(strict, acct.api_secret), 1000);
    // Webhook targets and uploads by URL pass the same guard, at once.
    expect_error(strict.post("/v1/webhooks", json::serialize(json::object{{"url", fx.url() + "/hook/x"}}),
                             acct.api_secret),
                 400, "VALIDATION_ERROR", "refusing");
    expect_error(
        strict.post("/v1/files/upload", json::serialize(json::object{{"file_url", local}}), acct.api_secret),
        400, "VALIDATION_ERROR", "refusing");
  }
  // Even with --allow-private-fetch, cloud metadata stays out of reach, also through a redirect.
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  for (const std::string& url : {std::string("http://169.254.169.254/latest/meta-data/"),
                                 fx.url() + "/redirect?to=http://169.254.169.254/latest/meta-data/"}) {
    auto r = s.post("/v1/agent/generate", json::serialize(json::object{{"image", url}}), acct.api_secret);
    ASSERT_EQ(r.status, 200) << r.body;
    auto st = wait_agent(s, acct.api_secret, str(r.json(), "agent_id"));
    EXPECT_EQ(str(st, "status"), "failed");
    EXPECT_NE(str(st, "error_message").find("cloud metadata"), std::string::npos) << str(st, "error_message");
  }
  // A URL that answers 404 or with something that is not an image fails clearly too.
  auto r404 =
      s.post("/v1/agent/generate", json::serialize(json::object{{"image", fx.url() + "/files/missing.jpg"}}),
             acct.api_secret);
  auto st404 = wait_agent(s, acct.api_secret, str(r404.json(), "agent_id"));
  EXPECT_EQ(str(st404, "status"), "failed");
  EXPECT_NE(str(st404, "error_message").find("HTTP 404"), std::string::npos) << str(st404, "error_message");
  std::string text = fx.put_file("notes.txt", "just some text, not a picture");
  auto rtxt = s.post("/v1/agent/generate", json::serialize(json::object{{"image", text}}), acct.api_secret);
  auto sttxt = wait_agent(s, acct.api_secret, str(rtxt.json(), "agent_id"));
  EXPECT_EQ(str(sttxt, "status"), "failed");
  EXPECT_NE(str(sttxt, "error_message").find("image"), std::string::npos);
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
}

// The agent's own voice: generate accepts a built-in `voice` or a designed `voice_code`, the built
// model speaks with it, and the agent detail says which voice that is (also when it was chosen).
TEST(Agents, TheAgentSpeaksWithTheVoiceItWasGiven) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 100000);
  std::string image_url = fx.put_file("face.jpg", face_jpeg());
  auto voice_of = [&](const std::string& extra) {
    auto r =
        s.post("/v1/agent/generate", R"({"image": ")" + image_url + R"(")" + extra + "}", acct.api_secret);
    EXPECT_EQ(r.status, 200) << r.body;
    std::string code = str(r.json(), "agent_id");
    auto st = wait_agent(s, acct.api_secret, code);
    EXPECT_EQ(str(st, "status"), "ready") << json::serialize(st);
    auto detail = s.get("/v1/agent/" + code, acct.api_secret);
    EXPECT_EQ(detail.status, 200);
    return detail.json().at("data").at("voice");
  };
  auto f3 = voice_of(R"(, "voice": "F3")");
  EXPECT_EQ(str(f3, "id"), "F3");
  EXPECT_EQ(str(f3, "source"), "requested");

  auto designed = s.post("/v1/studio/voices",
                         R"({"name": "Warm", "base_voice": "M4", "axes": {"pitch": -0.2, "rate": 0.1}})",
                         acct.api_secret);
  ASSERT_EQ(designed.status, 201) << designed.body;
  std::string vcode = str(designed.json(), "voice_code");
  ASSERT_FALSE(vcode.empty()) << designed.body;
  auto dv = voice_of(R"(, "voice": "F1", "voice_code": ")" + vcode + R"(")");
  EXPECT_EQ(str(dv, "id"), "M4");  // voice_code wins over voice, as on /v1/tts
  EXPECT_EQ(str(dv, "source"), "voice_code");
  EXPECT_NEAR(dv.at("axes").at("pitch").to_number<double>(), -0.2, 1e-9);

  // Neither a voice nor a sample: the face chooses (face_swapped.jpg is a man's portrait).
  auto chosen = voice_of("");
  EXPECT_EQ(str(chosen, "id").substr(0, 1), "M") << str(chosen, "id");
  EXPECT_EQ(str(chosen, "source"), "face");

  long long before = balance_of(s, acct.api_secret);
  expect_error(s.post("/v1/agent/generate", R"({"voice": "Z9"})", acct.api_secret), 400, "VALIDATION_ERROR",
               "voice");
  expect_error(s.post("/v1/agent/generate", R"({"voice_code": "0f8fad5b-d9cb-469f-a165-70867728950e"})",
                      acct.api_secret),
               400, "VALIDATION_ERROR", "voice_code");
  EXPECT_EQ(balance_of(s, acct.api_secret), before);
}

}  // namespace
}  // namespace imago::testing

// Dynamics over real HTTP (SPEC 2.2, 3.2, 3.3, 4.10-4.12).
#include <gtest/gtest.h>

#include <set>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::string error_code(const HttpResponse& r) {
  auto v = r.json();
  if (!v.is_object() || !v.as_object().contains("error")) return "";
  return std::string(v.at("error").at("code").as_string());
}

TEST(Dynamics, GenerateGetBeforeAndAfterAndToggle) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  ASSERT_EQ(s.post("/v1/webhooks",
                   json::serialize(json::object{{"url", fx.url() + "/hook/dyn"},
                                                {"events", json::array{"dynamics.ready"}}}),
                   acct.api_secret)
                .status,
            200);
  auto r =
      s.post("/v1/agent/generate",
             R"({"image": ")" + base64_encode(face_jpeg()) + R"(", "aspect_ratio": "1:1"})", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");

  // Before anything was generated: 200, ready, url null, no gestures.
  auto before = s.get("/v1/dynamics/" + code, acct.api_secret);
  ASSERT_EQ(before.status, 200) << before.body;
  auto b = before.json().at("data");
  EXPECT_EQ(b.as_object().size(), 4u);
  EXPECT_TRUE(b.at("url").is_null());
  EXPECT_EQ(str(b, "status"), "ready");
  EXPECT_EQ(str(b, "agent_id"), code);
  EXPECT_TRUE(b.at("gestures").as_object().empty());

  // PUT while the agent is still generating: the config is stored, regeneration cannot start.
  auto early = s.put("/v1/dynamics/" + code, R"({"dynamics": {"enabled": false}})", acct.api_secret);
  ASSERT_EQ(early.status, 200) << early.body;
  if (str(early.json(), "regeneration_status") == "failed") {
    EXPECT_FALSE(str(early.json(), "regeneration_error").empty());
  }

  // Validation, all free.
  EXPECT_EQ(s.post("/v1/dynamics/generate", R"({})", acct.api_secret).status, 400);
  EXPECT_EQ(
      s.post("/v1/dynamics/generate", R"({"agent_id": ")" + code + R"(", "duration": 0})", acct.api_secret)
          .status,
      400);
  EXPECT_EQ(
      s.post("/v1/dynamics/generate", R"({"agent_id": ")" + code + R"(", "duration": 11})", acct.api_secret)
          .status,
      400);
  EXPECT_EQ(
      s.post("/v1/dynamics/generate", R"({"agent_id": ")" + code + R"(", "model": "kling"})", acct.api_secret)
          .status,
      400);
  EXPECT_EQ(s.post("/v1/dynamics/generate", R"({"agent_id": ")" + code + R"(", "image_url": "ftp://x"})",
                   acct.api_secret)
                .status,
            400);
  EXPECT_EQ(s.post("/v1/dynamics/generate", R"({"agent_id": "NOPE000000"})", acct.api_secret).status, 404);
  EXPECT_EQ(balance_of(s, acct.api_secret), 750);

  auto g = s.post("/v1/dynamics/generate",
                  R"({"agent_id": ")" + code + R"(", "duration": 1, "model": "auto"})", acct.api_secret);
  ASSERT_EQ(g.status, 200) << g.body;
  auto gj = g.json();
  EXPECT_EQ(gj.as_object().size(), 4u);
  EXPECT_TRUE(gj.at("success").as_bool());
  EXPECT_EQ(str(gj, "status"), "processing");
  EXPECT_EQ(str(gj, "agent_id"), code);
  EXPECT_FALSE(str(gj, "message").empty());
  EXPECT_EQ(balance_of(s, acct.api_secret), 500);
  // A second generation while one runs is refused, not charged.
  EXPECT_EQ(
      error_code(s.post("/v1/dynamics/generate", R"({"agent_id": ")" + code + R"("})", acct.api_secret)),
      "CONFLICT");

  auto during = s.get("/v1/dynamics/" + code, acct.api_secret).json().at("data");
  EXPECT_EQ(str(during, "status"), "generating");
  EXPECT_TRUE(during.at("url").is_null());
  EXPECT_TRUE(during.at("gestures").as_object().empty());

  json::value done;
  ASSERT_TRUE(eventually(
      [&] {
        done = s.get("/v1/dynamics/" + code, acct.api_secret).json().at("data");
        return str(done, "status") == "ready";
      },
      90));
  ASSERT_FALSE(done.at("url").is_null()) << json::serialize(done);
  std::string url = std::string(done.at("url").as_string());
  EXPECT_EQ(url.rfind(s.url() + "/v1/files/file_", 0), 0u);
  const auto& gestures = done.at("gestures").as_object();
  std::set<std::string> names;
  for (const auto& kv : gestures) names.insert(std::string(kv.key()));
  EXPECT_EQ(names, (std::set<std::string>{"mini_wave_hello", "talk_head_nod_subtle", "blow_kiss_heart",
                                          "laugh_react", "idle_subtle"}));
  auto clip =
      s.get(std::string(gestures.at("mini_wave_hello").as_string()).substr(s.url().size()), acct.api_secret);
  ASSERT_EQ(clip.status, 200);
  EXPECT_EQ(clip.body.substr(4, 4), "ftyp");
  EXPECT_EQ(clip.header("content-type"), "video/mp4");
  auto model = s.get(url.substr(s.url().size()), acct.api_secret);
  ASSERT_EQ(model.status, 200);
  EXPECT_EQ(str(model.json(), "format"), "imago-dynamics");

  // The dynamics.ready webhook carries the same URLs.
  ASSERT_TRUE(eventually([&] { return !fx.hooks("dyn").empty(); }, 20));
  auto event = json::parse(str(fx.hooks("dyn")[0], "body"));
  EXPECT_EQ(str(event, "type"), "dynamics.ready");
  EXPECT_EQ(str(event.at("data"), "url"), url);
  EXPECT_EQ(event.at("data").at("gestures"), done.at("gestures"));

  // PUT: merge config, toggle the model, regeneration of background movements starts.
  auto put = s.put("/v1/dynamics/" + code,
                   R"({"dynamics": {"keywords": {"cheers": "laugh_react"}}, "toggle_enabled": true})",
                   acct.api_secret);
  ASSERT_EQ(put.status, 200) << put.body;
  auto pj = put.json();
  EXPECT_TRUE(pj.at("success").as_bool());
  EXPECT_EQ(str(pj, "agent_id"), code);
  EXPECT_EQ(str(pj, "regeneration_status"), "started");
  EXPECT_FALSE(pj.as_object().contains("regeneration_error"));
  auto off = s.put("/v1/dynamics/" + code, R"({"dynamics": {}, "toggle_enabled": false})", acct.api_secret);
  EXPECT_EQ(off.status, 200) << off.body;
  EXPECT_EQ(
      s.put("/v1/dynamics/" + code, R"({"dynamics": {"keywords": {"hi": "dance"}}})", acct.api_secret).status,
      400);
  EXPECT_EQ(s.put("/v1/dynamics/" + code, R"({"toggle_enabled": true})", acct.api_secret).status, 400);
  EXPECT_EQ(s.put("/v1/dynamics/" + code, R"({"dynamics": {"enabled": "yes"}})", acct.api_secret).status,
            400);
  // The dynamics stay ready while movements regenerate; nothing more was charged.
  EXPECT_EQ(str(s.get("/v1/dynamics/" + code, acct.api_secret).json().at("data"), "status"), "ready");
  EXPECT_EQ(balance_of(s, acct.api_secret), 500);
}

TEST(Dynamics, InsufficientBalance) {
  TestServer s;
  auto acct = s.create_account("enterprise", 300);
  auto r = s.post("/v1/agent/generate", R"({"prompt": "x"})", acct.api_secret);
  ASSERT_EQ(r.status, 200);
  std::string code = str(r.json(), "agent_id");
  auto g = s.post("/v1/dynamics/generate", R"({"agent_id": ")" + code + R"("})", acct.api_secret);
  EXPECT_EQ(g.status, 402) << g.body;
  EXPECT_EQ(error_code(g), "INSUFFICIENT_BALANCE");
  EXPECT_EQ(balance_of(s, acct.api_secret), 50);
  EXPECT_EQ(str(s.get("/v1/dynamics/" + code, acct.api_secret).json().at("data"), "status"), "ready");
}

}  // namespace
}  // namespace imago::testing

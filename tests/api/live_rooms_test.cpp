// Live REST surface without a viewer: the exact 404s of SPEC 4.8/4.9, validation, the rooms list,
// and what an embed token may not do. (Sessions over WebSockets: live_session_test.cpp.)
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

// Generates an agent without inputs (procedural avatar) and waits until it is ready.
std::string ready_agent(const TestServer& s, const std::string& secret) {
  auto r = s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})", secret);
  EXPECT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  EXPECT_TRUE(eventually(
      [&] { return str(s.get("/v1/agent/" + code, secret).json().at("data"), "status") == "ready"; }, 120));
  return code;
}

std::string error_message(const HttpResponse& r) {
  return str(r.json().at("error"), "message");
}
std::string error_code(const HttpResponse& r) {
  return str(r.json().at("error"), "code");
}

TEST(LiveRooms, SpeakAndAddContextAnswerTheExact404s) {
  TestServer s;
  auto acct = s.create_account("pro", 1000);
  auto r = s.post("/v1/agent/Z99ZZZ9999/speak", R"({"message":"hi"})", acct.api_secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_code(r), "NOT_FOUND");
  EXPECT_EQ(error_message(r), "Agent not found for code: Z99ZZZ9999");

  std::string code = ready_agent(s, acct.api_secret);
  r = s.post("/v1/agent/" + code + "/speak", R"({"message":"hi"})", acct.api_secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_message(r), "No active rooms found for agent " + code);
  r = s.post("/v1/agent/" + code + "/add-context", R"({"context":"The shop opens at nine."})",
             acct.api_secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_message(r), "No active rooms found for agent " + code);
  r = s.post("/v1/agent/" + code + "/add-context", R"({"context":"x","type":"speak","room_id":"r1"})",
             acct.api_secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_message(r), "No active rooms found for agent " + code);
  r = s.post("/v1/agent/" + code + "/trigger-dynamics", R"({"action":"laugh_react"})", acct.api_secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_message(r), "No active rooms found for agent " + code);

  // Another account's agent is not found.
  auto other = s.create_account("pro", 1000);
  r = s.post("/v1/agent/" + code + "/speak", R"({"message":"hi"})", other.api_secret);
  EXPECT_EQ(error_message(r), "Agent not found for code: " + code);

  // Validation comes first and charges nothing.
  r = s.post("/v1/agent/" + code + "/add-context", R"({"context":"x","type":"shout"})", acct.api_secret);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_code(r), "VALIDATION_ERROR");
  EXPECT_EQ(s.post("/v1/agent/" + code + "/speak", R"({})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/agent/" + code + "/speak", R"({"message":"  "})", acct.api_secret).status, 400);
  EXPECT_EQ(
      s.post("/v1/agent/" + code + "/speak", R"({"message":"hi","room_id":"a b"})", acct.api_secret).status,
      400);
  EXPECT_EQ(s.post("/v1/agent/" + code + "/add-context", R"({"type":"speak"})", acct.api_secret).status, 400);
  r = s.post("/v1/agent/" + code + "/speak", R"({"mesage":"typo"})", acct.api_secret);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(error_message(r).find("mesage"), std::string::npos) << r.body;

  // Rooms: none running.
  r = s.get("/v1/rooms", acct.api_secret);
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.json().at("data").as_array().empty());
  EXPECT_EQ(s.get("/v1/rooms/lobby", acct.api_secret).status, 404);
  EXPECT_EQ(s.del("/v1/rooms/lobby", acct.api_secret).status, 404);
  EXPECT_EQ(s.post("/v1/rooms/lobby/interrupt", "", acct.api_secret).status, 404);
}

TEST(LiveRooms, EmbedTokenIsForOneAgentAndNotForRest) {
  TestServer s;
  auto acct = s.create_account("pro", 1000);
  std::string code = ready_agent(s, acct.api_secret);
  auto r = s.post("/v1/embed-tokens/request", R"({"agent_id":")" + code + R"(","fingerprint":"9f3c8b1a"})",
                  acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = r.json();
  EXPECT_EQ(str(j, "status"), "success");
  EXPECT_EQ(j.at("status_code").as_int64(), 200);
  std::string token = str(j.at("data"), "token");
  EXPECT_EQ(str(j.at("data"), "sid").rfind("emb_", 0), 0u);
  EXPECT_EQ(j.at("data").as_object().size(), 2u);
  // Not an api-secret, not a runtime token.
  EXPECT_EQ(s.get("/v1/agents", token).status, 401);
  HttpRequestOptions o;
  o.headers["Authorization"] = "Bearer " + token;
  EXPECT_EQ(s.request("POST", "/v1/runtime/heartbeat", "", "", o).status, 401);
  EXPECT_EQ(s.request("POST", "/v1/runtime-tokens/request", "", "", o).status, 401);
}

TEST(LiveRooms, ViewerPageIsServedWithItsScripts) {
  TestServer s;
  auto r = s.get("/embed/A12BCD3456");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.header("content-type").find("text/html"), std::string::npos);
  EXPECT_NE(r.body.find("/embed-assets/viewer.js"), std::string::npos);
  r = s.get("/embed-assets/viewer.js");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("bearer."), std::string::npos);
  r = s.get("/embed-assets/pcm-player.js");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("registerProcessor"), std::string::npos);
  EXPECT_EQ(s.get("/embed-assets/nope.js").status, 404);
}

}  // namespace
}  // namespace imago::testing

// Agent codes are a namespace per account (docs/api/agents.md): a custom agent_id another account
// already uses is simply the caller's own new agent (never a 409 that would reveal the other
// one), and the two agents are independent in every route: GET, update, DELETE, live rooms,
// speak and embed tokens.
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "support/ws_client.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

int64_t total_agents(const TestServer& s, const std::string& secret) {
  return s.get("/v1/agents", secret).json().at("pagination").at("total").as_int64();
}

TEST(AgentCodes, ACustomIdIsPerAccountAndTheTwoAgentsAreIndependent) {
  TestServer s({"--no-workers"});
  auto a = s.create_account("enterprise", 1000);
  auto b = s.create_account("enterprise", 1000);
  auto ra = s.post("/v1/agent/generate", R"({"agent_id": "my-bot", "name": "A's bot", "prompt": "I am A."})",
                   a.api_secret);
  ASSERT_EQ(ra.status, 200) << ra.body;
  // B asks for the same id: its own agent, not a conflict that would reveal A's.
  auto rb = s.post("/v1/agent/generate", R"({"agent_id": "my-bot", "name": "B's bot", "prompt": "I am B."})",
                   b.api_secret);
  ASSERT_EQ(rb.status, 200) << rb.body;
  EXPECT_EQ(str(rb.json(), "agent_id"), "my-bot");
  // Within one account the id is still taken.
  auto again = s.post("/v1/agent/generate", R"({"agent_id": "my-bot"})", b.api_secret);
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(str(again.json().at("error"), "code"), "CONFLICT");
  EXPECT_EQ(balance_of(s, a.api_secret), 750);
  EXPECT_EQ(balance_of(s, b.api_secret), 750);

  // Each account sees only its own agent.
  auto ga = s.get("/v1/agent/my-bot", a.api_secret);
  auto gb = s.get("/v1/agent/my-bot", b.api_secret);
  ASSERT_EQ(ga.status, 200) << ga.body;
  ASSERT_EQ(gb.status, 200) << gb.body;
  EXPECT_EQ(str(ga.json().at("data"), "name"), "A's bot");
  EXPECT_EQ(str(gb.json().at("data"), "name"), "B's bot");
  EXPECT_EQ(str(ga.json().at("data"), "system_prompt"), "I am A.");
  EXPECT_EQ(str(gb.json().at("data"), "system_prompt"), "I am B.");
  EXPECT_EQ(s.get("/v1/agent/status/my-bot", b.api_secret).status, 200);
  EXPECT_EQ(total_agents(s, a.api_secret), 1);
  EXPECT_EQ(total_agents(s, b.api_secret), 1);

  // Updating B's prompt leaves A's.
  ASSERT_EQ(s.post("/v1/agent/my-bot", R"({"system_prompt": "B, updated."})", b.api_secret).status, 200);
  EXPECT_EQ(str(s.get("/v1/agent/my-bot", a.api_secret).json().at("data"), "system_prompt"), "I am A.");
  EXPECT_EQ(str(s.get("/v1/agent/my-bot", b.api_secret).json().at("data"), "system_prompt"), "B, updated.");

  // Deleting B's agent refunds B's unstarted generation and leaves A's agent and charge alone.
  ASSERT_EQ(s.del("/v1/agent/my-bot", b.api_secret).status, 200);
  EXPECT_EQ(s.get("/v1/agent/my-bot", b.api_secret).status, 404);
  auto still = s.get("/v1/agent/my-bot", a.api_secret);
  ASSERT_EQ(still.status, 200) << still.body;
  EXPECT_EQ(str(still.json().at("data"), "status"), "processing");
  EXPECT_EQ(balance_of(s, b.api_secret), 1000);
  EXPECT_EQ(balance_of(s, a.api_secret), 750);
  // And B may take the id again.
  EXPECT_EQ(s.post("/v1/agent/generate", R"({"agent_id": "my-bot"})", b.api_secret).status, 200);
  EXPECT_EQ(total_agents(s, a.api_secret), 1);
}

// Generates `my-bot` in the account and waits until it is ready (procedural avatar: no inputs).
void ready_my_bot(const TestServer& s, const std::string& secret, const std::string& prompt) {
  auto r = s.post(
      "/v1/agent/generate",
      json::serialize(json::object{{"agent_id", "my-bot"}, {"prompt", prompt}, {"aspect_ratio", "1:1"}}),
      secret);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(eventually(
      [&] { return str(s.get("/v1/agent/my-bot", secret).json().at("data"), "status") == "ready"; }, 120));
}

std::string embed_token(const TestServer& s, const std::string& secret) {
  auto r = s.post("/v1/embed-tokens/request", R"({"agent_id": "my-bot", "fingerprint": "f00d"})", secret);
  EXPECT_EQ(r.status, 200) << r.body;
  return str(r.json().at("data"), "token");
}

std::unique_ptr<WsClient> join(const TestServer& s, const std::string& token) {
  WsClient::Options o;
  o.bearer = token;
  int status = 0;
  std::string body;
  auto ws = WsClient::connect(s.port(), "/v1/runtime/rooms/lobby?agent_code=my-bot", o, &status, &body);
  EXPECT_TRUE(ws) << status << " " << body;
  return ws;
}

TEST(AgentCodes, LiveRoomsSpeakAndEmbedTokensStayInTheirAccount) {
  TestServer s;
  auto a = s.create_account("enterprise", 2000);
  auto b = s.create_account("enterprise", 2000);
  ready_my_bot(s, a.api_secret, "I am A.");
  ready_my_bot(s, b.api_secret, "I am B.");

  // A viewer joins room "lobby" with A's embed token for my-bot: that is A's agent in A's room.
  auto ws_a = join(s, embed_token(s, a.api_secret));
  ASSERT_TRUE(ws_a);
  ASSERT_TRUE(ws_a->read_event("session.started"));
  auto rooms_a = s.get("/v1/rooms", a.api_secret).json().at("data").as_array();
  ASSERT_EQ(rooms_a.size(), 1u);
  EXPECT_EQ(str(rooms_a[0], "agent_code"), "my-bot");
  // B's my-bot has no room: B cannot speak into A's session, nor list, end or interrupt it.
  EXPECT_TRUE(s.get("/v1/rooms", b.api_secret).json().at("data").as_array().empty());
  auto speak_b = s.post("/v1/agent/my-bot/speak", R"({"message": "Hello from B."})", b.api_secret);
  EXPECT_EQ(speak_b.status, 404) << speak_b.body;
  EXPECT_EQ(str(speak_b.json().at("error"), "message"), "No active rooms found for agent my-bot");
  EXPECT_EQ(s.get("/v1/rooms/lobby", b.api_secret).status, 404);
  EXPECT_EQ(s.del("/v1/rooms/lobby", b.api_secret).status, 404);

  // B's embed token joins B's own "lobby" with B's agent: two rooms, one per account.
  auto ws_b = join(s, embed_token(s, b.api_secret));
  ASSERT_TRUE(ws_b);
  ASSERT_TRUE(ws_b->read_event("session.started"));
  EXPECT_EQ(s.get("/v1/rooms", a.api_secret).json().at("data").as_array().size(), 1u);
  EXPECT_EQ(s.get("/v1/rooms", b.api_secret).json().at("data").as_array().size(), 1u);

  // A speaks: only A's viewer hears it.
  auto speak_a = s.post("/v1/agent/my-bot/speak", R"({"message": "Only for A."})", a.api_secret);
  ASSERT_EQ(speak_a.status, 200) << speak_a.body;
  EXPECT_EQ(speak_a.json().at("delivered_to_rooms").as_int64(), 1);
  auto heard = ws_a->read_event("speech.started");
  ASSERT_TRUE(heard);
  EXPECT_EQ(json::parse(heard->data).at("text").as_string(), "Only for A.");
  EXPECT_FALSE(ws_b->read_event("speech.started", 1500));

  // Deleting B's agent leaves A's agent and A's room running.
  ASSERT_EQ(s.del("/v1/agent/my-bot", b.api_secret).status, 200);
  EXPECT_EQ(s.get("/v1/agent/my-bot", a.api_secret).status, 200);
  EXPECT_EQ(s.get("/v1/rooms", a.api_secret).json().at("data").as_array().size(), 1u);
}

}  // namespace
}  // namespace imago::testing

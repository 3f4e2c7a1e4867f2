// Cluster mode: two `imagod serve` processes on one PostgreSQL database (docs/operations.md).
// These run in the "pg." copy of the suite (IMAGO_TEST_BACKEND=postgres); the SQLite copy reports
// them as skipped with that reason, since SQLite cannot be shared by two nodes.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "fixtures/fixture.h"
#include "store/postgres/test_postgres.h"
#include "support/media_message.h"
#include "support/test_cert.h"
#include "support/test_server.h"
#include "support/ws_client.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

#define REQUIRE_POSTGRES()                                          \
  if (!testing_postgres())                                          \
  GTEST_SKIP() << "cluster tests run in the pg. copy of the suite " \
                  "(PostgreSQL); SQLite is single-node"

struct Cluster {
  pg::TestDatabase db;
  std::unique_ptr<TestServer> a, b;
  explicit Cluster(std::vector<std::string> a_args = {}, std::vector<std::string> b_args = {},
                   std::map<std::string, std::string> env = {}) {
    a_args.insert(a_args.end(), {"--database", db.url()});
    b_args.insert(b_args.end(), {"--database", db.url()});
    a = std::make_unique<TestServer>(a_args, env);
    b = std::make_unique<TestServer>(b_args, env);
  }
};

TEST(Cluster, KeysAndRevocationReachEveryNode) {
  REQUIRE_POSTGRES();
  Cluster c;
  auto acct = c.a->create_account("pro", 100);
  // Created on A, accepted by B.
  auto me = c.b->get("/v1/me", acct.api_secret);
  ASSERT_EQ(me.status, 200) << me.body;
  auto created = c.b->post("/v1/keys", R"({"alias":"second"})", acct.api_secret);
  ASSERT_EQ(created.status, 201) << created.body;
  std::string second = std::string(created.json().at("data").at("api_secret").as_string());
  std::string second_id = std::string(created.json().at("data").at("id").as_string());
  EXPECT_EQ(c.a->get("/v1/me", second).status, 200);
  // B remembers the key (the second request is answered from memory, docs/http.md, "Authentication
  // cache"). Revoked on A: refused by B on the very next request.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(c.b->get("/v1/me", second).status, 200);
  ASSERT_EQ(c.a->del("/v1/keys/" + second_id, acct.api_secret).status, 200);
  EXPECT_EQ(c.b->get("/v1/me", second).status, 401);
  EXPECT_EQ(c.b->get("/v1/me", acct.api_secret).status, 200);
  // A plan change on A: B's next request runs under the new plan.
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(str(c.b->get("/v1/me", acct.api_secret).json().at("data"), "plan"), "pro");
  ASSERT_EQ(
      c.a->admin("PUT", "/admin/v1/accounts/" + acct.account_id + "/plan", R"({"plan":"enterprise"})").status,
      200);
  auto after_plan = c.b->get("/v1/me", acct.api_secret);
  ASSERT_EQ(after_plan.status, 200) << after_plan.body;
  EXPECT_EQ(str(after_plan.json().at("data"), "plan"), "enterprise");
  // Rotated on A: B refuses the old secret and takes the new one at once.
  const std::string first_id = str(after_plan.json().at("data"), "key_id");
  auto rotated = c.a->post("/v1/keys/" + first_id + "/rotate", "", acct.api_secret);
  ASSERT_EQ(rotated.status, 201) << rotated.body;
  EXPECT_EQ(c.b->get("/v1/me", acct.api_secret).status, 401);
  const std::string replacement = std::string(rotated.json().at("data").at("api_secret").as_string());
  EXPECT_EQ(c.b->get("/v1/me", replacement).status, 200);
  acct.api_secret = replacement;
  // Credits granted through one node are the balance on the other.
  EXPECT_EQ(balance_of(*c.b, acct.api_secret), 100);
  auto ready = c.b->get("/readyz");
  ASSERT_EQ(ready.status, 200);
  EXPECT_EQ(str(ready.json().at("database"), "backend"), "postgres");
}

TEST(Cluster, OneAccountAlternatingBetweenNodesDrawsFromOneBucket) {
  REQUIRE_POSTGRES();
  Cluster c;
  auto acct = c.a->create_account("free", 0);  // free: 120 reads per minute
  int allowed = 0, limited = 0;
  int limit = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 160; ++i) {
    auto r = (i % 2 ? c.b : c.a)->get("/v1/me", acct.api_secret);
    if (r.status == 200)
      ++allowed;
    else if (r.status == 429)
      ++limited;
    else
      ADD_FAILURE() << r.status << " " << r.body;
    if (limit == 0 && !r.header("x-ratelimit-limit").empty())
      limit = std::stoi(r.header("x-ratelimit-limit"));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_GT(limit, 0);
  // Two private buckets would admit 2 x limit; one shared bucket admits limit + refill.
  EXPECT_GE(allowed, limit);
  EXPECT_LE(allowed, limit + static_cast<int>(seconds * limit / 60.0) + 1) << "over " << seconds << " s";
  EXPECT_GT(limited, 0);
}

TEST(Cluster, JobEnqueuedOnOneNodeRunsOnTheOther) {
  REQUIRE_POSTGRES();
  FixtureServer fx;
  Cluster c({"--no-workers"}, {});  // A serves HTTP only; B runs the jobs
  auto acct = c.a->create_account("enterprise", 1000);
  auto r = c.a->post("/v1/agent/generate",
                     json::serialize(json::object{{"image", fx.put_file("face.jpg", face_jpeg())}}),
                     acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  auto final_status = wait_agent(*c.a, acct.api_secret, code, 120);
  ASSERT_EQ(str(final_status, "status"), "ready") << json::serialize(final_status);
  // The model B stored is served by A (blobs live in the database).
  auto agent = c.a->get("/v1/agent/" + code, acct.api_secret);
  ASSERT_EQ(agent.status, 200) << agent.body;
  EXPECT_EQ(balance_of(*c.a, acct.api_secret), balance_of(*c.b, acct.api_secret));
}

HttpResponse heartbeat(const TestServer& s, const std::string& token) {
  HttpRequestOptions o;
  o.headers["Authorization"] = "Bearer " + token;
  return s.request("POST", "/v1/runtime/heartbeat", "", "", o);
}

// `n` binary (media) messages arrive within 200 messages, each within 5 s.
::testing::AssertionResult receives_frames(WsClient& ws, int n) {
  int frames = 0;
  for (int i = 0; i < 200 && frames < n; ++i) {
    auto m = ws.read(5000);
    if (!m) return ::testing::AssertionFailure() << "the connection ended after " << frames << " frames";
    frames += m->text ? 0 : 1;
  }
  if (frames < n) return ::testing::AssertionFailure() << "only " << frames << " frames in 200 messages";
  return ::testing::AssertionSuccess();
}

std::string runtime_token(const TestServer& s, const std::string& secret) {
  auto r = s.post("/v1/runtime-tokens/request", "", secret);
  EXPECT_EQ(r.status, 200) << r.body;
  return str(r.json().at("data"), "token");
}

std::string ready_agent(const TestServer& s, const std::string& secret) {
  auto r = s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})", secret);
  EXPECT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  EXPECT_TRUE(eventually(
      [&] { return str(s.get("/v1/agent/" + code, secret).json().at("data"), "status") == "ready"; }, 120));
  return code;
}

TEST(Cluster, RuntimeTokensSignedOnOneNodeVerifyOnTheOther) {
  REQUIRE_POSTGRES();
  Cluster c;
  auto acct = c.a->create_account("pro", 1000);
  // One signing key, created by whichever node started first and kept in the database.
  std::string t = runtime_token(*c.a, acct.api_secret);
  auto hb = heartbeat(*c.b, t);
  ASSERT_EQ(hb.status, 200) << hb.body;
  // ... and B's renewed token works on A.
  EXPECT_EQ(heartbeat(*c.a, str(hb.json().at("data"), "token")).status, 200);

  // A room join on B with A's token.
  std::string code = ready_agent(*c.a, acct.api_secret);
  WsClient::Options o;
  o.bearer = runtime_token(*c.a, acct.api_secret);
  int status = 0;
  std::string body;
  auto ws = WsClient::connect(c.b->port(), "/v1/runtime/rooms/r1?agent_code=" + code, o, &status, &body);
  ASSERT_TRUE(ws) << status << " " << body;
  EXPECT_TRUE(ws->read_event("session.started"));
  ws.reset();

  // A rotation on A reaches B: B verifies A's new key at once and keeps the old one verify-only.
  ASSERT_EQ(c.a->admin("POST", "/admin/v1/runtime-token-keys/rotate").status, 200);
  std::string t2 = runtime_token(*c.a, acct.api_secret);
  EXPECT_EQ(heartbeat(*c.b, t2).status, 200);
  EXPECT_EQ(heartbeat(*c.b, t).status, 200);
  // A second rotation, on B, retires the first key on A as well (A re-reads the keys when a token
  // names a key it does not know; the first key is then gone).
  ASSERT_EQ(c.b->admin("POST", "/admin/v1/runtime-token-keys/rotate").status, 200);
  std::string t3 = runtime_token(*c.b, acct.api_secret);
  EXPECT_EQ(heartbeat(*c.a, t3).status, 200);
  EXPECT_EQ(heartbeat(*c.a, t).status, 401);
  EXPECT_EQ(heartbeat(*c.a, t2).status, 200);
}

// A self-hosted session's meter is in the database: when its heartbeats move from one node to
// the other, the second node continues the count. (With a meter per node, B started its own count
// at 0 and replayed minutes A had charged, so the minutes after the switch were not billed.)
TEST(Cluster, SelfHostedMinutesContinueOnTheOtherNode) {
  REQUIRE_POSTGRES();
  Cluster c({"--live-billing-period-s", "1"}, {"--live-billing-period-s", "1"});
  auto acct = c.a->create_account("pro", 1000);
  const std::string token = runtime_token(*c.a, acct.api_secret);
  const std::string body = R"({"billing_type":"essence_self_hosted","session_id":"roaming"})";
  auto beat = [&](const TestServer& node) {
    HttpRequestOptions o;
    o.headers["Authorization"] = "Bearer " + token;
    return node.request("POST", "/v1/runtime/heartbeat", body, "", o).status;
  };
  auto minutes = [&] {
    std::multiset<long long> out;
    const json::value usage = c.a->get("/v1/usage?limit=100", acct.api_secret).json();
    for (const auto& e : usage.at("data").as_array()) {
      const std::string key = str(e, "operation_key");
      const std::string prefix = "live_minute:sh:roaming:";
      if (key.rfind(prefix, 0) == 0) out.insert(std::stoll(key.substr(prefix.size())));
    }
    return out;
  };
  ASSERT_EQ(beat(*c.a), 200);
  ASSERT_TRUE(eventually(
      [&] {
        EXPECT_EQ(beat(*c.a), 200);
        return minutes().size() >= 3;
      },
      30));
  const size_t on_a = minutes().size();
  // Now only B hears from the session. A lower bound of waiting: more cannot fail the test.
  ASSERT_EQ(beat(*c.b), 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_EQ(beat(*c.b), 200);
  const auto all = minutes();
  EXPECT_GE(all.size(), on_a + 1) << "B continued A's count";
  std::multiset<long long> expected;
  for (long long i = 0; i < static_cast<long long>(all.size()); ++i) expected.insert(i);
  EXPECT_EQ(all, expected) << "each minute from 0 charged once";
  EXPECT_EQ(balance_of(*c.b, acct.api_secret), 1000 - static_cast<long long>(all.size()));
}

TEST(Cluster, RestCommandsOnOneNodeReachARoomRunningOnTheOther) {
  REQUIRE_POSTGRES();
  Cluster c;
  auto acct = c.a->create_account("pro", 1000);
  std::string code = ready_agent(*c.a, acct.api_secret);
  WsClient::Options o;
  o.bearer = runtime_token(*c.b, acct.api_secret);
  int status = 0;
  std::string body;
  auto ws = WsClient::connect(c.b->port(), "/v1/runtime/rooms/lobby?agent_code=" + code, o, &status, &body);
  ASSERT_TRUE(ws) << status << " " << body;
  ASSERT_TRUE(ws->read_event("session.started"));

  // speak through A: the room runs on B, and counts once.
  auto r = c.a->post("/v1/agent/" + code + "/speak", R"({"message":"Hello from the other node."})",
                     acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().at("delivered_to_rooms").as_int64(), 1);
  auto started = ws->read_event("speech.started");
  ASSERT_TRUE(started);
  EXPECT_EQ(json::parse(started->data).at("text").as_string(), "Hello from the other node.");

  // interrupt through A (by room id).
  r = c.a->post("/v1/rooms/lobby/interrupt", "", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto finished = ws->read_event("playback_finished");
  ASSERT_TRUE(finished);
  EXPECT_TRUE(json::parse(finished->data).at("interrupted").as_bool());

  // add-context through A reaches B's room.
  r = c.a->post("/v1/agent/" + code + "/add-context",
                R"({"context":"The shop opens at nine.","room_id":"lobby"})", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().at("delivered_to_rooms").as_int64(), 1);
  EXPECT_TRUE(eventually(
      [&] {
        auto room = c.b->get("/v1/rooms/lobby", acct.api_secret);
        return room.status == 200 && room.json().at("data").at("context_items").as_int64() == 1;
      },
      10));

  // trigger-dynamics through A: checked on A (a gesture the model lacks is a 400), played on B.
  r = c.a->post("/v1/agent/" + code + "/trigger-dynamics", R"({"action":"no_such_gesture"})",
                acct.api_secret);
  EXPECT_EQ(r.status, 400) << r.body;
  r = c.a->post("/v1/agent/" + code + "/trigger-dynamics", R"({"action":"mini_wave_hello"})",
                acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json().at("delivered_to_rooms").as_int64(), 1);
  EXPECT_TRUE(ws->read_event("dynamics.triggered"));

  // A room that runs nowhere is still a 404.
  r = c.a->post("/v1/agent/" + code + "/speak", R"({"message":"x","room_id":"elsewhere"})", acct.api_secret);
  EXPECT_EQ(r.status, 404);
  // DELETE through A ends the room on B: the viewer is told, the lease goes, and A answers once B
  // has let go (so a 200 means the room has ended).
  r = c.a->del("/v1/rooms/lobby", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.json().at("ended").as_bool());
  EXPECT_EQ(r.json().at("room_id").as_string(), "lobby");
  auto ended = ws->read_event("session.ended");
  ASSERT_TRUE(ended);
  EXPECT_EQ(json::parse(ended->data).at("reason").as_string(), "terminated");
  EXPECT_EQ(c.a->post("/v1/agent/" + code + "/speak", R"({"message":"x"})", acct.api_secret).status, 404);
  EXPECT_EQ(c.b->get("/v1/rooms/lobby", acct.api_secret).status, 404);
  EXPECT_EQ(c.a->del("/v1/rooms/lobby", acct.api_secret).status, 404);
}

TEST(Cluster, AViewerOnTheOtherNodeJoinsTheRunningSessionThroughARelay) {
  REQUIRE_POSTGRES();
  Cluster c;
  auto acct = c.a->create_account("pro", 1000);
  std::string code = ready_agent(*c.a, acct.api_secret);
  const std::string target = "/v1/runtime/rooms/lobby?agent_code=" + code;
  WsClient::Options o;
  o.bearer = runtime_token(*c.b, acct.api_secret);
  int status = 0;
  std::string body;
  auto on_b = WsClient::connect(c.b->port(), target, o, &status, &body);
  ASSERT_TRUE(on_b) << status << " " << body;
  auto started_b = on_b->read_event("session.started");
  ASSERT_TRUE(started_b);

  // Through A, with the subprotocol form of the token: the same session, rendered by B.
  o.bearer = runtime_token(*c.a, acct.api_secret);
  o.via_subprotocol = true;
  std::string proto;
  auto on_a = WsClient::connect(c.a->port(), target, o, &status, &body, &proto);
  ASSERT_TRUE(on_a) << status << " " << body;
  EXPECT_EQ(proto, "imago.v1");
  auto started_a = on_a->read_event("session.started");
  ASSERT_TRUE(started_a);
  EXPECT_EQ(json::parse(started_a->data).at("session_id"), json::parse(started_b->data).at("session_id"));
  // Frames reach the relayed viewer.
  EXPECT_TRUE(receives_frames(*on_a, 5));
  // B's room has both viewers; A runs no room of its own.
  auto room = c.b->get("/v1/rooms/lobby", acct.api_secret);
  ASSERT_EQ(room.status, 200) << room.body;
  EXPECT_EQ(room.json().at("data").at("viewers").as_int64(), 2);
  // A runs no room of its own: it shows B's, as B last published it.
  EXPECT_TRUE(eventually(
      [&] {
        auto r = c.a->get("/v1/rooms/lobby", acct.api_secret);
        return r.status == 200 && r.json().at("data").at("remote").as_bool() &&
               r.json().at("data").at("viewers").as_int64() == 2;
      },
      10));

  // The relayed viewer's control messages reach the owner: a speak typed through A is heard by both.
  ASSERT_TRUE(on_a->send_text(R"({"type":"speak","text":"Relayed through the other node."})"));
  for (auto* ws : {on_a.get(), on_b.get()}) {
    auto started = ws->read_event("speech.started");
    ASSERT_TRUE(started);
    EXPECT_EQ(json::parse(started->data).at("text").as_string(), "Relayed through the other node.");
  }

  // The relayed viewer leaves: B counts one viewer again. The session ends on B: the relayed
  // viewer is told and closed too.
  on_a->close();
  EXPECT_TRUE(eventually(
      [&] {
        return c.b->get("/v1/rooms/lobby", acct.api_secret).json().at("data").at("viewers").as_int64() == 1;
      },
      10));
  auto again = WsClient::connect(c.a->port(), target, o, &status, &body);
  ASSERT_TRUE(again) << status << " " << body;
  ASSERT_TRUE(again->read_event("session.started"));
  ASSERT_EQ(c.b->del("/v1/rooms/lobby", acct.api_secret).status, 200);
  auto ended = again->read_event("session.ended");
  ASSERT_TRUE(ended);
  EXPECT_EQ(json::parse(ended->data).at("reason").as_string(), "terminated");
  EXPECT_TRUE(eventually([&] { return again->closed(); }, 10));
}

// An H.264 viewer relayed through the other node: its first pictures are the codec configuration
// and then a key frame (the relay gates pictures as the owner does, so it never passes a P-frame
// whose reference its viewer lacks), and audio flows as Opus; a key frame it asks for through the
// relay comes.
TEST(Cluster, ARelayedH264ViewerStartsAtAKeyFrameAndItsKeyFrameRequestsReachTheOwner) {
  REQUIRE_POSTGRES();
  // Periodic key frames only every 10 s, so one that comes within 5 s of the request was asked for.
  Cluster c({"--live-keyframe-s", "10"}, {"--live-keyframe-s", "10"});
  auto acct = c.a->create_account("pro", 1000);
  std::string code = ready_agent(*c.a, acct.api_secret);
  const std::string target = "/v1/runtime/rooms/h264?agent_code=" + code + "&media=h264%2Bopus";
  WsClient::Options o;
  o.bearer = runtime_token(*c.b, acct.api_secret);
  auto on_b = WsClient::connect(c.b->port(), target, o);
  ASSERT_TRUE(on_b && on_b->read_event("session.started"));
  o.bearer = runtime_token(*c.a, acct.api_secret);
  auto on_a = WsClient::connect(c.a->port(), target, o);
  ASSERT_TRUE(on_a);
  auto started = on_a->read_event("session.started");
  ASSERT_TRUE(started);
  EXPECT_EQ(json::parse(started->data).at("video_codec").as_string(), "h264");
  bool config = false, first_picture_key = false;
  int pictures = 0, opus = 0;
  for (int i = 0; i < 3000 && (pictures < 10 || opus < 10); ++i) {
    auto m = on_a->read(5000);
    ASSERT_TRUE(m);
    auto x = media(*m);
    if (!x) continue;
    if (x->flags & 16) {
      config = config || x->kind == 1;
      continue;
    }
    if (x->kind == 1) {
      if (pictures++ == 0) first_picture_key = (x->flags & 8) != 0;
    } else {
      opus += x->codec == 2;
    }
  }
  EXPECT_TRUE(config);
  EXPECT_TRUE(first_picture_key);
  EXPECT_GE(pictures, 10);
  EXPECT_GE(opus, 10);
  // A key frame asked for through the relay comes long before the next periodic one.
  ASSERT_TRUE(on_a->send_text(R"({"type":"request_key_frame"})"));
  const auto asked = std::chrono::steady_clock::now();
  bool key = false;
  while (!key && std::chrono::steady_clock::now() - asked < std::chrono::seconds(5)) {
    auto m = on_a->read(1000);
    if (!m) break;
    auto x = media(*m);
    key = x && x->kind == 1 && (x->flags & 8) && !(x->flags & 16);
  }
  EXPECT_TRUE(key);
}

// Two nodes serving TLS (a certificate made at test time, its own CA, valid for 127.0.0.1): the
// node URLs are https://, and a relay verifies the owner's certificate. A trusts the cluster's CA
// (--node-ca) and relays; B only trusts the system's CAs, so it refuses to relay to A.
TEST(Cluster, ViewersAreRelayedToANodeServingTlsOnlyWhenItsCertificateVerifies) {
  REQUIRE_POSTGRES();
  const std::string dir = make_temp_dir();
  const TestCert cert = write_test_cert(dir);
  std::vector<std::string> tls{"--tls-cert", cert.cert_file, "--tls-key", cert.key_file};
  std::vector<std::string> a_args = tls;
  a_args.insert(a_args.end(), {"--node-ca", cert.cert_file});
  {
    Cluster c(a_args, tls);
    ASSERT_EQ(c.b->url().rfind("https://", 0), 0u);
    auto acct = c.a->create_account("pro", 1000);
    std::string code = ready_agent(*c.a, acct.api_secret);
    WsClient::Options o;
    o.ca_file = cert.cert_file;
    o.bearer = runtime_token(*c.b, acct.api_secret);
    int status = 0;
    std::string body;
    const std::string target = "/v1/runtime/rooms/lobby?agent_code=" + code;
    auto on_b = WsClient::connect(c.b->port(), target, o, &status, &body);
    ASSERT_TRUE(on_b) << status << " " << body;
    auto started_b = on_b->read_event("session.started");
    ASSERT_TRUE(started_b);

    // Through A: relayed over wss:// to B, verified against --node-ca.
    o.bearer = runtime_token(*c.a, acct.api_secret);
    auto on_a = WsClient::connect(c.a->port(), target, o, &status, &body);
    ASSERT_TRUE(on_a) << status << " " << body;
    auto started_a = on_a->read_event("session.started");
    ASSERT_TRUE(started_a);
    EXPECT_EQ(json::parse(started_a->data).at("session_id"), json::parse(started_b->data).at("session_id"));
    EXPECT_TRUE(receives_frames(*on_a, 5));
    ASSERT_TRUE(on_a->send_text(R"({"type":"speak","text":"Relayed over TLS."})"));
    for (auto* ws : {on_a.get(), on_b.get()}) {
      auto started = ws->read_event("speech.started");
      ASSERT_TRUE(started);
      EXPECT_EQ(json::parse(started->data).at("text").as_string(), "Relayed over TLS.");
    }
    EXPECT_EQ(c.b->get("/v1/rooms/lobby", acct.api_secret).json().at("data").at("viewers").as_int64(), 2);

    // A room on A, a viewer through B: B cannot verify A's certificate with the system's CAs, so
    // it does not relay (503), and A's room keeps its one viewer.
    o.bearer = runtime_token(*c.a, acct.api_secret);
    auto front =
        WsClient::connect(c.a->port(), "/v1/runtime/rooms/front?agent_code=" + code, o, &status, &body);
    ASSERT_TRUE(front) << status << " " << body;
    ASSERT_TRUE(front->read_event("session.started"));
    o.bearer = runtime_token(*c.b, acct.api_secret);
    status = 0;
    EXPECT_FALSE(
        WsClient::connect(c.b->port(), "/v1/runtime/rooms/front?agent_code=" + code, o, &status, &body));
    EXPECT_EQ(status, 503) << body;
    EXPECT_EQ(c.a->get("/v1/rooms/front", acct.api_secret).json().at("data").at("viewers").as_int64(), 1);
  }
  std::filesystem::remove_all(dir);
}

// GET /v1/rooms on either node lists the account's rooms on both: its own with their live state,
// the other's from the state the owner publishes with each lease renewal (marked remote).
TEST(Cluster, RoomListingShowsTheAccountsRoomsOnEveryNode) {
  REQUIRE_POSTGRES();
  Cluster c;
  auto acct = c.a->create_account("pro", 1000);
  auto other = c.a->create_account("pro", 1000);
  std::string code = ready_agent(*c.a, acct.api_secret);
  WsClient::Options o;
  o.bearer = runtime_token(*c.a, acct.api_secret);
  int status = 0;
  std::string body;
  auto on_a = WsClient::connect(c.a->port(), "/v1/runtime/rooms/front?agent_code=" + code, o, &status, &body);
  ASSERT_TRUE(on_a) << status << " " << body;
  auto started_a = on_a->read_event("session.started");
  ASSERT_TRUE(started_a);
  o.bearer = runtime_token(*c.b, acct.api_secret);
  auto on_b = WsClient::connect(c.b->port(), "/v1/runtime/rooms/back?agent_code=" + code, o, &status, &body);
  ASSERT_TRUE(on_b) << status << " " << body;
  auto started_b = on_b->read_event("session.started");
  ASSERT_TRUE(started_b);

  auto rooms_of = [&](TestServer& node, const std::string& secret) {
    auto r = node.get("/v1/rooms", secret);
    EXPECT_EQ(r.status, 200) << r.body;
    std::map<std::string, json::object> by_id;
    if (r.status != 200) return by_id;
    const json::value j = r.json();
    for (const auto& v : j.at("data").as_array()) by_id[str(v, "room_id")] = v.as_object();
    return by_id;
  };
  for (TestServer* node : {c.a.get(), c.b.get()}) {
    const bool is_a = node == c.a.get();
    auto rooms = rooms_of(*node, acct.api_secret);
    ASSERT_EQ(rooms.size(), 2u) << (is_a ? "node A" : "node B");
    const json::object& local = rooms.at(is_a ? "front" : "back");
    const json::object& remote = rooms.at(is_a ? "back" : "front");
    EXPECT_FALSE(local.contains("remote"));
    EXPECT_EQ(local.at("session_id"), json::parse((is_a ? started_a : started_b)->data).at("session_id"));
    EXPECT_TRUE(remote.at("remote").as_bool());
    EXPECT_EQ(remote.at("session_id"), json::parse((is_a ? started_b : started_a)->data).at("session_id"));
    EXPECT_EQ(remote.at("agent_code").as_string(), code);
    EXPECT_TRUE(remote.at("started_at").is_string()) << json::serialize(remote);
    EXPECT_TRUE(remote.at("details_as_of").is_string()) << json::serialize(remote);
    EXPECT_EQ(remote.at("billing_type").as_string(), local.at("billing_type").as_string());
  }
  // The owner's state reaches the other node with the next renewal: the viewer count of B's room
  // (1 at the claim, published as 1 once the viewer is in) and its state.
  EXPECT_TRUE(eventually(
      [&] {
        auto rooms = rooms_of(*c.a, acct.api_secret);
        return rooms.count("back") && rooms.at("back").at("viewers").as_int64() == 1 &&
               rooms.at("back").at("state").as_string() == "active";
      },
      10));
  // Another account sees none of them, on either node.
  EXPECT_TRUE(rooms_of(*c.a, other.api_secret).empty());
  EXPECT_TRUE(rooms_of(*c.b, other.api_secret).empty());
  // A room that ends on B leaves both listings.
  ASSERT_EQ(c.b->del("/v1/rooms/back", acct.api_secret).status, 200);
  EXPECT_TRUE(eventually([&] { return rooms_of(*c.a, acct.api_secret).size() == 1; }, 10));
  EXPECT_EQ(rooms_of(*c.b, acct.api_secret).size(), 1u);
  EXPECT_EQ(c.a->get("/v1/rooms/back", acct.api_secret).status, 404);
}

// kill -9 of the node running a job: another node re-claims it once the lease expires, and the job
// finishes with one charge. Every process here is a TestServer (SIGTERM then SIGKILL by pid, with
// bounded waits, in its destructor, and PR_SET_PDEATHSIG) on the run's shared PostgreSQL.
TEST(Cluster, KillNineOfTheRunningNodeLetsAnotherNodeReclaimTheJob) {
  REQUIRE_POSTGRES();
  FixtureServer fx;
  pg::TestDatabase db;
  std::map<std::string, std::string> env = {{"IMAGO_JOB_LEASE_MS", "1500"}};
  // Only A runs jobs at first, so the job is A's.
  auto a = std::make_unique<TestServer>(std::vector<std::string>{"--database", db.url()}, env);
  auto acct = a->create_account("enterprise", 1000);
  // A video input makes the build scan many frames: long enough to be killed in the middle.
  std::string video = read_file("/usr/share/doc/opencv-doc/examples/data/Megamind.avi");
  ASSERT_FALSE(video.empty());
  auto r = a->post("/v1/agent/generate",
                   json::serialize(json::object{{"video", fx.put_file("m.avi", video)}}), acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  std::string status_at_kill;
  ASSERT_TRUE(eventually(
      [&] {
        status_at_kill = str(a->get("/v1/agent/status/" + code, acct.api_secret).json().at("data"), "status");
        return status_at_kill != "processing";
      },
      30));
  a->kill9();
  ASSERT_TRUE(status_at_kill == "generating" || status_at_kill == "completed")
      << "killed too late: " << status_at_kill;

  // B, a different node on the same database, takes the job over after the lease.
  TestServer b({"--database", db.url()}, env);
  auto final_status = wait_agent(b, acct.api_secret, code, 120);
  ASSERT_EQ(str(final_status, "status"), "ready") << json::serialize(final_status);
  EXPECT_EQ(balance_of(b, acct.api_secret), 750);
  int charges = 0, refunds = 0;
  json::value usage = b.get("/v1/usage", acct.api_secret).json();
  for (const auto& e : usage.at("data").as_array()) {
    if (str(e, "kind") == "charge") ++charges;
    if (str(e, "kind") == "refund") ++refunds;
  }
  EXPECT_EQ(charges, 1);
  EXPECT_EQ(refunds, 0);
}

// kill -9 of the node running a recorded session, for good (docs/sessions.md, "A node that never
// comes back"): the other node, sweeping every half second with a 1 s grace, leaves the session
// alone while its node renews the lease, then ends it once the lease has lapsed (the 15 s lease
// still applies): reason shutdown, at the lease's last renewal rather than at the sweep, the
// recording failed (it was on the dead node's disk), and the webhook sent once.
TEST(Cluster, ASessionOfANodeKilledForGoodIsEndedByAnotherNode) {
  REQUIRE_POSTGRES();
  FixtureServer fx;
  Cluster c({"--allow-private-fetch"}, {"--allow-private-fetch", "--session-sweep-grace-s", "1"});
  auto acct = c.a->create_account("enterprise", 2000);
  auto hook = c.a->post("/v1/webhooks",
                        json::serialize(json::object{{"url", fx.url() + "/hook/swept"},
                                                     {"events", json::array{"session.ended"}}}),
                        acct.api_secret);
  ASSERT_EQ(hook.status, 200) << hook.body;
  fx.set_secret("swept", str(hook.json().at("data"), "secret"));
  std::string code = ready_agent(*c.a, acct.api_secret);
  WsClient::Options o;
  o.bearer = runtime_token(*c.a, acct.api_secret);
  auto ws = WsClient::connect(c.a->port(), "/v1/runtime/rooms/doomed?agent_code=" + code + "&record=true", o);
  ASSERT_TRUE(ws);
  auto started = ws->read_event("session.started");
  ASSERT_TRUE(started);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string id(json::parse(started->data).at("session_id").as_string());
  // Five seconds of pictures: B sweeps ten times meanwhile, and a live lease is never lapsed.
  int frames = 0;
  for (int i = 0; i < 2000 && frames < 125; ++i) {
    auto m = ws->read(5000);
    ASSERT_TRUE(m);
    frames += !m->text && !m->data.empty() && m->data[0] == 1;
  }
  auto alive = c.b->get("/v1/sessions/" + id, acct.api_secret);
  ASSERT_EQ(alive.status, 200) << alive.body;
  EXPECT_EQ(str(alive.json(), "status"), "active") << alive.body;
  const double ran_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.a->kill9();

  json::value after;
  ASSERT_TRUE(eventually(
      [&] {
        auto r = c.b->get("/v1/sessions/" + id, acct.api_secret);
        after = r.status == 200 ? r.json() : json::value();
        return after.is_object() && str(after, "status") == "ended";
      },
      90))
      << json::serialize(after);
  EXPECT_EQ(str(after, "end_reason"), "shutdown") << json::serialize(after);
  // At the last renewal (every 3 s) before the kill, not 15 s or more later when it was swept.
  const double session_s = after.at("duration_seconds").to_number<double>();
  EXPECT_GT(session_s, 0.0) << json::serialize(after);
  EXPECT_LE(session_s, ran_s + 1.0) << json::serialize(after);
  ASSERT_TRUE(after.at("recording").is_object()) << json::serialize(after);
  EXPECT_EQ(str(after.at("recording"), "status"), "failed") << json::serialize(after);
  // The webhook, signed, once (B's workers deliver it).
  json::array got;
  ASSERT_TRUE(eventually([&] {
    got = fx.hooks("swept");
    return !got.empty();
  }));
  // Several more sweeps of B go by: none sends a second one.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  got = fx.hooks("swept");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].at("verified"), json::value(true));
  auto payload = json::parse(str(got[0], "body"));
  EXPECT_EQ(str(payload.at("data"), "session_id"), id);
  EXPECT_EQ(str(payload.at("data"), "end_reason"), "shutdown");
}

}  // namespace
}  // namespace imago::testing

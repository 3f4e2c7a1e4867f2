// What clients can make a live node hold, against the real imagod (docs/live-protocol.md,
// "Bounds"; docs/operations.md): the node's capacity and an account's share under concurrent
// joins, REST speak / add-context refused clearly once a room holds its bounds, a WebSocket
// handshake that fails does not leave a billed room behind, and an embed token starts only the
// session type it was minted for.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
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

std::string embed_token(const TestServer& s, const std::string& secret, const std::string& code,
                        const std::string& extra = "") {
  auto r = s.post("/v1/embed-tokens/request",
                  R"({"agent_id":")" + code + R"(","fingerprint":"f00d")" + extra + "}", secret);
  EXPECT_EQ(r.status, 200) << r.body;
  return r.status == 200 ? str(r.json().at("data"), "token") : "";
}

std::unique_ptr<WsClient> join(const TestServer& s, const std::string& room, const std::string& code,
                               const std::string& token, const std::string& query = "", int* status = nullptr,
                               std::string* body = nullptr) {
  WsClient::Options o;
  o.bearer = token;
  return WsClient::connect(s.port(), "/v1/runtime/rooms/" + room + "?agent_code=" + code + query, o, status,
                           body);
}

std::string error_code(const std::string& body) {
  json::value v = json::parse(body);
  return str(v.at("error"), "code");
}

struct Joins {
  std::atomic<int> upgraded{0};
  std::mutex mu;
  std::map<int, int> refused;  // HTTP status -> count
  std::map<std::string, int> codes;
  std::vector<std::unique_ptr<WsClient>> clients;
};

// `n` joins at once, each to its own room, from `threads` threads released together.
void join_concurrently(const TestServer& s, const std::string& code, const std::string& token, int n,
                       const std::string& prefix, Joins& out) {
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      int status = 0;
      std::string body;
      auto c = join(s, prefix + std::to_string(i), code, token, "", &status, &body);
      std::lock_guard lock(out.mu);
      if (c) {
        ++out.upgraded;
        out.clients.push_back(std::move(c));
      } else {
        ++out.refused[status];
        if (!body.empty()) ++out.codes[error_code(body)];
      }
    });
  }
  go = true;
  for (auto& t : threads) t.join();
}

TEST(LiveBounds, SixtyConcurrentJoinsMakeExactlyTheNodesCapacity) {
  TestServer s({"--max-live-sessions", "16", "--live-sessions-per-account", "16", "--live-frame-side", "64"});
  auto acct = s.create_account("enterprise", 5000);
  std::string code = ready_agent(s, acct.api_secret);
  std::string token = runtime_token(s, acct.api_secret);
  Joins j;
  join_concurrently(s, code, token, 60, "cap", j);
  EXPECT_EQ(j.upgraded.load(), 16);
  EXPECT_EQ(j.refused[503], 44);
  auto rooms = s.get("/v1/rooms", acct.api_secret);
  ASSERT_EQ(rooms.status, 200);
  EXPECT_EQ(rooms.json().at("data").as_array().size(), 16u);
  std::printf("joins against a cap of 16 under 60 concurrent attempts: %d sessions, %d refused with 503\n",
              j.upgraded.load(), j.refused[503]);
}

TEST(LiveBounds, OneAccountGetsItsShareAndAnotherAccountStillJoins) {
  // Default share: half of --max-live-sessions.
  TestServer s({"--max-live-sessions", "6", "--live-frame-side", "64"});
  auto a = s.create_account("enterprise", 5000);
  auto b = s.create_account("enterprise", 5000);
  std::string code_a = ready_agent(s, a.api_secret);
  std::string code_b = ready_agent(s, b.api_secret);
  Joins j;
  join_concurrently(s, code_a, runtime_token(s, a.api_secret), 20, "share", j);
  EXPECT_EQ(j.upgraded.load(), 3);
  EXPECT_EQ(j.refused[429], 17);
  EXPECT_EQ(j.codes["RATE_LIMITED"], 17);
  // The other account still finds room on the node.
  auto other = join(s, "mine", code_b, runtime_token(s, b.api_secret));
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->read_event("session.started"));
  // A room ended with DELETE gives its place back at once.
  auto rooms = s.get("/v1/rooms", a.api_secret).json();
  ASSERT_EQ(rooms.at("data").as_array().size(), 3u);
  const std::string first = str(rooms.at("data").as_array()[0], "room_id");
  ASSERT_EQ(s.del("/v1/rooms/" + first, a.api_secret).status, 200);
  auto next = join(s, "next", code_a, runtime_token(s, a.api_secret));
  ASSERT_TRUE(next);
  EXPECT_TRUE(next->read_event("session.started"));
}

TEST(LiveBounds, RestSpeakAndAddContextAreRefusedClearlyAtTheRoomsBounds) {
  TestServer s({"--live-frame-side", "64"});
  auto acct = s.create_account("enterprise", 5000);
  std::string code = ready_agent(s, acct.api_secret);
  auto v = join(s, "lobby", code, runtime_token(s, acct.api_secret));
  ASSERT_TRUE(v);
  ASSERT_TRUE(v->read_event("session.started"));
  const std::string speak = "/v1/agent/" + code + "/speak";
  const std::string context = "/v1/agent/" + code + "/add-context";
  // Over the live caps: 400 before anything is queued.
  auto r = s.post(speak, R"({"message":")" + std::string(2001, 'a') + R"("})", acct.api_secret);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(error_code(r.body), "VALIDATION_ERROR");
  r = s.post(context, R"({"context":")" + std::string(4001, 'k') + R"("})", acct.api_secret);
  EXPECT_EQ(r.status, 400) << r.body;
  // A flood of speech: each one seconds long, so the queue fills; then 429 RATE_LIMITED.
  int ok = 0, full = 0, other = 0;
  for (int i = 0; i < 40; ++i) {
    r = s.post(speak,
               R"({"message":"This is sentence number )" + std::to_string(i) +
                   R"(, and it takes the agent a few seconds to say all of it out loud."})",
               acct.api_secret);
    if (r.status == 200) {
      ++ok;
    } else if (r.status == 429 && error_code(r.body) == "RATE_LIMITED") {
      ++full;
      EXPECT_EQ(str(r.json(), "status"), "error");
      EXPECT_EQ(r.json().at("status_code").as_int64(), 429);
      EXPECT_EQ(r.json().at("error").at("httpStatus").as_int64(), 429);
      EXPECT_FALSE(r.header("retry-after").empty());
    } else {
      ++other;
      ADD_FAILURE() << r.status << " " << r.body;
    }
  }
  EXPECT_GE(ok, 16);
  EXPECT_GT(full, 0);
  EXPECT_EQ(other, 0);
  // Context: 4000-character items, far more than a room keeps: all accepted, the oldest evicted.
  for (int i = 0; i < 40; ++i) {
    r = s.post(context, R"({"context":")" + std::string(4000, 'k') + R"("})", acct.api_secret);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  r = s.get("/v1/rooms/lobby", acct.api_secret);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json().at("data").at("context_items").as_int64(), 16);  // 64 KiB / (4000 + 32)
}

TEST(LiveBounds, AWebSocketFloodIsRateLimitedAndTheRoomKeepsItsBounds) {
  TestServer s({"--live-frame-side", "64"});
  auto acct = s.create_account("enterprise", 5000);
  std::string code = ready_agent(s, acct.api_secret);
  auto v = join(s, "flood", code, runtime_token(s, acct.api_secret));
  ASSERT_TRUE(v);
  ASSERT_TRUE(v->read_event("session.started"));
  // Far faster than 10 a second: most are refused with RATE_LIMITED, none is lost silently.
  const std::string context =
      json::serialize(json::object{{"type", "add_context"}, {"text", std::string(4000, 'k')}});
  const std::string speak =
      json::serialize(json::object{{"type", "speak"}, {"text", std::string(2000, 'a')}});
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(v->send_text(context));
    ASSERT_TRUE(v->send_text(speak));
  }
  int rate_limited = 0;
  for (int i = 0; i < 400 && rate_limited == 0; ++i) {
    auto e = v->read_event("error");
    ASSERT_TRUE(e) << "no error event for the flood";
    json::value j = json::parse(e->data);
    if (str(j, "code") == "RATE_LIMITED") {
      ++rate_limited;
      EXPECT_GT(j.at("retry_after_ms").as_int64(), 0);
    }
  }
  EXPECT_EQ(rate_limited, 1);
  // The room goes on, within its bounds.
  auto r = s.get("/v1/rooms/flood", acct.api_secret);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(str(r.json().at("data"), "state"), "active");
  EXPECT_LE(r.json().at("data").at("context_items").as_int64(), 16);
  // Sustained abuse (100 refused in a row) may have closed this connection, with 1008 only; the
  // room is not affected and a new connection joins it.
  if (v->close_code() != 0) EXPECT_EQ(v->close_code(), 1008);
  v.reset();
  auto again = join(s, "flood", code, runtime_token(s, acct.api_secret));
  ASSERT_TRUE(again);
  auto started = again->read_event("session.started");
  ASSERT_TRUE(started);
  EXPECT_EQ(str(json::parse(started->data), "session_id"), str(r.json().at("data"), "session_id"));
}

// A handshake the server cannot complete (no Sec-WebSocket-Key): the join ran, the upgrade failed.
int failed_handshake(int port, const std::string& target, const std::string& token) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  std::string req = "GET " + target +
                    " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
                    "Upgrade: websocket\r\nAuthorization: Bearer " +
                    token + "\r\n\r\n";
  (void)!write(fd, req.data(), req.size());
  char buf[4096];
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ssize_t n = read(fd, buf, sizeof buf);  // the server's answer, or its close
  close(fd);
  return static_cast<int>(n);
}

TEST(LiveBounds, AFailedHandshakeEndsTheRoomItStartedAtOnce) {
  // Timeouts far beyond the wait below: only the failed handshake can end the room in time.
  TestServer s(
      {"--live-frame-side", "64", "--live-absent-s", "600", "--live-idle-s", "600", "--live-left-s", "600"});
  auto acct = s.create_account("enterprise", 5000);
  std::string code = ready_agent(s, acct.api_secret);
  std::string token = runtime_token(s, acct.api_secret);
  EXPECT_GE(failed_handshake(s.port(), "/v1/runtime/rooms/dropped?agent_code=" + code, token), 0);
  // The join did start a session (the server's log says so) ...
  auto log_has = [&](const std::string& what) {
    std::ifstream log(s.data_dir() + "/imagod.log");
    for (std::string line; std::getline(log, line);)
      if (line.find(what) != std::string::npos && line.find("\"dropped\"") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(eventually([&] { return log_has("live_session_started"); }));
  // ... and it ends well before any timeout (600 s) would end it.
  EXPECT_TRUE(eventually([&] { return s.get("/v1/rooms/dropped", acct.api_secret).status == 404; }, 30));
  // The log line may reach the file a moment after the room is gone (the logger buffers).
  EXPECT_TRUE(eventually([&] { return log_has("live_session_handshake_failed"); }));
  // At most its first minute was billed (charged when the session started, if it got that far).
  int minutes = 0;
  const json::value usage = s.get("/v1/usage?limit=100", acct.api_secret).json();
  for (auto& e : usage.at("data").as_array()) minutes += str(e, "reason").rfind("live_minute", 0) == 0;
  EXPECT_LE(minutes, 1);
  // A viewer with a good handshake still gets a session.
  auto v = join(s, "kept", code, token);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->read_event("session.started"));
  EXPECT_EQ(s.get("/v1/rooms/kept", acct.api_secret).status, 200);
}

TEST(LiveBounds, AnEmbedTokenStartsOnlyTheSessionTypeItWasMintedFor) {
  TestServer s({"--live-frame-side", "64"});
  auto acct = s.create_account("enterprise", 5000);
  std::string code = ready_agent(s, acct.api_secret);
  // An unknown billing_type is refused at minting.
  auto r =
      s.post("/v1/embed-tokens/request",
             R"({"agent_id":")" + code + R"(","fingerprint":"f","billing_type":"gold"})", acct.api_secret);
  EXPECT_EQ(r.status, 400);
  // A default token: the avatar session only; voice_chat (five times the rate) is refused.
  std::string plain = embed_token(s, acct.api_secret, code);
  int status = 0;
  std::string body;
  EXPECT_FALSE(join(s, "v1", code, plain, "&billing_type=voice_chat", &status, &body));
  EXPECT_EQ(status, 403);
  EXPECT_EQ(error_code(body), "FORBIDDEN");
  EXPECT_NE(body.find("billing_type"), std::string::npos) << body;
  auto avatar = join(s, "a1", code, plain);
  ASSERT_TRUE(avatar);
  EXPECT_TRUE(avatar->read_event("session.started"));
  // A voice_chat token joins voice_chat, and nothing else.
  std::string voice = embed_token(s, acct.api_secret, code, R"(,"billing_type":"voice_chat")");
  auto vc = join(s, "v2", code, voice, "&billing_type=voice_chat");
  ASSERT_TRUE(vc);
  EXPECT_TRUE(vc->read_event("session.started"));
  EXPECT_FALSE(join(s, "a2", code, voice, "", &status));
  EXPECT_EQ(status, 403);
  // Nothing was started for the refused joins.
  EXPECT_EQ(s.get("/v1/rooms/v1", acct.api_secret).status, 404);
  EXPECT_EQ(s.get("/v1/rooms/a2", acct.api_secret).status, 404);
}

}  // namespace
}  // namespace imago::testing

// Runtime tokens, heartbeats and embed tokens over real HTTP (docs/live-protocol.md).
#include <gtest/gtest.h>

#include <set>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::set<std::string> keys_of(const json::value& v) {
  std::set<std::string> out;
  for (const auto& kv : v.as_object()) out.insert(std::string(kv.key()));
  return out;
}

json::object jwt_part(const std::string& token, int index) {
  size_t a = token.find('.'), b = token.find('.', a + 1);
  std::string part = index == 0 ? token.substr(0, a) : token.substr(a + 1, b - a - 1);
  auto raw = base64_decode(part);
  return raw ? json::parse(*raw).as_object() : json::object{};
}

HttpResponse heartbeat(const TestServer& s, const std::string& token, const std::string& body = "") {
  HttpRequestOptions o;
  if (!token.empty()) o.headers["Authorization"] = "Bearer " + token;
  return s.request("POST", "/v1/runtime/heartbeat", body, "", o);
}

std::string first_key_id(const TestServer& s, const std::string& secret) {
  return str(s.get("/v1/keys", secret).json().at("data").as_array().at(0), "id");
}

TEST(LiveTokens, RuntimeTokenHasThePinnedShapeAndClaims) {
  TestServer s;
  auto acct = s.create_account("free", 100);
  auto r = s.post("/v1/runtime-tokens/request", "", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = r.json();
  EXPECT_EQ(keys_of(j), (std::set<std::string>{"status", "status_code", "data"}));
  EXPECT_EQ(str(j, "status"), "success");
  EXPECT_EQ(j.at("status_code").as_int64(), 200);
  const auto& d = j.at("data");
  EXPECT_EQ(keys_of(d), (std::set<std::string>{"token", "transaction_id", "expires_at"}));
  std::string token = str(d, "token");
  auto header = jwt_part(token, 0);
  auto claims = jwt_part(token, 1);
  EXPECT_EQ(header.at("alg").as_string(), "HS256");
  EXPECT_TRUE(header.contains("kid"));
  EXPECT_EQ(header.at("akid").as_string(), first_key_id(s, acct.api_secret));
  EXPECT_EQ(claims.at("iss").as_string(), "imago");
  EXPECT_EQ(claims.at("aud").as_string(), "imago-runtime");
  EXPECT_EQ(claims.at("sub").as_string(), acct.account_id);
  EXPECT_EQ(claims.at("jti").as_string(), str(d, "transaction_id"));
  const int64_t ttl = claims.at("exp").as_int64() - claims.at("iat").as_int64();
  EXPECT_EQ(ttl, 300);
  EXPECT_EQ(d.at("expires_at").as_int64(), claims.at("exp").as_int64());
  EXPECT_FALSE(claims.contains("agent"));
  EXPECT_FALSE(claims.contains("session"));
  // SPEC 8.2: never rate-limited, so no rate-limit headers.
  EXPECT_EQ(r.header("x-ratelimit-limit"), "");
}

TEST(LiveTokens, BadKeyIs401AndLowBalanceIs402) {
  TestServer s;
  auto r = s.post("/v1/runtime-tokens/request", "", "imago_sk_nope");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(str(r.json().at("error"), "code"), "UNAUTHORIZED");
  EXPECT_EQ(s.post("/v1/runtime-tokens/request", "").status, 401);

  auto broke = s.create_account("free", 0);
  r = s.post("/v1/runtime-tokens/request", "", broke.api_secret);
  EXPECT_EQ(r.status, 402);
  EXPECT_EQ(str(r.json().at("error"), "code"), "INSUFFICIENT_BALANCE");
  // One credit pays a self-hosted essence minute but not an expression cloud minute.
  auto one = s.create_account("free", 1);
  EXPECT_EQ(s.post("/v1/runtime-tokens/request", "", one.api_secret).status, 200);
  EXPECT_EQ(
      s.post("/v1/runtime-tokens/request", R"({"billing_type":"expression_cloud"})", one.api_secret).status,
      402);
  EXPECT_EQ(s.post("/v1/runtime-tokens/request", R"({"billing_type":"gold"})", one.api_secret).status, 400);
  r = s.post("/v1/runtime-tokens/request", R"({"agent_code":"Z99ZZZ9999"})", one.api_secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(str(r.json().at("error"), "message"), "Agent not found for code: Z99ZZZ9999");
}

TEST(LiveTokens, HeartbeatRenewsAndRefusesBadTokens) {
  TestServer s;
  auto acct = s.create_account("free", 100);
  std::string t = str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  auto r = heartbeat(s, t);
  ASSERT_EQ(r.status, 200) << r.body;
  auto j = r.json();
  EXPECT_EQ(keys_of(j.at("data")), (std::set<std::string>{"token", "expires_at"}));
  std::string renewed = str(j.at("data"), "token");
  EXPECT_NE(renewed, t);
  EXPECT_EQ(heartbeat(s, renewed).status, 200);  // the renewed token renews too

  r = heartbeat(s, "");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(str(r.json().at("error"), "code"), "MISSING_AUTH");
  r = heartbeat(s, t.substr(0, t.size() - 2) + "AA");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(str(r.json().at("error"), "code"), "UNAUTHORIZED");
  // alg "none" with the same claims.
  std::string claims = t.substr(t.find('.') + 1, t.rfind('.') - t.find('.') - 1);
  EXPECT_EQ(heartbeat(s, base64url_encode(R"({"alg":"none"})") + "." + claims + ".").status, 401);
  // An api-secret is not a runtime token.
  EXPECT_EQ(heartbeat(s, acct.api_secret).status, 401);
  // A session id this node does not run.
  EXPECT_EQ(heartbeat(s, t, R"({"session_id":"ses_nope"})").status, 404);
}

// SPEC 8.2: /v1/runtime-tokens* and /v1/runtime/* are never rate-limited. A free account's Write
// bucket holds 30 requests a minute; 40 mints and 40 heartbeats in a row all succeed, and the
// account's Write bucket is untouched by them.
TEST(LiveTokens, MintsAndHeartbeatsAreNeverRateLimited) {
  TestServer s;
  auto acct = s.create_account("free", 100);
  std::string t;
  for (int i = 0; i < 40; ++i) {
    auto r = s.post("/v1/runtime-tokens/request", "", acct.api_secret);
    ASSERT_EQ(r.status, 200) << "mint " << i << ": " << r.body;
    t = str(r.json().at("data"), "token");
  }
  for (int i = 0; i < 40; ++i) {
    auto r = heartbeat(s, t);
    ASSERT_EQ(r.status, 200) << "heartbeat " << i << ": " << r.body;
    t = str(r.json().at("data"), "token");
  }
  auto w = s.post("/v1/keys", R"({"alias":"after"})", acct.api_secret);
  EXPECT_EQ(w.status, 201) << w.body;
  EXPECT_EQ(w.header("x-ratelimit-remaining"), "29");
}

TEST(LiveTokens, RotatingOrRevokingTheApiSecretFailsTheNextHeartbeat) {
  TestServer s;
  auto acct = s.create_account("free", 100);
  std::string t = str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  ASSERT_EQ(heartbeat(s, t).status, 200);
  auto rot = s.post("/v1/keys/" + first_key_id(s, acct.api_secret) + "/rotate", "", acct.api_secret);
  ASSERT_EQ(rot.status, 201) << rot.body;
  auto r = heartbeat(s, t);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(str(r.json().at("error"), "code"), "UNAUTHORIZED");
  // A token from the new secret works.
  std::string fresh_secret = str(rot.json().at("data"), "api_secret");
  std::string t2 = str(s.post("/v1/runtime-tokens/request", "", fresh_secret).json().at("data"), "token");
  EXPECT_EQ(heartbeat(s, t2).status, 200);
}

TEST(LiveTokens, SigningKeyRotationKeepsThePreviousKeyForVerification) {
  TestServer s;
  auto acct = s.create_account("free", 100);
  std::string t1 = str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  ASSERT_EQ(s.admin("POST", "/admin/v1/runtime-token-keys/rotate").status, 200);
  EXPECT_EQ(heartbeat(s, t1).status, 200);  // previous key: verify only
  std::string t2 = str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  EXPECT_NE(jwt_part(t1, 0).at("kid"), jwt_part(t2, 0).at("kid"));
  ASSERT_EQ(s.admin("POST", "/admin/v1/runtime-token-keys/rotate").status, 200);
  EXPECT_EQ(heartbeat(s, t1).status, 401);  // two rotations: retired
  EXPECT_EQ(heartbeat(s, t2).status, 200);
}

TEST(LiveTokens, SelfHostedHeartbeatsBillEachMinuteOnce) {
  TestServer s({"--live-billing-period-s", "1"});
  auto acct = s.create_account("free", 100);
  std::string t = str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  const std::string body = R"({"billing_type":"expression_self_hosted","session_id":"my-sdk-session"})";
  ASSERT_EQ(heartbeat(s, t, body).status, 200);
  ASSERT_EQ(heartbeat(s, t, body).status, 200);  // same minute: no second charge
  auto usage = s.get("/v1/usage", acct.api_secret).json().at("data").as_array();
  int charges = 0;
  for (auto& e : usage) charges += str(e, "reason") == "live_minute:expression_self_hosted" ? 1 : 0;
  EXPECT_EQ(charges, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_EQ(heartbeat(s, t, body).status, 200);
  usage = s.get("/v1/usage", acct.api_secret).json().at("data").as_array();
  charges = 0;
  for (auto& e : usage) {
    if (str(e, "reason") == "live_minute:expression_self_hosted") {
      ++charges;
      EXPECT_EQ(e.at("amount").as_int64(), -2);
    }
  }
  EXPECT_GE(charges, 2);
  EXPECT_EQ(heartbeat(s, t, R"({"billing_type":"essence_cloud","session_id":"x"})").status, 400);
  EXPECT_EQ(heartbeat(s, t, R"({"billing_type":"essence_self_hosted"})").status, 400);
}

TEST(LiveTokens, EmbedTokenShapeAndScope) {
  TestServer s;
  auto acct = s.create_account("free", 100);
  auto r =
      s.post("/v1/embed-tokens/request", R"({"agent_id":"Z99ZZZ9999","fingerprint":"abc"})", acct.api_secret);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(str(r.json().at("error"), "message"), "Agent not found for code: Z99ZZZ9999");
  EXPECT_EQ(s.post("/v1/embed-tokens/request", R"({"fingerprint":"abc"})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/embed-tokens/request", "{}", "").status, 401);
}

}  // namespace
}  // namespace imago::testing

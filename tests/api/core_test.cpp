// Core platform over real HTTP: envelopes, keys, validate/me, credits, admin, restart.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "support/test_server.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

void expect_envelope(const HttpResponse& r, long status, const std::string& code) {
  EXPECT_EQ(r.status, status) << r.body;
  json::value v = r.json();
  ASSERT_TRUE(v.is_object()) << r.body;
  const auto& o = v.as_object();
  ASSERT_TRUE(o.contains("error")) << r.body;
  EXPECT_EQ(o.at("error").at("code").as_string(), code) << r.body;
  EXPECT_TRUE(o.at("error").at("message").is_string());
  EXPECT_FALSE(o.at("error").at("message").as_string().empty());
  EXPECT_EQ(o.at("error").at("httpStatus").as_int64(), status);
  EXPECT_EQ(o.at("status").as_string(), "error");
  EXPECT_EQ(o.at("status_code").as_int64(), status);
  EXPECT_EQ(o.size(), 3u) << "envelope has exactly error, status, status_code: " << r.body;
  EXPECT_EQ(r.header("content-type").substr(0, 16), "application/json");
  EXPECT_FALSE(r.header("x-request-id").empty());
}

TEST(Core, HealthAndReadinessNeedNoKey) {
  TestServer s;
  auto h = s.get("/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.json().at("status").as_string(), "ok");
  auto r = s.get("/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json().at("status").as_string(), "ready");
  EXPECT_TRUE(h.header("x-ratelimit-limit").empty());
}

TEST(Core, ErrorEnvelopes) {
  TestServer s;
  auto acct = s.create_account("free", 0);
  expect_envelope(s.get("/v1/me"), 401, "MISSING_AUTH");
  expect_envelope(s.get("/v1/me", "imago_sk_bogus"), 401, "UNAUTHORIZED");
  expect_envelope(s.get("/v1/nope", acct.api_secret), 404, "NOT_FOUND");
  expect_envelope(s.get("/v1/agent-generation", acct.api_secret), 404, "NOT_FOUND");
  expect_envelope(s.post("/v1/agent-generation", "{}", acct.api_secret), 404, "NOT_FOUND");
  auto m = s.del("/v1/me", acct.api_secret);
  expect_envelope(m, 405, "METHOD_NOT_ALLOWED");
  EXPECT_EQ(m.header("allow"), "GET");
  expect_envelope(s.post("/v1/keys", "{not json", acct.api_secret), 400, "VALIDATION_ERROR");
  expect_envelope(s.post("/v1/keys", "{}", acct.api_secret), 400, "VALIDATION_ERROR");
  expect_envelope(s.post("/v1/keys", R"({"alias": 7})", acct.api_secret), 400, "VALIDATION_ERROR");
  expect_envelope(s.post("/v1/keys", std::string(2 * 1024 * 1024, 'x'), acct.api_secret), 413,
                  "PAYLOAD_TOO_LARGE");
}

TEST(Core, RequestIdIsEchoedWhenSaneAndGeneratedOtherwise) {
  TestServer s;
  HttpRequestOptions o;
  o.headers["X-Request-Id"] = "client-abc.123";
  auto r = s.request("GET", "/healthz", "", "", o);
  EXPECT_EQ(r.header("x-request-id"), "client-abc.123");
  o.headers["X-Request-Id"] = "bad id with spaces";
  r = s.request("GET", "/healthz", "", "", o);
  EXPECT_NE(r.header("x-request-id"), "bad id with spaces");
  EXPECT_FALSE(r.header("x-request-id").empty());
  auto a = s.get("/healthz"), b = s.get("/healthz");
  EXPECT_NE(a.header("x-request-id"), b.header("x-request-id"));
}

TEST(Core, ValidateAndMe) {
  TestServer s;
  auto acct = s.create_account("creator", 10, "Ada");
  auto ok = s.post("/v1/validate", "", acct.api_secret);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(json::serialize(ok.json()), R"({"valid":true})");
  auto bad = s.post("/v1/validate", "", "imago_sk_" + std::string(38, 'A'));
  EXPECT_EQ(bad.status, 200);
  EXPECT_EQ(json::serialize(bad.json()), R"({"valid":false})");
  expect_envelope(s.post("/v1/validate", ""), 401, "MISSING_AUTH");

  auto me = s.get("/v1/me", acct.api_secret);
  ASSERT_EQ(me.status, 200) << me.body;
  auto d = me.json().at("data");
  EXPECT_EQ(d.at("user_id").as_string(), acct.account_id);
  EXPECT_EQ(d.at("name").as_string(), "Ada");
  EXPECT_EQ(d.at("plan").as_string(), "creator");
  EXPECT_EQ(d.at("key_alias").as_string(), "default");
  // Validate costs nothing.
  auto summary = s.get("/v2/credit-summaries", acct.api_secret);
  EXPECT_EQ(summary.json().at("data").at("balance").as_int64(), 10);
}

TEST(Core, KeysAreShownOnceRevocableAndRotateWithoutOverlap) {
  TestServer s;
  auto acct = s.create_account("pro", 0);
  auto created = s.post("/v1/keys", R"({"alias":"ci@build-01"})", acct.api_secret);
  ASSERT_EQ(created.status, 201) << created.body;
  auto data = created.json().at("data");
  std::string second = std::string(data.at("api_secret").as_string());
  std::string second_id = std::string(data.at("id").as_string());
  EXPECT_EQ(second.rfind("imago_sk_", 0), 0u);
  EXPECT_EQ(data.at("last4").as_string(), second.substr(second.size() - 4));

  auto list = s.get("/v1/keys", acct.api_secret);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body.find(second), std::string::npos) << "secret must never be listed";
  EXPECT_EQ(list.body.find(acct.api_secret), std::string::npos);
  const json::value listed = list.json();
  EXPECT_EQ(listed.at("data").as_array().size(), 2u);
  for (const auto& k : listed.at("data").as_array()) {
    EXPECT_FALSE(k.as_object().contains("api_secret"));
    EXPECT_TRUE(k.as_object().contains("last_used_at"));
  }

  auto me = s.get("/v1/me", second);
  ASSERT_EQ(me.status, 200);
  EXPECT_EQ(me.json().at("data").at("key_alias").as_string(), "ci@build-01");

  // Rotation: the old secret fails at once, the new one works.
  auto rotated = s.post("/v1/keys/" + second_id + "/rotate", "", acct.api_secret);
  ASSERT_EQ(rotated.status, 201) << rotated.body;
  std::string third = std::string(rotated.json().at("data").at("api_secret").as_string());
  EXPECT_EQ(rotated.json().at("data").at("alias").as_string(), "ci@build-01");
  expect_envelope(s.get("/v1/me", second), 401, "UNAUTHORIZED");
  EXPECT_EQ(s.get("/v1/me", third).status, 200);

  // Revocation of one key leaves the others alone.
  std::string third_id = std::string(rotated.json().at("data").at("id").as_string());
  auto del = s.del("/v1/keys/" + third_id, acct.api_secret);
  EXPECT_EQ(del.status, 200) << del.body;
  expect_envelope(s.get("/v1/me", third), 401, "UNAUTHORIZED");
  EXPECT_EQ(s.get("/v1/me", acct.api_secret).status, 200);
  expect_envelope(s.del("/v1/keys/" + third_id, acct.api_secret), 404, "NOT_FOUND");

  // Another account cannot touch these keys.
  auto other = s.create_account("pro", 0);
  auto keys = s.get("/v1/keys", acct.api_secret).json().at("data").as_array();
  std::string first_id = std::string(keys[0].at("id").as_string());
  expect_envelope(s.del("/v1/keys/" + first_id, other.api_secret), 404, "NOT_FOUND");
  expect_envelope(s.post("/v1/keys/" + first_id + "/rotate", "", other.api_secret), 404, "NOT_FOUND");
}

TEST(Core, CreditSummaryAndUsage) {
  TestServer s;
  auto acct = s.create_account("enterprise", 300);
  auto r = s.get("/v2/credit-summaries", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = r.json().at("data");
  EXPECT_TRUE(r.json().at("success").as_bool());
  EXPECT_EQ(d.at("user_id").as_string(), acct.account_id);
  EXPECT_EQ(d.at("balance").as_int64(), 300);
  EXPECT_EQ(d.at("topup_credits").as_int64(), 300);
  EXPECT_EQ(d.at("plan_credits").as_int64(), 0);
  EXPECT_TRUE(d.at("is_enterprise").as_bool());
  auto m = d.at("minutes_estimate");
  auto num = [](const json::value& v) {
    return v.is_double() ? v.as_double() : static_cast<double>(v.as_int64());
  };
  EXPECT_DOUBLE_EQ(num(m.at("voice_chat")), 30);
  EXPECT_DOUBLE_EQ(num(m.at("camera_chat")), 10);
  EXPECT_DOUBLE_EQ(num(m.at("essence_cloud")), 150);
  EXPECT_DOUBLE_EQ(num(m.at("essence_self_hosted")), 300);
  EXPECT_DOUBLE_EQ(num(m.at("expression_cloud")), 75);
  EXPECT_DOUBLE_EQ(num(m.at("expression_self_hosted")), 150);

  for (int i = 0; i < 3; ++i) {
    auto t = s.admin("POST", "/admin/v1/accounts/" + acct.account_id + "/credits",
                     R"({"amount": )" + std::to_string(10 + i) + R"(, "reason": "bonus"})");
    ASSERT_EQ(t.status, 200) << t.body;
  }
  auto usage = s.get("/v1/usage?limit=2&offset=0", acct.api_secret);
  ASSERT_EQ(usage.status, 200) << usage.body;
  auto entries = usage.json().at("data").as_array();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].at("amount").as_int64(), 12);  // newest first
  EXPECT_EQ(entries[0].at("balance_after").as_int64(), 333);
  EXPECT_EQ(entries[0].at("kind").as_string(), "topup");
  auto p = usage.json().at("pagination");
  EXPECT_EQ(p.at("total").as_int64(), 4);
  EXPECT_TRUE(p.at("has_more").as_bool());
  EXPECT_EQ(p.at("limit").as_int64(), 2);
  auto last = s.get("/v1/usage?limit=2&offset=2", acct.api_secret).json();
  EXPECT_FALSE(last.at("pagination").at("has_more").as_bool());
  expect_envelope(s.get("/v1/usage?limit=101", acct.api_secret), 400, "VALIDATION_ERROR");
  expect_envelope(s.get("/v1/usage?offset=-1", acct.api_secret), 400, "VALIDATION_ERROR");
  expect_envelope(s.get("/v1/usage?limit=abc", acct.api_secret), 400, "VALIDATION_ERROR");
}

TEST(Admin, RequiresTheAdminToken) {
  TestServer s;
  expect_envelope(s.get("/admin/v1/accounts"), 401, "MISSING_AUTH");
  HttpRequestOptions o;
  o.headers["Authorization"] = "Bearer not-the-token-at-all";
  expect_envelope(s.request("GET", "/admin/v1/accounts", "", "", o), 401, "UNAUTHORIZED");
  auto acct = s.create_account("free", 0);
  // An API secret is not an admin token.
  o.headers["Authorization"] = "Bearer " + acct.api_secret;
  expect_envelope(s.request("GET", "/admin/v1/accounts", "", "", o), 401, "UNAUTHORIZED");
  expect_envelope(s.get("/metrics"), 401, "MISSING_AUTH");
}

TEST(Admin, AccountsPlansCreditsAndKeys) {
  TestServer s;
  auto bad = s.admin("POST", "/admin/v1/accounts", R"({"plan":"free"})");
  expect_envelope(bad, 400, "VALIDATION_ERROR");
  expect_envelope(s.admin("POST", "/admin/v1/accounts", R"({"name":"x","plan":"gold"})"), 400,
                  "VALIDATION_ERROR");
  expect_envelope(s.admin("POST", "/admin/v1/accounts", R"({"name":"x","credits":-5})"), 400,
                  "VALIDATION_ERROR");

  auto acct = s.create_account("free", 100, "Grace");
  auto got = s.admin("GET", "/admin/v1/accounts/" + acct.account_id);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.json().at("data").at("balance").as_int64(), 100);
  EXPECT_EQ(got.json().at("data").at("plan").as_string(), "free");
  expect_envelope(s.admin("GET", "/admin/v1/accounts/usr_doesnotexist"), 404, "NOT_FOUND");

  auto list = s.admin("GET", "/admin/v1/accounts?limit=10");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.json().at("pagination").at("total").as_int64(), 1);

  // Custom limits only for enterprise.
  expect_envelope(s.admin("PUT", "/admin/v1/accounts/" + acct.account_id + "/plan",
                          R"({"plan":"pro","limits":{"read":5}})"),
                  400, "VALIDATION_ERROR");
  auto ent = s.admin("PUT", "/admin/v1/accounts/" + acct.account_id + "/plan",
                     R"({"plan":"enterprise","limits":{"read":5}})");
  ASSERT_EQ(ent.status, 200) << ent.body;
  EXPECT_EQ(ent.json().at("data").at("limits").at("read").as_int64(), 5);
  EXPECT_EQ(ent.json().at("data").at("limits").at("write").as_int64(), 720);

  // Top-ups: positive only, idempotent with Idempotency-Key.
  const std::string credits = "/admin/v1/accounts/" + acct.account_id + "/credits";
  expect_envelope(s.admin("POST", credits, R"({"amount": -50})"), 400, "VALIDATION_ERROR");
  expect_envelope(s.admin("POST", credits, R"({"amount": 0})"), 400, "VALIDATION_ERROR");
  expect_envelope(s.admin("POST", credits, R"({"amount": "50"})"), 400, "VALIDATION_ERROR");
  HttpRequestOptions o;
  o.headers["Authorization"] = "Bearer " + s.admin_token();
  o.headers["Idempotency-Key"] = "invoice-42";
  auto t1 = s.request("POST", credits, R"({"amount": 50, "reason": "invoice 42"})", "", o);
  auto t2 = s.request("POST", credits, R"({"amount": 50, "reason": "invoice 42"})", "", o);
  ASSERT_EQ(t1.status, 200) << t1.body;
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_EQ(t1.json().at("data").at("id"), t2.json().at("data").at("id"));
  EXPECT_EQ(s.get("/v2/credit-summaries", acct.api_secret).json().at("data").at("balance").as_int64(), 150);
  expect_envelope(s.admin("POST", "/admin/v1/accounts/usr_nope/credits", R"({"amount": 5})"), 404,
                  "NOT_FOUND");

  // Keys by the operator.
  auto k = s.admin("POST", "/admin/v1/accounts/" + acct.account_id + "/keys", R"({"alias":"ops"})");
  ASSERT_EQ(k.status, 201) << k.body;
  std::string secret = std::string(k.json().at("api_secret").as_string());
  EXPECT_EQ(s.get("/v1/me", secret).status, 200);
  auto rev = s.admin("DELETE", "/admin/v1/keys/" + std::string(k.json().at("key_id").as_string()));
  EXPECT_EQ(rev.status, 200) << rev.body;
  expect_envelope(s.get("/v1/me", secret), 401, "UNAUTHORIZED");
}

TEST(Admin, MetricsCountRequestsAndRejections) {
  TestServer s;
  s.get("/v1/me");
  s.get("/v1/me", "imago_sk_nope");
  auto acct = s.create_account("free", 0);
  s.get("/v1/me", acct.api_secret);
  auto m = s.admin("GET", "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.header("content-type").find("text/plain"), std::string::npos);
  EXPECT_NE(m.body.find("imago_http_requests_total{route=\"GET /v1/me\",status=\"200\"} 1"),
            std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("imago_auth_rejected_total{reason=\"missing\"} 1"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("imago_auth_rejected_total{reason=\"invalid\"} 1"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("imago_http_request_duration_seconds_bucket"), std::string::npos);
}

TEST(Core, RestartKeepsAccountsKeysAndCredits) {
  std::string dir = make_temp_dir();
  std::string secret, revoked_secret, account;
  {
    TestServer s(dir, {}, {});
    auto acct = s.create_account("business", 777);
    secret = acct.api_secret;
    account = acct.account_id;
    auto k = s.post("/v1/keys", R"({"alias":"temp"})", secret);
    revoked_secret = std::string(k.json().at("data").at("api_secret").as_string());
    ASSERT_EQ(s.del("/v1/keys/" + std::string(k.json().at("data").at("id").as_string()), secret).status, 200);
    s.stop();
    EXPECT_EQ(s.wait_exit(), 0) << "graceful SIGTERM exit";
  }
  {
    TestServer s(dir, {}, {});
    auto me = s.get("/v1/me", secret);
    ASSERT_EQ(me.status, 200) << me.body;
    EXPECT_EQ(me.json().at("data").at("plan").as_string(), "business");
    EXPECT_EQ(s.get("/v2/credit-summaries", secret).json().at("data").at("balance").as_int64(), 777);
    EXPECT_EQ(s.get("/v1/me", revoked_secret).status, 401);
  }
  std::string cmd = "rm -rf '" + dir + "'";
  (void)std::system(cmd.c_str());
}

TEST(AdminCli, CreatesAccountsTheServerAccepts) {
  std::string dir = make_temp_dir();
  std::string out_file = dir + "/out.json";
  std::string cmd = imagod_path() + " admin --data-dir '" + dir +
                    "' account create --name cli --plan pro --credits 42 > '" + out_file + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  FILE* f = std::fopen(out_file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buf[4096] = {0};
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  auto v = json::parse(std::string(buf, n));
  std::string secret = std::string(v.at("api_secret").as_string());
  {
    TestServer s(dir, {}, {});
    auto me = s.get("/v1/me", secret);
    ASSERT_EQ(me.status, 200) << me.body;
    EXPECT_EQ(me.json().at("data").at("plan").as_string(), "pro");
  }
  // A bad command fails with a usage message and a non-zero status.
  std::string bad = imagod_path() + " admin --data-dir '" + dir + "' account credits usr_x -5 2>/dev/null";
  EXPECT_NE(std::system(bad.c_str()), 0);
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

// The server answers a known key from memory (docs/http.md, "Authentication cache"); a revocation
// or plan change made by `imagod admin`, another process on the same database, still applies to
// the very next request.
TEST(AdminCli, RevocationAndPlanChangeFromTheCliApplyToTheNextRequest) {
  std::string dir = make_temp_dir();
  TestServer s(dir, {}, {});
  auto acct = s.create_account("pro", 0);
  auto me = s.get("/v1/me", acct.api_secret);
  ASSERT_EQ(me.status, 200) << me.body;
  const std::string key_id = std::string(me.json().at("data").at("key_id").as_string());
  for (int i = 0; i < 5; ++i) ASSERT_EQ(s.get("/v1/me", acct.api_secret).status, 200);

  const std::string admin = imagod_path() + " admin --data-dir '" + dir + "' ";
  ASSERT_EQ(std::system((admin + "account plan " + acct.account_id + " business >/dev/null").c_str()), 0);
  me = s.get("/v1/me", acct.api_secret);
  ASSERT_EQ(me.status, 200);
  EXPECT_EQ(me.json().at("data").at("plan").as_string(), "business");

  ASSERT_EQ(std::system((admin + "key revoke " + key_id + " >/dev/null").c_str()), 0);
  EXPECT_EQ(s.get("/v1/me", acct.api_secret).status, 401);
  auto v = s.post("/v1/validate", "", acct.api_secret);  // SPEC: 200 with {valid: false}
  ASSERT_EQ(v.status, 200) << v.body;
  EXPECT_FALSE(v.json().at("valid").as_bool()) << v.body;
}

}  // namespace
}  // namespace imago::testing

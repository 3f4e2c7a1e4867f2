// SPEC 8.1-8.4 over real HTTP: per-account buckets shared by all keys, headers, 429 + Retry-After,
// the failed-authentication throttle and the per-IP cap on anonymous endpoints.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <thread>

#include "support/test_server.h"

namespace imago::testing {
namespace {

long long header_int(const HttpResponse& r, const std::string& name) {
  std::string v = r.header(name);
  return v.empty() ? -1 : std::stoll(v);
}

TEST(RateLimit, FreeAccountWriteTierHeadersAnd429) {
  TestServer s;
  auto acct = s.create_account("free", 0);
  const long long now = static_cast<long long>(std::time(nullptr));
  for (int i = 0; i < 30; ++i) {
    auto r = s.post("/v1/validate", "", acct.api_secret);  // POST: Write tier, 30/min on Free
    ASSERT_EQ(r.status, 200) << i << " " << r.body;
    EXPECT_EQ(header_int(r, "x-ratelimit-limit"), 30);
    EXPECT_EQ(header_int(r, "x-ratelimit-remaining"), 29 - i);
    // Full again after (i+1) tokens at 0.5 tokens/s: (i+1)*2 seconds from now (clock slack allowed).
    long long reset = header_int(r, "x-ratelimit-reset");
    EXPECT_GE(reset, now + (i + 1) * 2 - 1);
    EXPECT_LE(reset, now + (i + 1) * 2 + 5);
    EXPECT_TRUE(r.header("retry-after").empty());
  }
  auto limited = s.post("/v1/validate", "", acct.api_secret);
  ASSERT_EQ(limited.status, 429) << limited.body;
  EXPECT_EQ(limited.json().at("error").at("code").as_string(), "RATE_LIMITED");
  EXPECT_EQ(limited.json().at("status_code").as_int64(), 429);
  EXPECT_EQ(header_int(limited, "x-ratelimit-remaining"), 0);
  long long retry = header_int(limited, "retry-after");
  EXPECT_GE(retry, 1);
  EXPECT_LE(retry, 2);
  // The Read tier is a separate bucket.
  EXPECT_EQ(s.get("/v1/me", acct.api_secret).status, 200);
  EXPECT_EQ(header_int(s.get("/v1/me", acct.api_secret), "x-ratelimit-limit"), 120);
}

TEST(RateLimit, AllKeysOfAnAccountShareTheBuckets) {
  TestServer s;
  auto acct = s.create_account("free", 0);
  auto k2 = s.post("/v1/keys", R"({"alias":"second"})", acct.api_secret);  // uses 1 Write token
  ASSERT_EQ(k2.status, 201);
  std::string second = std::string(k2.json().at("data").at("api_secret").as_string());
  int ok = 0;
  for (int i = 0; i < 29; ++i) {
    auto r = s.post("/v1/validate", "", i % 2 ? acct.api_secret : second);
    if (r.status == 200) ++ok;
  }
  EXPECT_EQ(ok, 29);
  EXPECT_EQ(s.post("/v1/validate", "", second).status, 429);
  EXPECT_EQ(s.post("/v1/validate", "", acct.api_secret).status, 429);
  // Another account is unaffected.
  auto other = s.create_account("free", 0);
  EXPECT_EQ(s.post("/v1/validate", "", other.api_secret).status, 200);
}

TEST(RateLimit, DrainedBucketAdmitsAgainAfterTheRetryAfter) {
  TestServer s;
  auto acct = s.create_account("enterprise", 0);
  ASSERT_EQ(s.admin("PUT", "/admin/v1/accounts/" + acct.account_id + "/plan",
                    R"({"plan":"enterprise","limits":{"read":60}})")
                .status,
            200);
  for (int i = 0; i < 60; ++i) ASSERT_EQ(s.get("/v1/me", acct.api_secret).status, 200) << i;
  auto denied = s.get("/v1/me", acct.api_secret);
  ASSERT_EQ(denied.status, 429);
  EXPECT_EQ(header_int(denied, "retry-after"), 1);  // 1 token per second
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_EQ(s.get("/v1/me", acct.api_secret).status, 200);
}

TEST(RateLimit, PlanChangeReachesTheLimiter) {
  TestServer s;
  auto acct = s.create_account("free", 0);
  for (int i = 0; i < 30; ++i) ASSERT_EQ(s.post("/v1/validate", "", acct.api_secret).status, 200);
  ASSERT_EQ(s.post("/v1/validate", "", acct.api_secret).status, 429);
  ASSERT_EQ(s.admin("PUT", "/admin/v1/accounts/" + acct.account_id + "/plan", R"({"plan":"pro"})").status,
            200);
  // Pro refills the Write tier at 3 tokens/s: a token is back well within a second.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto r = s.post("/v1/validate", "", acct.api_secret);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(header_int(r, "x-ratelimit-limit"), 180);
}

TEST(RateLimit, HealthAndAdminAreNotMetered) {
  TestServer s;
  for (int i = 0; i < 200; ++i) ASSERT_EQ(s.get("/healthz").status, 200);
  auto r = s.admin("GET", "/admin/v1/accounts");
  EXPECT_TRUE(r.header("x-ratelimit-limit").empty());
}

TEST(FailedAuthThrottle, BlocksAnIpAfter30FailuresButNotAValidKey) {
  TestServer s;
  auto acct = s.create_account("pro", 0);
  for (int i = 0; i < 30; ++i) {
    auto r = i % 3 == 0 ? s.get("/v1/me") : s.get("/v1/me", "imago_sk_wrong" + std::to_string(i));
    ASSERT_EQ(r.status, 401) << i;
  }
  auto blocked = s.get("/v1/keys", "imago_sk_wrong");
  ASSERT_EQ(blocked.status, 429) << blocked.body;
  EXPECT_EQ(blocked.json().at("error").at("code").as_string(), "RATE_LIMITED");
  long long retry = header_int(blocked, "retry-after");
  EXPECT_GE(retry, 50);
  EXPECT_LE(retry, 60);
  EXPECT_EQ(s.get("/v1/me").status, 429);                              // missing key too
  EXPECT_EQ(s.post("/v1/validate", "", "imago_sk_nope").status, 429);  // validate too
  // A valid secret from the same address still passes.
  EXPECT_EQ(s.get("/v1/me", acct.api_secret).status, 200);
  EXPECT_EQ(s.post("/v1/validate", "", acct.api_secret).status, 200);
}

TEST(FailedAuthThrottle, ForwardedForIsTrustedOnlyFromConfiguredProxies) {
  {
    TestServer s({"--trusted-proxy", "127.0.0.1"}, {});
    HttpRequestOptions a, b;
    a.headers["X-Forwarded-For"] = "203.0.113.7";
    b.headers["X-Forwarded-For"] = "203.0.113.8";
    for (int i = 0; i < 30; ++i) ASSERT_EQ(s.request("GET", "/v1/me", "", "imago_sk_x", a).status, 401);
    EXPECT_EQ(s.request("GET", "/v1/me", "", "imago_sk_x", a).status, 429);
    EXPECT_EQ(s.request("GET", "/v1/me", "", "imago_sk_x", b).status, 401)
        << "a different client behind the proxy";
  }
  {
    TestServer s;  // no trusted proxy: the header is ignored, the socket peer counts
    for (int i = 0; i < 30; ++i) {
      HttpRequestOptions o;
      o.headers["X-Forwarded-For"] = "198.51.100." + std::to_string(i);
      ASSERT_EQ(s.request("GET", "/v1/me", "", "imago_sk_x", o).status, 401);
    }
    HttpRequestOptions o;
    o.headers["X-Forwarded-For"] = "198.51.100.200";
    EXPECT_EQ(s.request("GET", "/v1/me", "", "imago_sk_x", o).status, 429);
  }
}

TEST(AnonymousEndpoints, MeIsCappedPerIpAt120PerMinute) {
  TestServer s;
  auto acct = s.create_account("business", 0);  // Read tier 1440/min: the per-IP cap binds first
  for (int i = 0; i < 120; ++i) ASSERT_EQ(s.get("/v1/me", acct.api_secret).status, 200) << i;
  auto r = s.get("/v1/me", acct.api_secret);
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_GE(header_int(r, "retry-after"), 1);
  // Other endpoints are not part of the anonymous cap.
  EXPECT_EQ(s.get("/v2/credit-summaries", acct.api_secret).status, 200);
}

}  // namespace
}  // namespace imago::testing

namespace imago::testing {
namespace {

TEST(RateLimit, OperatorCanTuneThePerIpLimits) {
  TestServer s({"--failed-auth-limit", "3", "--anon-ip-limit", "5"}, {});
  for (int i = 0; i < 3; ++i) ASSERT_EQ(s.get("/v1/keys", "imago_sk_x").status, 401);
  EXPECT_EQ(s.get("/v1/keys", "imago_sk_x").status, 429);
  auto acct = s.create_account("business", 0);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(s.get("/v1/me", acct.api_secret).status, 200);
  EXPECT_EQ(s.get("/v1/me", acct.api_secret).status, 429);
}

}  // namespace
}  // namespace imago::testing

// Where the pipeline lets a route run (HandlerPool::kInline on the I/O thread, or a pool), per
// backend: the rule of docs/http.md, "Where handlers run".
#include "http/pipeline.h"

#include <gtest/gtest.h>

#include "auth/authenticator.h"
#include "auth/provisioning.h"
#include "limits/rate_limiter.h"
#include "store/cached_account_store.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/test_db.h"

namespace imago::http {
namespace {

class PipelinePlacement : public ::testing::Test {
 protected:
  PipelinePlacement() {
    auto ok = [](Request&) { return Response::json(200, {{"ok", true}}); };
    router.add("GET", "/healthz", ok,
               {.auth = AuthMode::kNone, .tier = Tier::kExempt, .pool = HandlerPool::kInline});
    router.add("GET", "/v1/me", ok, {.pool = HandlerPool::kInline, .anon_ip_limited = true});
    router.add("POST", "/v1/validate", ok,
               {.pool = HandlerPool::kInline, .invalid_key_reaches_handler = true});
    router.add("GET", "/v1/open-but-ip-capped", ok,
               {.auth = AuthMode::kNone, .pool = HandlerPool::kInline, .anon_ip_limited = true});
    router.add("GET", "/v1/agents", ok);
    router.add("POST", "/v1/tts", ok, {.pool = HandlerPool::kCpu});
  }
  HandlerPool pool_of(bool network_backend, std::string_view method, std::string_view path) {
    PipelineOptions o;
    o.network_backend = network_backend;
    Pipeline p(router, auth, *limiter, *windows, metrics, o);
    return p.route_info(method, path).pool;
  }

  sqlite::TestDb db;
  ManualClock clock;
  std::unique_ptr<AccountStore> accounts = sql::make_account_store(db.db(), clock);
  Authenticator auth{*accounts, clock};
  std::unique_ptr<RateLimiter> limiter = make_memory_rate_limiter(clock);
  std::unique_ptr<WindowCounter> windows = make_memory_window_counter(clock);
  Metrics metrics;
  Router router;
};

TEST_F(PipelinePlacement, OnSqliteCheapAuthenticatedRoutesRunInline) {
  EXPECT_EQ(pool_of(false, "GET", "/healthz"), HandlerPool::kInline);
  EXPECT_EQ(pool_of(false, "GET", "/v1/me"), HandlerPool::kInline);
  EXPECT_EQ(pool_of(false, "POST", "/v1/validate"), HandlerPool::kInline);
  EXPECT_EQ(pool_of(false, "GET", "/v1/agents"), HandlerPool::kRequest);
  EXPECT_EQ(pool_of(false, "POST", "/v1/tts"), HandlerPool::kCpu);
  EXPECT_EQ(pool_of(false, "GET", "/nowhere"), HandlerPool::kRequest);
}

TEST_F(PipelinePlacement, WithADatabaseServerOnlyRoutesThatNeedNoneOfItRunInline) {
  EXPECT_EQ(pool_of(true, "GET", "/healthz"), HandlerPool::kInline);
  EXPECT_EQ(pool_of(true, "GET", "/v1/me"), HandlerPool::kRequest);
  EXPECT_EQ(pool_of(true, "POST", "/v1/validate"), HandlerPool::kRequest);
  EXPECT_EQ(pool_of(true, "GET", "/v1/open-but-ip-capped"), HandlerPool::kRequest);  // shared window
  EXPECT_EQ(pool_of(false, "GET", "/v1/open-but-ip-capped"), HandlerPool::kInline);
}

TEST_F(PipelinePlacement, DashboardSessionsNeverRunInline) {
  EXPECT_EQ(pool_of(false, "GET", "/dashboard/api/v1/me"), HandlerPool::kRequest);
  EXPECT_EQ(pool_of(true, "GET", "/dashboard/api/v1/me"), HandlerPool::kRequest);
}

// PostgreSQL's key cache through the pipeline, on SQLite's copy of the counter table: the limiter
// plays PgRateLimiter and reads the key-change counter "in the same statement" as each decision.
// `writer` is another node's account store on the same database.
class PipelineKeyCache : public ::testing::Test {
 protected:
  struct CountingLimiter final : public RateLimiter {
    AccountStore* counter = nullptr;
    bool reads_counter = true;
    std::vector<int> per_minute;  // of every take
    RateDecision take(const std::string&, int pm) override {
      per_minute.push_back(pm);
      RateDecision d;
      d.allowed = true;
      d.limit = pm;
      d.remaining = pm - 1;
      if (reads_counter) d.key_changes = counter->key_changes().value();
      return d;
    }
  };

  PipelineKeyCache() {
    router.add("GET", "/v1/me", [](Request& req) {
      return Response::json(200, {{"plan", plan_name(req.principal->plan)}});
    });
    limiter.counter = writer.get();
    auto a = create_account_with_key(*writer, "acme", Plan::kPro, 0);
    secret = a.value().first_key.secret;
    key_id = a.value().first_key.key.id;
    account_id = a.value().account.id;
  }
  Response get_me() {
    Request req;
    req.method = "GET";
    req.path = req.target = "/v1/me";
    req.client_ip = "127.0.0.1";
    req.headers.set("api-secret", secret);
    return pipeline.dispatch(req);
  }

  sqlite::TestDb db;
  ManualClock clock;
  std::unique_ptr<AccountStore> writer = sql::make_account_store(db.db(), clock);
  CachedAccountStore cached{sql::make_account_store(db.db(), clock), clock};
  Authenticator auth{cached, clock};
  CountingLimiter limiter;
  std::unique_ptr<WindowCounter> windows = make_memory_window_counter(clock);
  Metrics metrics;
  Router router;
  Pipeline pipeline{router, auth, limiter, *windows, metrics, PipelineOptions{}};
  std::string secret, key_id, account_id;
};

TEST_F(PipelineKeyCache, ARevocationByAnotherNodeIsRefusedOnTheNextRequest) {
  for (int i = 0; i < 3; ++i) ASSERT_EQ(get_me().status, 200);  // remembered after the first
  ASSERT_TRUE(writer->revoke_key(std::nullopt, key_id).ok());
  EXPECT_EQ(get_me().status, 401);
  EXPECT_EQ(get_me().status, 401);
}

TEST_F(PipelineKeyCache, APlanChangeByAnotherNodeAppliesToTheNextRequestAndItsBucket) {
  for (int i = 0; i < 3; ++i) ASSERT_EQ(get_me().status, 200);
  ASSERT_TRUE(writer->set_plan(account_id, Plan::kEnterprise, PlanLimits{1, 2, 3}).ok());
  limiter.per_minute.clear();
  Response r = get_me();
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("enterprise"), std::string::npos) << r.body;
  // Taken at the old plan's limit in the round trip that found the change, then at the new one.
  ASSERT_EQ(limiter.per_minute.size(), 2u);
  EXPECT_EQ(limiter.per_minute.back(), 3);
  EXPECT_EQ(r.headers.get("X-RateLimit-Limit").value_or(""), "3");
}

TEST_F(PipelineKeyCache, WithoutACounterInTheRoundTripTheKeyIsReadAgain) {
  ASSERT_EQ(get_me().status, 200);
  ASSERT_EQ(get_me().status, 200);
  limiter.reads_counter = false;  // the limiter could not reach the database
  ASSERT_TRUE(writer->revoke_key(std::nullopt, key_id).ok());
  EXPECT_EQ(get_me().status, 401);
}

}  // namespace
}  // namespace imago::http

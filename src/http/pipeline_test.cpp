// Where the pipeline lets a route run (HandlerPool::kInline on the I/O thread, or a pool), per
// backend: the rule of docs/http.md, "Where handlers run".
#include "http/pipeline.h"

#include <gtest/gtest.h>

#include "auth/authenticator.h"
#include "limits/rate_limiter.h"
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

}  // namespace
}  // namespace imago::http

// Cluster mode: two `imagod serve` processes on one PostgreSQL database (docs/operations.md).
// These run in the "pg." copy of the suite (IMAGO_TEST_BACKEND=postgres); the SQLite copy reports
// them as skipped with that reason, since SQLite cannot be shared by two nodes.
#include <gtest/gtest.h>

#include <set>

#include "fixtures/fixture.h"
#include "store/postgres/test_postgres.h"
#include "support/test_server.h"

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
  // Revoked on A: refused by B on the very next request.
  ASSERT_EQ(c.a->del("/v1/keys/" + second_id, acct.api_secret).status, 200);
  EXPECT_EQ(c.b->get("/v1/me", second).status, 401);
  EXPECT_EQ(c.b->get("/v1/me", acct.api_secret).status, 200);
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

}  // namespace
}  // namespace imago::testing

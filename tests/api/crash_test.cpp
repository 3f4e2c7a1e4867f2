// Durability: SIGKILL in the middle of a generation, restart, and the job finishes, is charged
// once and its webhook is delivered once.
#include <gtest/gtest.h>

#include <set>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

TEST(Crash, KillNineMidGenerationThenRestartFinishesOnce) {
  FixtureServer fx;
  // Short leases so the restarted server takes the orphaned job over quickly.
  std::map<std::string, std::string> env = {{"IMAGO_JOB_LEASE_MS", "1500"}};
  auto s = std::make_unique<TestServer>(std::vector<std::string>{}, env);
  std::string data_dir = s->data_dir();
  auto acct = s->create_account("enterprise", 1000);
  ASSERT_EQ(s->post("/v1/webhooks", json::serialize(json::object{{"url", fx.url() + "/hook/crash"}}),
                    acct.api_secret)
                .status,
            200);
  // A video input makes the build scan many frames: long enough to be killed in the middle.
  std::string video = read_file("/usr/share/doc/opencv-doc/examples/data/Megamind.avi");
  ASSERT_FALSE(video.empty());
  auto r = s->post("/v1/agent/generate",
                   json::serialize(json::object{{"video", fx.put_file("m.avi", video)}}), acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");

  std::string status_at_kill;
  ASSERT_TRUE(eventually(
      [&] {
        auto st = s->get("/v1/agent/status/" + code, acct.api_secret).json().at("data");
        status_at_kill = str(st, "status");
        return status_at_kill != "processing";
      },
      30));
  s->kill9();
  ASSERT_TRUE(status_at_kill == "generating" || status_at_kill == "completed")
      << "killed too late: " << status_at_kill;
  // `s` stays alive (it owns and finally removes the data directory); the new server reuses it.
  TestServer again(data_dir, {}, env);
  auto final_status = wait_agent(again, acct.api_secret, code, 90);
  ASSERT_EQ(str(final_status, "status"), "ready") << json::serialize(final_status);
  EXPECT_DOUBLE_EQ(final_status.at("progress").to_number<double>(), 1.0);
  EXPECT_EQ(balance_of(again, acct.api_secret), 750);
  int charges = 0, refunds = 0;
  json::value usage = again.get("/v1/usage", acct.api_secret).json();
  for (const auto& e : usage.at("data").as_array()) {
    if (str(e, "kind") == "charge") ++charges;
    if (str(e, "kind") == "refund") ++refunds;
  }
  EXPECT_EQ(charges, 1);
  EXPECT_EQ(refunds, 0);

  ASSERT_TRUE(eventually([&] { return !fx.hooks("crash").empty(); }, 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // time for a duplicate to show up
  std::set<std::string> ids;
  int ready_events = 0;
  for (const auto& req : fx.hooks("crash")) {
    ids.insert(str(req.at("headers"), "webhook-id"));
    if (str(json::parse(str(req, "body")), "type") == "agent.ready") ++ready_events;
  }
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(ready_events, 1);
}

}  // namespace
}  // namespace imago::testing

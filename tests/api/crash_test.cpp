// Durability: SIGKILL in the middle of a generation, restart, and the job finishes, is charged
// once and its webhook is delivered once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

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

// The minute indices of a self-hosted session's charges (operation keys
// "live_minute:sh:<session>:<n>"), as the ledger holds them: one element per entry.
std::multiset<long long> self_hosted_minutes(const TestServer& s, const std::string& secret,
                                             const std::string& session) {
  std::multiset<long long> out;
  const std::string prefix = "live_minute:sh:" + session + ":";
  json::value usage = s.get("/v1/usage?limit=100", secret).json();
  for (const auto& e : usage.at("data").as_array()) {
    const std::string key = str(e, "operation_key");
    if (key.rfind(prefix, 0) == 0) out.insert(std::stoll(key.substr(prefix.size())));
  }
  return out;
}

// Self-hosted minutes are metered in the database: a server killed with SIGKILL while heartbeats
// arrive, and started again, continues the session's count. Each minute is charged exactly once:
// the charged minutes are 0..N-1 with no repeat, the count goes on past the kill (before, it
// restarted at 0 and the next minutes were replays of paid ones: charged nothing), and N never
// exceeds the minutes that really passed.
TEST(Crash, KillNineKeepsSelfHostedMinutesExact) {
  const std::vector<std::string> flags = {"--live-billing-period-s", "1"};
  auto s = std::make_unique<TestServer>(flags);
  const std::string data_dir = s->data_dir();
  auto acct = s->create_account("free", 1000);
  const std::string token =
      str(s->post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  const std::string session = "sdk-crash-session";
  const std::string body = R"({"billing_type":"essence_self_hosted","session_id":")" + session + R"("})";
  auto beat = [&](const TestServer& server) {
    HttpRequestOptions o;
    o.headers["Authorization"] = "Bearer " + token;
    return server.request("POST", "/v1/runtime/heartbeat", body, "", o).status;
  };

  const auto started = std::chrono::system_clock::now();
  ASSERT_EQ(beat(*s), 200);
  // Four clients heartbeat until the kill (bounded: at most 200 each), so the kill lands between,
  // or in the middle of, charges.
  std::atomic<bool> stop{false};
  std::atomic<int> ok_beats{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 200 && !stop.load(); ++i) {
        if (beat(*s) == 200) ++ok_beats;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  ASSERT_TRUE(eventually([&] { return self_hosted_minutes(*s, acct.api_secret, session).size() >= 3; }, 30));
  s->kill9();
  stop = true;
  for (auto& c : clients) c.join();
  EXPECT_GT(ok_beats.load(), 0);

  // `s` keeps owning (and finally removes) the data directory; the new server reuses it.
  TestServer again(data_dir, flags, {});
  const auto before = self_hosted_minutes(again, acct.api_secret, session);
  const long long k = static_cast<long long>(before.size());
  // At least two more periods pass (a lower bound only: waiting longer cannot fail the test),
  // well inside the 300 s grace, so the downtime counts as session time.
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  ASSERT_EQ(beat(again), 200);
  const auto elapsed_s =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now() - started).count();

  const auto minutes = self_hosted_minutes(again, acct.api_secret, session);
  const long long n = static_cast<long long>(minutes.size());
  std::multiset<long long> expected;
  for (long long i = 0; i < n; ++i) expected.insert(i);
  EXPECT_EQ(minutes, expected) << "each minute from 0 charged exactly once";
  EXPECT_GE(n, k + 2) << "the count continues after the restart (" << k << " before the kill)";
  EXPECT_LE(n, elapsed_s + 1) << "never more minutes than passed";
  EXPECT_EQ(balance_of(again, acct.api_secret), 1000 - n);
}

}  // namespace
}  // namespace imago::testing

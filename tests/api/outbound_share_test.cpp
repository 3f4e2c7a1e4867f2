// The per-account share of the outbound pool (--outbound-per-account, docs/http.md): an account
// whose webhook receiver is slow holds at most its share of the outbound threads; its further
// pings get 503 with Retry-After at once, while another account is served.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "fixtures/fixture.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::string hook(TestServer& s, const std::string& secret, const std::string& url) {
  auto c =
      s.post("/v1/webhooks",
             json::serialize(json::object{{"url", url}, {"events", json::array{"agent.ready"}}}), secret);
  EXPECT_EQ(c.status, 200) << c.body;
  return str(c.json().at("data"), "id");
}

TEST(OutboundShare, ASlowAccountGets503BeyondItsShareWhileAnotherIsServed) {
  FixtureServer fx;
  TestServer s({"--outbound-per-account", "1"});
  auto slow = s.create_account("enterprise", 100);
  auto other = s.create_account("enterprise", 100);
  std::string slow_hook = hook(s, slow.api_secret, fx.url() + "/hook/slow?delay=8");
  std::string fast_hook = hook(s, other.api_secret, fx.url() + "/hook/fast");

  auto first = std::async(std::launch::async,
                          [&] { return s.post("/v1/webhooks/" + slow_hook + "/test", "", slow.api_secret); });
  // Let the first ping reach the receiver (it then waits there for 8 s).
  ASSERT_TRUE(eventually([&] { return fx.hooks("slow").size() >= 1; }, 10));

  auto second = s.post("/v1/webhooks/" + slow_hook + "/test", "", slow.api_secret);
  EXPECT_EQ(second.status, 503) << second.body;
  EXPECT_EQ(str(second.json().at("error"), "code"), "SERVICE_UNAVAILABLE") << second.body;
  EXPECT_EQ(second.header("retry-after"), "1");

  auto served = s.post("/v1/webhooks/" + fast_hook + "/test", "", other.api_secret);
  EXPECT_EQ(served.status, 200) << served.body;
  EXPECT_TRUE(served.json().at("data").at("delivered").as_bool()) << served.body;
  // Both answers came while the slow ping was still waiting on its receiver.
  EXPECT_EQ(first.wait_for(std::chrono::seconds(0)), std::future_status::timeout);

  auto r = first.get();
  EXPECT_EQ(r.status, 200) << r.body;
  // Its place is free again.
  EXPECT_EQ(s.post("/v1/webhooks/" + fast_hook + "/test", "", other.api_secret).status, 200);
}

}  // namespace
}  // namespace imago::testing

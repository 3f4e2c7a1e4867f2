// Webhooks over real HTTP (SPEC 6): registration, signed deliveries, retries, the delivery log.
#include <gtest/gtest.h>

#include <set>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"
#include "util/crypto.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::string hdr(const json::value& req, const char* name) {
  return str(req.at("headers"), name);
}

TEST(Webhooks, SignedDeliveryRetriedWithTheSameIdAndLogged) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  auto other = s.create_account("enterprise", 1000);

  // The receiver fails twice, then accepts.
  auto c = s.post("/v1/webhooks",
                  json::serialize(json::object{{"url", fx.url() + "/hook/ready?fail=2"},
                                               {"events", json::array{"agent.ready", "agent.failed"}},
                                               {"description", "test receiver"}}),
                  acct.api_secret);
  ASSERT_EQ(c.status, 200) << c.body;
  auto w = c.json().at("data");
  std::string id = str(w, "id");
  std::string secret = str(w, "secret");
  EXPECT_EQ(secret.rfind("whsec_", 0), 0u);
  EXPECT_TRUE(w.at("active").as_bool());
  EXPECT_EQ(w.at("events").as_array().size(), 2u);
  fx.set_secret("ready", secret);

  // The secret is never shown again.
  auto list = s.get("/v1/webhooks", acct.api_secret);
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.json().at("data").as_array().size(), 1u);
  EXPECT_EQ(list.body.find(secret), std::string::npos);
  EXPECT_FALSE(list.json().at("data").as_array()[0].as_object().contains("secret"));
  auto one = s.get("/v1/webhooks/" + id, acct.api_secret);
  EXPECT_EQ(one.status, 200);
  EXPECT_EQ(one.body.find(secret), std::string::npos);
  EXPECT_EQ(s.get("/v1/webhooks/" + id, other.api_secret).status, 404);
  EXPECT_EQ(s.get("/v1/webhooks/" + id + "/deliveries", other.api_secret).status, 404);

  auto gen = s.post("/v1/agent/generate", R"({"prompt": "hook me"})", acct.api_secret);
  ASSERT_EQ(gen.status, 200);
  std::string code = str(gen.json(), "agent_id");
  EXPECT_EQ(str(wait_agent(s, acct.api_secret, code), "status"), "ready");

  json::array got;
  ASSERT_TRUE(eventually(
      [&] {
        got = fx.hooks("ready");
        return got.size() >= 3;
      },
      30))
      << got.size() << " requests received";
  std::set<std::string> ids;
  for (const auto& req : got) {
    ids.insert(hdr(req, "webhook-id"));
    EXPECT_EQ(hdr(req, "x-imago-event"), "agent.ready");
    EXPECT_EQ(hdr(req, "x-imago-delivery"), hdr(req, "webhook-id"));
    EXPECT_EQ(req.at("verified"), json::value(true)) << "Standard Webhooks signature";
    // The Imago signature: HMAC-SHA256(secret, "{timestamp}.{raw body}").
    std::string body = str(req, "body");
    std::string ts = hdr(req, "x-imago-timestamp");
    EXPECT_EQ(hdr(req, "x-imago-signature"), "sha256=" + to_hex(hmac_sha256(secret, ts + "." + body)));
    auto payload = json::parse(body);
    EXPECT_EQ(str(payload, "type"), "agent.ready");
    EXPECT_EQ(str(payload, "id"), hdr(req, "webhook-id"));
    EXPECT_EQ(str(payload.at("data"), "agent_id"), code);
    EXPECT_EQ(str(payload.at("data"), "status"), "ready");
    EXPECT_EQ(str(payload.at("data"), "model_url").rfind(s.url() + "/v1/files/", 0), 0u);
  }
  EXPECT_EQ(ids.size(), 1u) << "the same delivery id on every retry";
  EXPECT_EQ(got.size(), 3u);
  // Retries were spaced out (exponential backoff).
  EXPECT_GT(got[2].at("at").to_number<double>() - got[0].at("at").to_number<double>(), 1.0);

  // The delivery log: one delivery, three attempts, delivered.
  json::value deliveries;
  ASSERT_TRUE(eventually([&] {
    deliveries = s.get("/v1/webhooks/" + id + "/deliveries", acct.api_secret).json();
    auto& arr = deliveries.at("data").as_array();
    return arr.size() == 1 && arr[0].at("delivered").as_bool();
  }));
  const auto& d = deliveries.at("data").as_array()[0];
  EXPECT_EQ(str(d, "id"), *ids.begin());
  EXPECT_EQ(str(d, "event_type"), "agent.ready");
  EXPECT_EQ(d.at("attempts").as_int64(), 3);
  EXPECT_EQ(d.at("status_code").as_int64(), 200);
  ASSERT_EQ(d.at("attempt_log").as_array().size(), 3u);
  EXPECT_EQ(d.at("attempt_log").as_array()[0].at("status_code").as_int64(), 500);

  // Test ping: one synchronous, signed attempt.
  auto t = s.post("/v1/webhooks/" + id + "/test", "", acct.api_secret);
  ASSERT_EQ(t.status, 200) << t.body;
  EXPECT_TRUE(t.json().at("data").at("delivered").as_bool());
  EXPECT_EQ(t.json().at("data").at("status_code").as_int64(), 200);
  auto after_ping = fx.hooks("ready");
  ASSERT_EQ(after_ping.size(), 4u);
  EXPECT_EQ(hdr(after_ping[3], "x-imago-event"), "ping");
  EXPECT_EQ(after_ping[3].at("verified"), json::value(true));

  // Delete.
  auto del = s.del("/v1/webhooks/" + id, acct.api_secret);
  EXPECT_EQ(del.status, 200);
  EXPECT_EQ(s.get("/v1/webhooks/" + id, acct.api_secret).status, 404);
  EXPECT_EQ(s.del("/v1/webhooks/" + id, acct.api_secret).status, 404);
}

TEST(Webhooks, FailureEventsAndSubscriptionFilter) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  ASSERT_EQ(s.post("/v1/webhooks",
                   json::serialize(json::object{{"url", fx.url() + "/hook/failed"},
                                                {"events", json::array{"agent.failed"}}}),
                   acct.api_secret)
                .status,
            200);
  ASSERT_EQ(
      s.post("/v1/webhooks", json::serialize(json::object{{"url", fx.url() + "/hook/all"}}), acct.api_secret)
          .status,
      200);
  auto bad = s.post("/v1/agent/generate",
                    json::serialize(json::object{{"image", fx.put_file("board.png", faceless_png())}}),
                    acct.api_secret);
  std::string bad_code = str(bad.json(), "agent_id");
  auto good = s.post("/v1/agent/generate", R"({"prompt": "fine"})", acct.api_secret);
  std::string good_code = str(good.json(), "agent_id");
  wait_agent(s, acct.api_secret, bad_code);
  wait_agent(s, acct.api_secret, good_code);
  ASSERT_TRUE(eventually([&] { return fx.hooks("all").size() >= 2 && !fx.hooks("failed").empty(); }, 20));
  auto failed = fx.hooks("failed");
  ASSERT_EQ(failed.size(), 1u);
  auto payload = json::parse(str(failed[0], "body"));
  EXPECT_EQ(str(payload, "type"), "agent.failed");
  EXPECT_EQ(str(payload.at("data"), "agent_id"), bad_code);
  EXPECT_FALSE(str(payload.at("data"), "error_message").empty());
  std::set<std::string> types;
  for (const auto& r : fx.hooks("all")) types.insert(str(json::parse(str(r, "body")), "type"));
  EXPECT_EQ(types, (std::set<std::string>{"agent.ready", "agent.failed"}));
}

TEST(Webhooks, RegistrationValidation) {
  TestServer s;
  auto acct = s.create_account("enterprise", 0);
  EXPECT_EQ(s.post("/v1/webhooks", R"({})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/webhooks", R"({"url": "ftp://example.com/x"})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/webhooks", R"({"url": "http://169.254.169.254/hook"})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/webhooks", R"({"url": "http://[fd00:ec2::254]/hook"})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/webhooks", R"({"url": "http://127.0.0.1:9/x", "events": ["agent.exploded"]})",
                   acct.api_secret)
                .status,
            400);
  EXPECT_EQ(
      s.post("/v1/webhooks", R"({"url": "http://127.0.0.1:9/x", "events": "agent.ready"})", acct.api_secret)
          .status,
      400);
  EXPECT_EQ(s.get("/v1/webhooks/00000000-0000-4000-8000-000000000000", acct.api_secret).status, 404);
  // A receiver that is down: the test ping reports it, nothing is retried.
  auto c = s.post("/v1/webhooks", R"({"url": "http://127.0.0.1:9/x"})", acct.api_secret);
  ASSERT_EQ(c.status, 200) << c.body;
  auto t = s.post("/v1/webhooks/" + str(c.json().at("data"), "id") + "/test", "", acct.api_secret);
  ASSERT_EQ(t.status, 200);
  EXPECT_FALSE(t.json().at("data").at("delivered").as_bool());
  EXPECT_TRUE(t.json().at("data").at("status_code").is_null());
}

}  // namespace
}  // namespace imago::testing

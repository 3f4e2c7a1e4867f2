// Embed tokens kept to one site (docs/embed.md, "Keeping it to your site"): the token request's
// optional `origin`, the viewer page's frame-ancestors for it, and the WebSocket join that refuses
// a browser on another site with ORIGIN_NOT_ALLOWED.
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "support/ws_client.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::string ready_agent(const TestServer& s, const std::string& secret) {
  auto r = s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})", secret);
  EXPECT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  EXPECT_TRUE(eventually(
      [&] { return str(s.get("/v1/agent/" + code, secret).json().at("data"), "status") == "ready"; }, 120));
  return code;
}

HttpResponse request_token(const TestServer& s, const std::string& secret, const std::string& code,
                           const std::string& extra) {
  return s.post("/v1/embed-tokens/request",
                R"({"agent_id":")" + code + R"(","fingerprint":"visitor-1")" + extra + "}", secret);
}

// A join as a browser would make it; on refusal *status and *body hold the HTTP answer.
std::unique_ptr<WsClient> join(const TestServer& s, const std::string& room, const std::string& code,
                               const std::string& token, const std::string& origin,
                               const std::string& extra = "", int* status = nullptr,
                               std::string* body = nullptr) {
  WsClient::Options o;
  o.bearer = token;
  o.via_subprotocol = true;
  o.origin = origin;
  return WsClient::connect(s.port(), "/v1/runtime/rooms/" + room + "?agent_code=" + code + extra, o, status,
                           body);
}

void expect_origin_refusal(int status, const std::string& body, const std::string& needle) {
  EXPECT_EQ(status, 403) << body;
  auto v = json::parse(body).as_object();
  EXPECT_EQ(str(v, "status"), "error") << body;
  EXPECT_EQ(v.at("status_code").as_int64(), 403) << body;
  EXPECT_EQ(str(v.at("error"), "code"), "ORIGIN_NOT_ALLOWED") << body;
  EXPECT_EQ(v.at("error").at("httpStatus").as_int64(), 403) << body;
  const std::string message = str(v.at("error"), "message");
  EXPECT_NE(message.find("restricted to pages of https://shop.example"), std::string::npos) << message;
  EXPECT_NE(message.find(needle), std::string::npos) << message;
}

TEST(EmbedOrigin, TheTokenRequestTakesAnOptionalOriginAndRefusesOneThatIsNot) {
  TestServer s;
  auto acct = s.create_account("pro", 1000);
  std::string code = ready_agent(s, acct.api_secret);
  auto ok = request_token(s, acct.api_secret, code, R"(,"origin":"HTTPS://Shop.Example/")");
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(ok.json().at("data").as_object().size(), 2u);  // {token, sid}, as without it
  for (const char* bad : {R"(,"origin":"shop.example")", R"(,"origin":"https://shop.example/page")",
                          R"(,"origin":"")", R"(,"origin":42)"}) {
    auto r = request_token(s, acct.api_secret, code, bad);
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
    EXPECT_EQ(str(r.json().at("error"), "code"), "VALIDATION_ERROR") << r.body;
  }
}

TEST(EmbedOrigin, TheViewerPageForASiteMayBeFramedByThatSiteOnly) {
  TestServer s;
  auto any = s.get("/embed/A12BCD3456");
  ASSERT_EQ(any.status, 200);
  EXPECT_EQ(any.header("content-security-policy").find("frame-ancestors"), std::string::npos);
  auto one = s.get("/embed/A12BCD3456?origin=https%3A%2F%2FShop.example");
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_NE(one.header("content-security-policy").find("; frame-ancestors https://shop.example"),
            std::string::npos)
      << one.header("content-security-policy");
  auto bad = s.get("/embed/A12BCD3456?origin=javascript%3Aalert(1)");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(str(bad.json().at("error"), "code"), "VALIDATION_ERROR");
}

TEST(EmbedOrigin, ARestrictedTokenJoinsFromItsSiteAndIsRefusedElsewhere) {
  TestServer s;
  auto acct = s.create_account("pro", 1000);
  std::string code = ready_agent(s, acct.api_secret);
  auto minted = request_token(s, acct.api_secret, code, R"(,"origin":"https://shop.example")");
  ASSERT_EQ(minted.status, 200) << minted.body;
  const std::string token = str(minted.json().at("data"), "token");

  int status = 0;
  std::string body;
  // Another site's page.
  EXPECT_FALSE(join(s, "r1", code, token, "https://evil.example", "", &status, &body));
  expect_origin_refusal(status, body, "this page is https://evil.example");
  // Not a browser (no Origin).
  EXPECT_FALSE(join(s, "r1", code, token, "", "", &status, &body));
  expect_origin_refusal(status, body, "without an Origin header");
  // The viewer page on this server, not saying it runs framed by the site (opened on its own, or
  // framed with another ?origin= that the browser would not let the shop's frame have).
  const std::string self = s.url();
  EXPECT_FALSE(join(s, "r1", code, token, self, "", &status, &body));
  expect_origin_refusal(status, body, "?origin=https://shop.example");
  EXPECT_FALSE(join(s, "r1", code, token, self, "&embed_origin=https%3A%2F%2Fevil.example", &status, &body));
  expect_origin_refusal(status, body, "must run in a frame on that site");
  // Nothing was started by the refusals.
  EXPECT_EQ(s.get("/v1/rooms", acct.api_secret).json().at("data").as_array().size(), 0u);

  // The shop's own page, and the viewer framed by the shop: both join and get the session.
  for (auto [origin, extra] : {std::pair<std::string, std::string>{"https://shop.example", ""},
                               {self, "&embed_origin=https%3A%2F%2Fshop.example"}}) {
    auto ws = join(s, "r2", code, token, origin, extra, &status, &body);
    ASSERT_TRUE(ws) << origin << ": " << status << " " << body;
    bool started = false;
    for (int i = 0; i < 200 && !started; ++i) {
      auto m = ws->read(20000);
      if (!m) break;
      if (m->text && m->data.find("\"session.started\"") != std::string::npos) started = true;
    }
    EXPECT_TRUE(started) << origin;
    // Its renewal keeps the restriction: the renewed token is refused elsewhere too.
    ASSERT_TRUE(ws->send_text(R"({"type":"heartbeat","token":")" + token + R"("})"));
    std::string renewed;
    for (int i = 0; i < 200 && renewed.empty(); ++i) {
      auto m = ws->read(20000);
      if (!m) break;
      if (!m->text || m->data.find("\"heartbeat.ok\"") == std::string::npos) continue;
      renewed = str(json::parse(m->data).as_object(), "token");
    }
    ASSERT_FALSE(renewed.empty());
    EXPECT_FALSE(join(s, "r3", code, renewed, "https://evil.example", "", &status, &body));
    expect_origin_refusal(status, body, "https://evil.example");
    ws->close();
  }

  // A token without an origin joins from any page, as before.
  auto open_token = str(request_token(s, acct.api_secret, code, "").json().at("data"), "token");
  auto ws = join(s, "r4", code, open_token, "https://anywhere.example", "", &status, &body);
  EXPECT_TRUE(ws) << status << " " << body;
}

}  // namespace
}  // namespace imago::testing

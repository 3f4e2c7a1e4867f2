// The monthly live spend cap against the real imagod (docs/billing.md, "Live spend cap"): the
// holder sets theirs at /v1/spend-cap, the operator theirs over the admin API and `imagod admin`;
// a session whose next minute would pass the cap ends (insufficient_balance, detail spend_cap)
// without that minute in the ledger; tokens, joins and self-hosted heartbeats are refused with
// 402 SPEND_CAP_REACHED once the cap is reached.
#include <gtest/gtest.h>

#include <cstdio>

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

std::unique_ptr<WsClient> join(const TestServer& s, const std::string& room, const std::string& code,
                               const std::string& token, int* status = nullptr, std::string* body = nullptr) {
  WsClient::Options o;
  o.bearer = token;
  return WsClient::connect(s.port(), "/v1/runtime/rooms/" + room + "?agent_code=" + code, o, status, body);
}

int count_reason(const TestServer& s, const std::string& secret, const std::string& reason) {
  int n = 0;
  json::value usage = s.get("/v1/usage?limit=100", secret).json();
  for (auto& e : usage.at("data").as_array()) n += str(e, "reason") == reason;
  return n;
}

json::value data(const HttpResponse& r) {
  auto v = r.json();
  return v.is_object() && v.as_object().contains("data") ? v.at("data") : json::value();
}

void expect_error(const HttpResponse& r, int status, const std::string& code) {
  EXPECT_EQ(r.status, status) << r.body;
  auto v = r.json();
  ASSERT_TRUE(v.is_object()) << r.body;
  EXPECT_EQ(str(v.at("error"), "code"), code) << r.body;
  EXPECT_EQ(v.at("error").at("httpStatus").as_int64(), status);
  EXPECT_EQ(str(v, "status"), "error");
  EXPECT_EQ(v.at("status_code").as_int64(), status);
}

TEST(LiveSpendCap, HolderAndOperatorSetAndClearTheirCaps) {
  TestServer s;
  auto acct = s.create_account("free", 100);
  auto r = s.get("/v1/spend-cap", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  json::value d = data(r);
  EXPECT_TRUE(d.at("live_monthly_credits").is_null());
  EXPECT_TRUE(d.at("operator_live_monthly_credits").is_null());
  EXPECT_TRUE(d.at("effective_live_monthly_credits").is_null());
  EXPECT_TRUE(d.at("live_remaining_credits").is_null());
  EXPECT_EQ(d.at("live_spent_credits").as_int64(), 0);
  EXPECT_EQ(str(d, "period").size(), 7u);  // YYYY-MM
  EXPECT_EQ(str(d, "period_start").substr(0, 7), str(d, "period"));
  EXPECT_EQ(str(d, "period_start").substr(7), "-01T00:00:00Z");

  // The holder sets theirs.
  r = s.put("/v1/spend-cap", R"({"live_monthly_credits": 100})", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(data(r).at("live_monthly_credits").as_int64(), 100);
  EXPECT_EQ(data(r).at("effective_live_monthly_credits").as_int64(), 100);
  EXPECT_EQ(data(r).at("live_remaining_credits").as_int64(), 100);

  // The operator sets a lower one: it applies, and the holder sees it but cannot clear it.
  r = s.admin("PUT", "/admin/v1/accounts/" + acct.account_id + "/spend-cap",
              R"({"live_monthly_credits": 30})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(data(r).at("operator_live_monthly_credits").as_int64(), 30);
  EXPECT_EQ(data(r).at("effective_live_monthly_credits").as_int64(), 30);
  r = s.put("/v1/spend-cap", R"({"live_monthly_credits": null})", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(data(r).at("live_monthly_credits").is_null());
  EXPECT_EQ(data(r).at("effective_live_monthly_credits").as_int64(), 30);
  auto shown = s.admin("GET", "/admin/v1/accounts/" + acct.account_id);
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(data(shown).at("live_spend_cap").at("operator_live_monthly_credits").as_int64(), 30);
  r = s.admin("GET", "/admin/v1/accounts/" + acct.account_id + "/spend-cap");
  EXPECT_EQ(data(r).at("effective_live_monthly_credits").as_int64(), 30);

  // The operator clears theirs: no cap at all.
  r = s.admin("PUT", "/admin/v1/accounts/" + acct.account_id + "/spend-cap",
              R"({"live_monthly_credits": null})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(data(r).at("effective_live_monthly_credits").is_null());
  EXPECT_TRUE(data(s.get("/v1/spend-cap", acct.api_secret)).at("operator_live_monthly_credits").is_null());
}

TEST(LiveSpendCap, BadCapsAreValidationErrorsAndChangeNothing) {
  TestServer s;
  auto acct = s.create_account("free", 100);
  ASSERT_EQ(s.put("/v1/spend-cap", R"({"live_monthly_credits": 7})", acct.api_secret).status, 200);
  for (const char* body : {R"({"live_monthly_credits": -1})", R"({"live_monthly_credits": 1.5})",
                           R"({"live_monthly_credits": "10"})", R"({"live_monthly_credits": true})",
                           R"({"live_monthly_credits": 1000000001})", R"({"live_monthly_credits": 1e30})",
                           R"({})", R"({"live_monthly_credits": 5, "extra": 1})", R"([5])", "not json"}) {
    SCOPED_TRACE(body);
    expect_error(s.put("/v1/spend-cap", body, acct.api_secret), 400, "VALIDATION_ERROR");
    expect_error(s.admin("PUT", "/admin/v1/accounts/" + acct.account_id + "/spend-cap", body), 400,
                 "VALIDATION_ERROR");
  }
  json::value d = data(s.get("/v1/spend-cap", acct.api_secret));
  EXPECT_EQ(d.at("live_monthly_credits").as_int64(), 7);
  EXPECT_TRUE(d.at("operator_live_monthly_credits").is_null());
  // 0 is a cap (no live usage at all).
  auto r = s.put("/v1/spend-cap", R"({"live_monthly_credits": 0})", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(data(r).at("effective_live_monthly_credits").as_int64(), 0);
  // Authentication and unknown accounts.
  expect_error(s.get("/v1/spend-cap"), 401, "MISSING_AUTH");
  expect_error(s.put("/v1/spend-cap", R"({"live_monthly_credits": 1})", "imago_sk_bad"), 401, "UNAUTHORIZED");
  expect_error(s.admin("PUT", "/admin/v1/accounts/usr_missing/spend-cap", R"({"live_monthly_credits": 1})"),
               404, "NOT_FOUND");
}

TEST(LiveSpendCap, ReachingTheCapEndsTheSessionWithoutChargingTheMinute) {
  // A billed "minute" of 1 s; essence costs 2 credits a minute, so a cap of 5 pays minutes 0 and
  // 1 (4 credits) and refuses minute 2 (it would make 6).
  TestServer s({"--live-billing-period-s", "1"});
  auto acct = s.create_account("enterprise", 2000);
  std::string code = ready_agent(s, acct.api_secret);
  ASSERT_EQ(s.put("/v1/spend-cap", R"({"live_monthly_credits": 5})", acct.api_secret).status, 200);
  auto tok = s.post("/v1/runtime-tokens/request", "", acct.api_secret);
  ASSERT_EQ(tok.status, 200) << tok.body;
  std::string token = str(data(tok), "token");
  auto ws = join(s, "lobby", code, token);
  ASSERT_TRUE(ws);
  ASSERT_TRUE(ws->read_event("session.started"));
  auto err = ws->read_event("error", 15000);
  ASSERT_TRUE(err);
  auto e = json::parse(err->data).as_object();
  EXPECT_EQ(e.at("code").as_string(), "SPEND_CAP_REACHED");
  EXPECT_NE(std::string(e.at("message").as_string()).find("Monthly live spend cap reached"),
            std::string::npos);
  auto ended = ws->read_event("session.ended", 5000);
  ASSERT_TRUE(ended);
  auto end = json::parse(ended->data).as_object();
  EXPECT_EQ(end.at("reason").as_string(), "insufficient_balance");
  EXPECT_EQ(end.at("detail").as_string(), "spend_cap");
  EXPECT_TRUE(eventually([&] { return ws->closed(); }, 5));

  // The ledger holds minutes 0 and 1 only; the refused minute left no entry.
  EXPECT_EQ(count_reason(s, acct.api_secret, "live_minute:essence_cloud"), 2);
  json::value cap = data(s.get("/v1/spend-cap", acct.api_secret));
  EXPECT_EQ(cap.at("live_spent_credits").as_int64(), 4);
  EXPECT_EQ(cap.at("live_remaining_credits").as_int64(), 1);
  EXPECT_EQ(data(s.get("/v2/credit-summaries", acct.api_secret)).at("balance").as_int64(), 2000 - 250 - 4);
  EXPECT_TRUE(eventually(
      [&] { return s.get("/v1/rooms", acct.api_secret).json().at("data").as_array().empty(); }, 5));

  // With 1 credit left under the cap: an essence session (2 a minute) is refused up front, and so
  // is a token for expression (4); a token for the cheapest live rate (1) is still minted.
  int status = 0;
  std::string body;
  EXPECT_FALSE(join(s, "again", code, token, &status, &body));
  EXPECT_EQ(status, 402);
  EXPECT_NE(body.find("SPEND_CAP_REACHED"), std::string::npos) << body;
  expect_error(
      s.post("/v1/runtime-tokens/request", R"({"billing_type":"expression_cloud"})", acct.api_secret), 402,
      "SPEND_CAP_REACHED");
  EXPECT_EQ(s.post("/v1/runtime-tokens/request", "", acct.api_secret).status, 200);

  // A self-hosted renderer's minute (1 credit) fits once, then the heartbeat is refused.
  auto hb = [&](const std::string& session) {
    return s.request("POST", "/v1/runtime/heartbeat",
                     R"({"billing_type":"essence_self_hosted","session_id":")" + session + R"("})", "",
                     {.headers = {{"Authorization", "Bearer " + token}}});
  };
  EXPECT_EQ(hb("sh1").status, 200);
  expect_error(hb("sh2"), 402, "SPEND_CAP_REACHED");
  expect_error(s.post("/v1/runtime-tokens/request", "", acct.api_secret), 402, "SPEND_CAP_REACHED");

  // Raising the cap lets live usage continue this month.
  ASSERT_EQ(s.put("/v1/spend-cap", R"({"live_monthly_credits": 100})", acct.api_secret).status, 200);
  EXPECT_EQ(s.post("/v1/runtime-tokens/request", "", acct.api_secret).status, 200);
  auto ws2 = join(s, "again", code, token);
  ASSERT_TRUE(ws2);
  EXPECT_TRUE(ws2->read_event("session.started"));
}

TEST(LiveSpendCap, TheOperatorSetsItFromTheAdminCli) {
  std::string dir = make_temp_dir();
  auto run = [&](const std::string& args, std::string* out) {
    std::string file = dir + "/out.json";
    std::string cmd =
        imagod_path() + " admin --data-dir '" + dir + "' " + args + " > '" + file + "' 2>/dev/null";
    int rc = std::system(cmd.c_str());
    if (out) {
      out->clear();
      if (FILE* f = std::fopen(file.c_str(), "r")) {
        char buf[8192];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
        std::fclose(f);
      }
    }
    return rc;
  };
  std::string out;
  ASSERT_EQ(run("account create --name capped --credits 10", &out), 0);
  auto created = json::parse(out);
  std::string id = str(created, "account_id"), secret = str(created, "api_secret");
  ASSERT_EQ(run("account spend-cap " + id + " 25", &out), 0) << out;
  auto set = json::parse(out);
  EXPECT_EQ(set.at("operator_live_monthly_credits").as_int64(), 25);
  EXPECT_EQ(set.at("effective_live_monthly_credits").as_int64(), 25);
  ASSERT_EQ(run("account show " + id, &out), 0);
  EXPECT_EQ(json::parse(out).at("live_spend_cap").at("operator_live_monthly_credits").as_int64(), 25);
  // Bad values and unknown accounts fail and change nothing.
  EXPECT_NE(run("account spend-cap " + id + " -5", nullptr), 0);
  EXPECT_NE(run("account spend-cap " + id + " 2.5", nullptr), 0);
  EXPECT_NE(run("account spend-cap " + id + " lots", nullptr), 0);
  EXPECT_NE(run("account spend-cap usr_missing 5", nullptr), 0);
  {
    TestServer s(dir, {}, {});
    auto r = s.get("/v1/spend-cap", secret);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(data(r).at("operator_live_monthly_credits").as_int64(), 25);
  }
  ASSERT_EQ(run("account spend-cap " + id + " none", &out), 0);
  EXPECT_TRUE(json::parse(out).at("effective_live_monthly_credits").is_null());
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace imago::testing

// The dashboard's sign-in and the CLI's login endpoints over real HTTP, from the outside: cookie
// flags, session fixation, CSRF, throttling, account isolation, sign-out, password change,
// self sign-up, and the RFC 8628 device flow's error codes.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/test_server.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

constexpr const char* kPassword = "correct horse battery";

struct Member {
  std::string account_id;
  std::string api_secret;
  std::string email;
};

Member make_member(TestServer& s, const std::string& email, long long credits = 1000) {
  auto acct = s.create_account("pro", credits, email);
  auto r = s.admin("POST", "/admin/v1/accounts/" + acct.account_id + "/members",
                   json::serialize(json::object{{"email", email}, {"password", kPassword}}));
  EXPECT_EQ(r.status, 201) << r.body;
  return {acct.account_id, acct.api_secret, email};
}

struct Session {
  std::string token;
  std::string csrf;
  std::string set_cookie;
  HttpResponse response;
};

std::string cookie_token(const std::string& set_cookie) {
  auto start = set_cookie.find("imago_session=");
  if (start == std::string::npos) return "";
  start += 14;
  return set_cookie.substr(start, set_cookie.find(';', start) - start);
}

Session sign_in(TestServer& s, const std::string& email, const std::string& password = kPassword,
                HttpRequestOptions opts = {}) {
  Session out;
  out.response = s.request("POST", "/dashboard/api/sign-in",
                           json::serialize(json::object{{"email", email}, {"password", password}}), "", opts);
  out.set_cookie = out.response.header("set-cookie");
  out.token = cookie_token(out.set_cookie);
  if (out.response.status == 200)
    out.csrf = std::string(out.response.json().at("data").at("csrf_token").as_string());
  return out;
}

HttpResponse as(TestServer& s, const Session& ses, const std::string& method, const std::string& path,
                const std::string& body = "", bool with_csrf = true) {
  HttpRequestOptions o;
  o.headers["Cookie"] = "imago_session=" + ses.token;
  if (with_csrf) o.headers["X-CSRF-Token"] = ses.csrf;
  return s.request(method, path, body, "", o);
}

std::string code_of(const HttpResponse& r) {
  auto v = r.json();
  if (!v.is_object() || !v.as_object().contains("error")) return "";
  return std::string(v.at("error").at("code").as_string());
}

TEST(Dashboard, SignInSetsAFlaggedCookieAndANewSessionEveryTime) {
  TestServer s;
  make_member(s, "ada@example.org");
  // An id planted by an attacker is neither accepted nor kept.
  HttpRequestOptions planted;
  planted.headers["Cookie"] = "imago_session=attacker-chosen-value";
  auto a = sign_in(s, "Ada@Example.org", kPassword, planted);
  ASSERT_EQ(a.response.status, 200) << a.response.body;
  EXPECT_NE(a.set_cookie.find("HttpOnly"), std::string::npos) << a.set_cookie;
  EXPECT_NE(a.set_cookie.find("SameSite=Lax"), std::string::npos) << a.set_cookie;
  EXPECT_NE(a.set_cookie.find("Path=/"), std::string::npos) << a.set_cookie;
  EXPECT_EQ(a.set_cookie.find("Secure"), std::string::npos) << "plain http: no Secure flag";
  EXPECT_GE(a.token.size(), 40u);
  EXPECT_NE(a.token, "attacker-chosen-value");
  EXPECT_EQ(as(s, Session{"attacker-chosen-value"}, "GET", "/dashboard/api/session").status, 401);

  // Signing in again with the old cookie gives a new id and ends the old one.
  HttpRequestOptions again;
  again.headers["Cookie"] = "imago_session=" + a.token;
  auto b = sign_in(s, "ada@example.org", kPassword, again);
  ASSERT_EQ(b.response.status, 200);
  EXPECT_NE(a.token, b.token);
  EXPECT_EQ(as(s, a, "GET", "/dashboard/api/session").status, 401);
  auto me = as(s, b, "GET", "/dashboard/api/session");
  EXPECT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.json().at("data").at("member").at("email").as_string(), "ada@example.org");
  EXPECT_EQ(me.header("cache-control"), "no-store");
  EXPECT_TRUE(me.body.find(b.token) == std::string::npos) << "the token never appears in a body";
}

// The sign-in form posts its fields to /sign-in when its script has not run (found: with no
// method, the browser put the password in the URL). The server answers a browser: 303 with the
// cookie, or a page that says what went wrong; only its own pages may post there.
TEST(Dashboard, TheSignInFormWorksWithoutItsScriptAndNeverLeavesTheSite) {
  TestServer s;
  make_member(s, "ada@example.org");
  auto form_post = [&](const std::string& body, std::optional<std::string> origin) {
    HttpRequestOptions o;
    o.content_type = "application/x-www-form-urlencoded";
    if (origin) o.headers["Origin"] = *origin;
    return s.request("POST", "/sign-in", body, "", o);
  };
  const std::string creds = "email=ada%40example.org&password=" + std::string(kPassword);

  auto ok = form_post(creds + "&next=%2Fkeys", s.url());
  ASSERT_EQ(ok.status, 303) << ok.body;
  EXPECT_EQ(ok.header("location"), "/keys");
  const std::string token = cookie_token(ok.header("set-cookie"));
  ASSERT_GE(token.size(), 40u);
  EXPECT_EQ(as(s, Session{token}, "GET", "/dashboard/api/session").status, 200);

  // Only plain paths of this site: everything else goes to the dashboard's home.
  for (const char* evil : {"%2F%2Fevil.example", "%2F%5Cevil.example", "https%3A%2F%2Fevil.example",
                           "%2F%09%2Fevil.example", "%2Fkeys%2F..%2F%2Fevil", "javascript%3Aalert(1)"}) {
    auto r = form_post(creds + "&next=" + evil, s.url());
    ASSERT_EQ(r.status, 303) << evil;
    EXPECT_EQ(r.header("location"), "/") << evil;
  }

  auto wrong = form_post("email=ada%40example.org&password=not-the-password", s.url());
  EXPECT_EQ(wrong.status, 401);
  EXPECT_NE(wrong.body.find("Wrong email or password."), std::string::npos) << wrong.body;
  EXPECT_EQ(wrong.header("content-type"), "text/html; charset=utf-8");
  EXPECT_TRUE(wrong.header("set-cookie").empty());
  EXPECT_EQ(wrong.body.find("ada@example.org"), std::string::npos) << "nothing the client sent is echoed";

  // Another site's form, a form with no Origin, and JSON are all refused without a session.
  auto foreign = form_post(creds, "https://evil.example");
  EXPECT_EQ(foreign.status, 403);
  EXPECT_TRUE(foreign.header("set-cookie").empty());
  EXPECT_EQ(form_post(creds, std::nullopt).status, 403);
  HttpRequestOptions j;
  j.headers["Origin"] = s.url();
  EXPECT_EQ(s.request("POST", "/sign-in", "{}", "", j).status, 415);
  EXPECT_EQ(form_post("email=ada%40example.org", s.url()).status, 400);
}

// The first start hands the owner a one-time dashboard link (found: reaching the dashboard needed
// an account id from a JSON log line and a CLI step). Not on a terminal, it is in a 0600 file, not
// in the log; it makes the first member once and signs it in.
TEST(Dashboard, TheFirstRunLinkMakesTheOwnerOnceAndStaysOutOfTheLog) {
  TestServer s({"--no-bootstrap=false"});
  const std::string file = s.data_dir() + "/first-run-link";
  std::ifstream in(file);
  ASSERT_TRUE(in.good()) << "no " << file;
  std::string link;
  std::getline(in, link);
  const auto hash = link.find("/welcome#");
  ASSERT_NE(hash, std::string::npos) << link;
  EXPECT_EQ(link.substr(0, hash), s.url());
  const std::string token = link.substr(hash + 9);
  ASSERT_GE(token.size(), 40u);
  EXPECT_EQ(std::filesystem::status(file).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);

  auto claim = [&](const std::string& t, const std::string& email) {
    return s.request("POST", "/dashboard/api/first-run",
                     json::serialize(json::object{{"token", t}, {"email", email}, {"password", kPassword}}),
                     "");
  };
  EXPECT_EQ(claim(token + "A", "owner@example.org").status, 401);
  auto ok = claim(token, "owner@example.org");
  ASSERT_EQ(ok.status, 201) << ok.body;
  const std::string cookie = cookie_token(ok.header("set-cookie"));
  auto me = as(s, Session{cookie}, "GET", "/dashboard/api/session");
  ASSERT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.json().at("data").at("member").at("email").as_string(), "owner@example.org");
  // It is the bootstrap account, the one whose secret the first start handed over.
  std::ifstream sf(s.data_dir() + "/bootstrap-api-secret");
  std::string secret;
  std::getline(sf, secret);
  EXPECT_EQ(s.get("/v1/me", secret).json().at("data").at("user_id"),
            me.json().at("data").at("account").at("id"));
  // Used once: a second claim makes nobody.
  auto again = claim(token, "mallory@example.org");
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(sign_in(s, "mallory@example.org").response.status, 401);
  EXPECT_EQ(sign_in(s, "owner@example.org").response.status, 200);

  std::ifstream lf(s.data_dir() + "/imagod.log");
  std::stringstream log;
  log << lf.rdbuf();
  EXPECT_EQ(log.str().find(token.substr(token.size() - 24)), std::string::npos) << "the link is not logged";
  EXPECT_NE(log.str().find("first_run_link_offered"), std::string::npos);
}

TEST(Dashboard, CookieIsSecureWhenServedOverTls) {
  TestServer s({"--public-url", "https://imago.example.org"});
  make_member(s, "ada@example.org");
  auto a = sign_in(s, "ada@example.org");
  ASSERT_EQ(a.response.status, 200);
  EXPECT_NE(a.set_cookie.find("; Secure"), std::string::npos) << a.set_cookie;
}

TEST(Dashboard, WrongPasswordsAreRefusedAlikeAndThrottled) {
  TestServer s;
  make_member(s, "ada@example.org");
  auto unknown = sign_in(s, "nobody@example.org", "whatever it is");
  auto wrong = sign_in(s, "ada@example.org", "not the password");
  EXPECT_EQ(unknown.response.status, 401);
  EXPECT_EQ(wrong.response.status, 401);
  EXPECT_EQ(unknown.response.json().at("error").at("message"),
            wrong.response.json().at("error").at("message"))
      << "no hint whether the email exists";
  EXPECT_TRUE(wrong.set_cookie.empty());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(sign_in(s, "ada@example.org", "still wrong!").response.status, 401);
  // Five failures for this email: now even the right password waits.
  auto t = sign_in(s, "ada@example.org");
  EXPECT_EQ(t.response.status, 429) << t.response.body;
  EXPECT_EQ(code_of(t.response), "RATE_LIMITED");
  EXPECT_GT(std::stoi(t.response.header("retry-after")), 0);
  EXPECT_TRUE(t.set_cookie.empty());
  // Per IP: ten failures across different emails block the address.
  for (int i = 0; i < 5; ++i) sign_in(s, "other" + std::to_string(i) + "@example.org", "nope nope");
  EXPECT_EQ(sign_in(s, "fresh@example.org", "nope nope").response.status, 429);
}

TEST(Dashboard, StateChangingRequestsNeedTheCsrfToken) {
  TestServer s;
  make_member(s, "ada@example.org");
  auto a = sign_in(s, "ada@example.org");
  const std::string body = R"({"alias": "from-dashboard"})";
  auto none = as(s, a, "POST", "/dashboard/api/v1/keys", body, false);
  EXPECT_EQ(none.status, 403);
  EXPECT_EQ(code_of(none), "CSRF_FAILED");
  Session wrong = a;
  wrong.csrf = "not-the-token";
  EXPECT_EQ(as(s, wrong, "POST", "/dashboard/api/v1/keys", body).status, 403);
  EXPECT_EQ(as(s, wrong, "POST", "/dashboard/api/sign-out").status, 403);
  auto ok = as(s, a, "POST", "/dashboard/api/v1/keys", body);
  EXPECT_EQ(ok.status, 201) << ok.body;
  // Reads need no token.
  EXPECT_EQ(as(s, a, "GET", "/dashboard/api/v1/agents", "", false).status, 200);

  // Sign-in has no session yet: JSON only, and never from a foreign origin.
  HttpRequestOptions form;
  form.content_type = "application/x-www-form-urlencoded";
  EXPECT_EQ(s.request("POST", "/dashboard/api/sign-in", "email=a&password=b", "", form).status, 415);
  HttpRequestOptions foreign;
  foreign.headers["Origin"] = "https://evil.example";
  auto x = sign_in(s, "ada@example.org", kPassword, foreign);
  EXPECT_EQ(x.response.status, 403);
  EXPECT_TRUE(x.set_cookie.empty());
  HttpRequestOptions same;
  same.headers["Origin"] = s.url();
  EXPECT_EQ(sign_in(s, "ada@example.org", kPassword, same).response.status, 200);
}

TEST(Dashboard, TheApiStaysKeyOnlyAndTheBridgeReachesOnlyKeyRoutes) {
  TestServer s;
  make_member(s, "ada@example.org");
  auto a = sign_in(s, "ada@example.org");
  auto direct = as(s, a, "GET", "/v1/keys");
  EXPECT_EQ(direct.status, 401);
  EXPECT_EQ(code_of(direct), "MISSING_AUTH");
  EXPECT_EQ(as(s, a, "GET", "/dashboard/api/admin/v1/accounts").status, 404);
  EXPECT_EQ(as(s, a, "GET", "/dashboard/api/healthz").status, 404);
  EXPECT_EQ(as(s, a, "POST", "/dashboard/api/v1/cli/device/code", R"({"hostname":"x"})").status, 404);
  auto me = as(s, a, "GET", "/dashboard/api/v1/me");
  EXPECT_EQ(me.status, 200) << me.body;
  EXPECT_FALSE(me.header("x-ratelimit-limit").empty()) << "the same per-account buckets apply";
  EXPECT_EQ(s.get("/dashboard/api/v1/me").status, 401);
  EXPECT_EQ(as(s, Session{"forged"}, "GET", "/dashboard/api/v1/me").status, 401);
}

TEST(Dashboard, AnotherAccountsObjectsAreInvisible) {
  TestServer s;
  auto ada = make_member(s, "ada@example.org");
  auto bob = make_member(s, "bob@example.org");
  auto bob_key = s.post("/v1/keys", R"({"alias": "bob-secret-key"})", bob.api_secret);
  ASSERT_EQ(bob_key.status, 201);
  const std::string bob_key_id(bob_key.json().at("data").at("id").as_string());
  auto hook = s.post("/v1/webhooks", R"({"url": "https://example.org/hook", "events": ["agent.ready"]})",
                     bob.api_secret);

  auto a = sign_in(s, "ada@example.org");
  auto keys = as(s, a, "GET", "/dashboard/api/keys");
  ASSERT_EQ(keys.status, 200);
  EXPECT_EQ(keys.body.find("bob-secret-key"), std::string::npos);
  EXPECT_EQ(keys.body.find(bob_key_id), std::string::npos);
  EXPECT_EQ(as(s, a, "DELETE", "/dashboard/api/v1/keys/" + bob_key_id).status, 404);
  EXPECT_EQ(as(s, a, "POST", "/dashboard/api/v1/keys/" + bob_key_id + "/rotate").status, 404);
  EXPECT_EQ(s.post("/v1/validate", "", std::string(bob_key.json().at("data").at("api_secret").as_string()))
                .json()
                .at("valid")
                .as_bool(),
            true);
  if (hook.status == 201) {
    const std::string hook_id(hook.json().at("data").at("id").as_string());
    EXPECT_EQ(as(s, a, "GET", "/dashboard/api/v1/webhooks/" + hook_id).status, 404);
    EXPECT_EQ(as(s, a, "GET", "/dashboard/api/v1/webhooks").body.find(hook_id), std::string::npos);
  }
  auto members = as(s, a, "GET", "/dashboard/api/members");
  EXPECT_EQ(members.body.find("bob@"), std::string::npos);
  auto ledger = as(s, a, "GET", "/dashboard/api/v1/usage");
  EXPECT_EQ(ledger.body.find(bob.account_id), std::string::npos);
}

TEST(Dashboard, SignOutPasswordChangeAndSignOutEverywhere) {
  TestServer s;
  make_member(s, "ada@example.org");
  auto a = sign_in(s, "ada@example.org");
  auto b = sign_in(s, "ada@example.org");
  auto out = as(s, a, "POST", "/dashboard/api/sign-out");
  EXPECT_EQ(out.status, 200);
  EXPECT_NE(out.header("set-cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(as(s, a, "GET", "/dashboard/api/session").status, 401);
  EXPECT_EQ(as(s, b, "GET", "/dashboard/api/session").status, 200);

  auto c = sign_in(s, "ada@example.org");
  auto wrong = as(s, b, "POST", "/dashboard/api/password",
                  R"({"current_password": "nope nope nope", "new_password": "a new long password"})");
  EXPECT_EQ(wrong.status, 403);
  EXPECT_EQ(code_of(wrong), "WRONG_PASSWORD");
  auto weak = as(s, b, "POST", "/dashboard/api/password",
                 R"({"current_password": "correct horse battery", "new_password": "short"})");
  EXPECT_EQ(weak.status, 400);
  auto changed =
      as(s, b, "POST", "/dashboard/api/password",
         R"({"current_password": "correct horse battery", "new_password": "a new long password"})");
  EXPECT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(as(s, b, "GET", "/dashboard/api/session").status, 200) << "the changing session stays";
  EXPECT_EQ(as(s, c, "GET", "/dashboard/api/session").status, 401) << "every other session ends";
  EXPECT_EQ(sign_in(s, "ada@example.org").response.status, 401);
  auto d = sign_in(s, "ada@example.org", "a new long password");
  ASSERT_EQ(d.response.status, 200);
  auto all = as(s, d, "POST", "/dashboard/api/sign-out-everywhere");
  EXPECT_EQ(all.status, 200);
  EXPECT_EQ(all.json().at("sessions_ended").as_int64(), 2);
  EXPECT_EQ(as(s, b, "GET", "/dashboard/api/session").status, 401);
  EXPECT_EQ(as(s, d, "GET", "/dashboard/api/session").status, 401);
}

TEST(Dashboard, WrongCurrentPasswordsOnChangeAreThrottledWithSignIns) {
  TestServer s;
  make_member(s, "ada@example.org");
  auto a = sign_in(s, "ada@example.org");
  ASSERT_EQ(a.response.status, 200);
  const std::string guess =
      R"({"current_password": "a guess a guess", "new_password": "a new long password"})";
  const std::string right =
      R"({"current_password": "correct horse battery", "new_password": "a new long password"})";
  for (int i = 0; i < 5; ++i) {
    auto w = as(s, a, "POST", "/dashboard/api/password", guess);
    EXPECT_EQ(w.status, 403) << w.body;
  }
  // The account's failed-password budget (shared with sign-in) is spent: the right one waits too.
  auto t = as(s, a, "POST", "/dashboard/api/password", right);
  EXPECT_EQ(t.status, 429) << t.body;
  EXPECT_EQ(code_of(t), "RATE_LIMITED");
  EXPECT_GT(std::stoi(t.header("retry-after")), 0);
  EXPECT_EQ(sign_in(s, "ada@example.org").response.status, 429) << "sign-in shares the throttle";
  EXPECT_EQ(as(s, a, "GET", "/dashboard/api/session").status, 200) << "the session itself stays";
}

TEST(Dashboard, LiveTokensMintedThroughASessionWork) {
  // The agent page's viewer asks for an embed token with the member's session (no api key).
  TestServer s;
  make_member(s, "ada@example.org");
  auto a = sign_in(s, "ada@example.org");
  ASSERT_EQ(a.response.status, 200);
  auto rt = as(s, a, "POST", "/dashboard/api/v1/runtime-tokens/request", "{}");
  ASSERT_EQ(rt.status, 200) << rt.body;
  HttpRequestOptions bearer;
  bearer.headers["Authorization"] = "Bearer " + std::string(rt.json().at("data").at("token").as_string());
  auto hb = s.request("POST", "/v1/runtime/heartbeat", "{}", "", bearer);
  EXPECT_EQ(hb.status, 200) << "a session-minted token verifies: " << hb.body;
  auto unknown = as(s, a, "POST", "/dashboard/api/v1/embed-tokens/request",
                    R"({"agent_id": "nope", "fingerprint": "dashboard"})");
  EXPECT_EQ(unknown.status, 404) << unknown.body;

  // The token lives as long as the session that minted it: after sign-out the next heartbeat
  // fails (a live session would pause), while a token of another session goes on.
  auto other = sign_in(s, "ada@example.org");
  auto rt2 = as(s, other, "POST", "/dashboard/api/v1/runtime-tokens/request", "{}");
  ASSERT_EQ(rt2.status, 200) << rt2.body;
  HttpRequestOptions bearer2;
  bearer2.headers["Authorization"] = "Bearer " + std::string(rt2.json().at("data").at("token").as_string());
  ASSERT_EQ(as(s, a, "POST", "/dashboard/api/sign-out", "").status, 200);
  hb = s.request("POST", "/v1/runtime/heartbeat", "{}", "", bearer);
  EXPECT_EQ(hb.status, 401) << "a token of a signed-out session: " << hb.body;
  EXPECT_EQ(s.request("POST", "/v1/runtime/heartbeat", "{}", "", bearer2).status, 200);
}

TEST(Dashboard, PasswordsNeverReachTheServerLog) {
  TestServer s({"--allow-signup"});
  make_member(s, "ada@example.org");
  const std::string wrong = "Wrong-Pass-Marker-7431", fresh = "Fresh-Pass-Marker-9902",
                    signup = "Signup-Pass-Marker-5517";
  EXPECT_EQ(sign_in(s, "ada@example.org", wrong).response.status, 401);
  auto a = sign_in(s, "ada@example.org");
  ASSERT_EQ(a.response.status, 200);
  EXPECT_EQ(as(s, a, "POST", "/dashboard/api/password",
               json::serialize(json::object{{"current_password", wrong}, {"new_password", fresh}}))
                .status,
            403);
  EXPECT_EQ(as(s, a, "POST", "/dashboard/api/password",
               json::serialize(json::object{{"current_password", kPassword}, {"new_password", fresh}}))
                .status,
            200);
  EXPECT_EQ(s.post("/dashboard/api/sign-up",
                   json::serialize(json::object{{"email", "new@example.org"}, {"password", signup}}))
                .status,
            202);
  s.stop();
  std::ifstream in(s.data_dir() + "/imagod.log");
  std::stringstream log;
  log << in.rdbuf();
  ASSERT_NE(log.str().find("sign"), std::string::npos) << "the requests were logged at all";
  for (const std::string& p : {std::string(kPassword), wrong, fresh, signup}) {
    EXPECT_EQ(log.str().find(p), std::string::npos) << "the log contains the password " << p;
  }
}

TEST(Dashboard, SelfSignUpOnlyWhenTheOperatorAllowsIt) {
  {
    TestServer s;
    auto r =
        s.post("/dashboard/api/sign-up", R"({"email": "new@example.org", "password": "a long password"})");
    EXPECT_EQ(r.status, 403);
    EXPECT_EQ(code_of(r), "SIGNUP_DISABLED");
    EXPECT_FALSE(s.get("/dashboard/api/config").json().at("data").at("allow_signup").as_bool());
  }
  TestServer s({"--allow-signup"});
  auto r = s.post("/dashboard/api/sign-up",
                  R"({"email": "new@example.org", "password": "a long password", "account_name": "Newco"})");
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_TRUE(r.header("set-cookie").empty()) << "sign-up does not sign in";
  auto in = sign_in(s, "new@example.org", "a long password");
  ASSERT_EQ(in.response.status, 200);
  EXPECT_EQ(in.response.json().at("data").at("account").at("name").as_string(), "Newco");
  EXPECT_EQ(s.post("/dashboard/api/sign-up", R"({"email": "x@example.org", "password": "short"})").status,
            400);
}

// Sign-up does not tell whether an email has an account: a taken email gets the same status, body
// and headers as a new one, its account is untouched (no second account, the old password still
// the one), and the operator's log notes the attempt without the email or the password.
TEST(Dashboard, SignUpAnswersTheSameForATakenEmail) {
  TestServer s({"--allow-signup"});
  auto fresh =
      s.post("/dashboard/api/sign-up", R"({"email": "new@example.org", "password": "a long password"})");
  ASSERT_EQ(fresh.status, 202) << fresh.body;
  auto taken = s.post("/dashboard/api/sign-up",
                      R"({"email": "NEW@example.org", "password": "Other-Pass-Marker-3318"})");
  EXPECT_EQ(taken.status, fresh.status);
  EXPECT_EQ(taken.body, fresh.body);
  EXPECT_EQ(taken.header("set-cookie"), fresh.header("set-cookie"));
  EXPECT_EQ(taken.header("content-type"), fresh.header("content-type"));
  EXPECT_EQ(sign_in(s, "new@example.org", "a long password").response.status, 200);
  EXPECT_EQ(sign_in(s, "new@example.org", "Other-Pass-Marker-3318").response.status, 401);
  EXPECT_EQ(s.admin("GET", "/admin/v1/accounts").json().at("pagination").at("total").as_int64(), 1);
  s.stop();
  std::ifstream in(s.data_dir() + "/imagod.log");
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_NE(log.str().find("signup_email_taken"), std::string::npos);
  EXPECT_EQ(log.str().find("Other-Pass-Marker-3318"), std::string::npos);
  EXPECT_EQ(log.str().find("new@example.org"), std::string::npos);
}

TEST(Dashboard, DeviceFlowErrorCodesOverHttp) {
  TestServer s;
  make_member(s, "ada@example.org");
  auto start = s.post("/v1/cli/device/code", R"({"hostname": "ci-box"})");
  ASSERT_EQ(start.status, 200) << start.body;
  auto d = start.json().as_object();
  EXPECT_EQ(d.at("verification_uri").as_string(), s.url() + "/device");
  EXPECT_EQ(d.at("interval").as_int64(), 5);
  EXPECT_EQ(d.at("expires_in").as_int64(), 600);
  const std::string device_code(d.at("device_code").as_string()), user_code(d.at("user_code").as_string());
  auto poll = [&](const std::string& code) {
    return s.post("/v1/cli/device/token",
                  json::serialize(json::object{{"grant_type", "urn:ietf:params:oauth:grant-type:device_code"},
                                               {"device_code", code}}));
  };
  EXPECT_EQ(code_of(poll(device_code)), "authorization_pending");
  auto fast = poll(device_code);
  EXPECT_EQ(code_of(fast), "slow_down");
  EXPECT_EQ(fast.header("retry-after"), "10");
  EXPECT_EQ(code_of(poll("unknown")), "invalid_grant");
  EXPECT_EQ(code_of(s.post("/v1/cli/device/token", R"({"grant_type": "password", "device_code": "x"})")),
            "unsupported_grant_type");
  EXPECT_EQ(s.post("/v1/cli/device/code", R"({"hostname": "bad host!"})").status, 400);

  auto a = sign_in(s, "ada@example.org");
  EXPECT_EQ(as(s, a, "POST", "/dashboard/api/device/approve",
               json::serialize(json::object{{"user_code", user_code}}), false)
                .status,
            403);
  EXPECT_EQ(as(s, a, "POST", "/dashboard/api/device/approve", R"({"user_code": "BBBB-BBBB"})").status, 404);
  auto ok = as(s, a, "POST", "/dashboard/api/device/approve",
               json::serialize(json::object{{"user_code", user_code}}));
  ASSERT_EQ(ok.status, 200) << ok.body;
  std::this_thread::sleep_for(std::chrono::milliseconds(10200));  // the interval is now 10 s
  auto got = poll(device_code);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.json().at("data").at("alias").as_string(), "cli@ci-box");
  const std::string key_id(got.json().at("data").at("key_id").as_string());
  auto keys = as(s, a, "GET", "/dashboard/api/keys").json().at("data").as_array();
  bool marked = false;
  for (const auto& k : keys) {
    if (k.at("id").as_string() == key_id) marked = k.at("device").as_bool();
  }
  EXPECT_TRUE(marked);
  EXPECT_EQ(code_of(poll(device_code)), "invalid_grant") << "a device code works once";

  auto denied = s.post("/v1/cli/device/code", R"({"hostname": "other"})").json();
  as(s, a, "POST", "/dashboard/api/device/approve",
     json::serialize(json::object{{"user_code", denied.at("user_code")}, {"approve", false}}));
  auto refused =
      s.post("/v1/cli/device/token",
             json::serialize(json::object{{"grant_type", "urn:ietf:params:oauth:grant-type:device_code"},
                                          {"device_code", denied.at("device_code")}}));
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(code_of(refused), "access_denied");
}

TEST(Dashboard, OperatorCreatesMembersFromTheShellWithThePasswordOnStdin) {
  TestServer s;
  auto acct = s.create_account("free", 0, "shell");
  const std::string cmd = imagod_path() + " admin --data-dir '" + s.data_dir() + "' user create " +
                          acct.account_id + " --email Shell@Example.org";
  FILE* p = popen((cmd + " > '" + s.data_dir() + "/out.json'").c_str(), "w");
  ASSERT_NE(p, nullptr);
  fputs("a password from stdin\n", p);
  ASSERT_EQ(pclose(p), 0);
  EXPECT_EQ(sign_in(s, "shell@example.org", "a password from stdin").response.status, 200);
  auto listed = s.admin("GET", "/admin/v1/accounts/" + acct.account_id + "/members");
  EXPECT_NE(listed.body.find("shell@example.org"), std::string::npos);
}

TEST(Dashboard, PagesAreServedWithAStrictContentSecurityPolicy) {
  TestServer s;
  auto root = s.get("/");
  ASSERT_EQ(root.status, 200);
  EXPECT_EQ(root.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(root.header("content-security-policy").find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(root.header("x-frame-options"), "DENY");
  for (const char* page : {"/sign-in", "/keys", "/agents", "/agent", "/speech", "/credits", "/webhooks",
                           "/account", "/device", "/cli-login", "/js/api.js", "/app.css"}) {
    EXPECT_EQ(s.get(page).status, 200) << page;
  }
  EXPECT_EQ(s.get("/js/../../CMakeLists.txt").status, 404);
  EXPECT_EQ(s.get("/nope.html").status, 404);
}

}  // namespace
}  // namespace imago::testing

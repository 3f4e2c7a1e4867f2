// TLS built in (--tls-cert / --tls-key, docs/http.md) against the real imagod, with a certificate
// made at test time: HTTPS health and an authenticated call, a WSS live room, the dashboard's
// Secure cookie, plain HTTP on the TLS port, and a certificate that does not load.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "fixtures/fixture.h"
#include "support/test_cert.h"
#include "support/test_server.h"
#include "support/ws_client.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

struct Tls {
  std::string dir = make_temp_dir();
  TestCert cert = write_test_cert(dir);
  ~Tls() { std::filesystem::remove_all(dir); }
  std::vector<std::string> args() const { return {"--tls-cert", cert.cert_file, "--tls-key", cert.key_file}; }
};

TEST(Tls, HttpsHealthAndAuthenticatedCallWithAVerifiedCertificate) {
  Tls tls;
  TestServer s(tls.args());
  ASSERT_EQ(s.url().rfind("https://", 0), 0u) << s.url();
  auto h = s.get("/healthz");
  EXPECT_EQ(h.status, 200) << h.body;
  auto acct = s.create_account("pro", 100);
  auto me = s.get("/v1/me", acct.api_secret);
  EXPECT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(str(me.json().at("data"), "user_id"), acct.account_id) << me.body;
  EXPECT_EQ(s.get("/v1/me", "wrong").status, 401);
  // Without trusting the certificate a client refuses the server (it really is TLS, verified).
  HttpRequestOptions untrusted;
  untrusted.ca_file = tls.dir + "/nothing-here.pem";
  EXPECT_EQ(http_request("GET", s.url() + "/healthz", "", untrusted).status, 0);
}

TEST(Tls, PlainHttpOnTheTlsPortIsRefusedCleanly) {
  Tls tls;
  TestServer s(tls.args());
  auto r = http_request("GET", "http://127.0.0.1:" + std::to_string(s.port()) + "/healthz");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("HTTPS"), std::string::npos) << r.body;
  EXPECT_EQ(s.get("/healthz").status, 200);  // and the server goes on serving TLS clients
}

TEST(Tls, DashboardCookieIsSecureOverTlsWithoutAPublicUrl) {
  Tls tls;
  TestServer s(tls.args());
  auto acct = s.create_account("pro", 100, "ada@example.org");
  auto m = s.admin("POST", "/admin/v1/accounts/" + acct.account_id + "/members",
                   R"({"email": "ada@example.org", "password": "correct horse battery"})");
  ASSERT_EQ(m.status, 201) << m.body;
  auto r = s.post("/dashboard/api/sign-in",
                  R"({"email": "ada@example.org", "password": "correct horse battery"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.header("set-cookie").find("; Secure"), std::string::npos) << r.header("set-cookie");
}

TEST(Tls, WssLiveRoomStartsASession) {
  Tls tls;
  TestServer s(tls.args());
  auto acct = s.create_account("enterprise", 2000);
  auto g =
      s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})", acct.api_secret);
  ASSERT_EQ(g.status, 200) << g.body;
  std::string code = str(g.json(), "agent_id");
  ASSERT_TRUE(eventually(
      [&] { return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready"; },
      120));
  std::string token =
      str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  for (bool subprotocol : {false, true}) {
    WsClient::Options o;
    o.bearer = token;
    o.via_subprotocol = subprotocol;
    o.ca_file = tls.cert.cert_file;
    int status = 0;
    std::string body;
    auto ws = WsClient::connect(s.port(), "/v1/runtime/rooms/lobby?agent_code=" + code, o, &status, &body);
    ASSERT_TRUE(ws) << status << " " << body;
    auto started = ws->read_event("session.started");
    ASSERT_TRUE(started);
    EXPECT_NE(started->data.find("\"room_id\":\"lobby\""), std::string::npos) << started->data;
    ws->close();
  }
  // A refused upgrade is an ordinary HTTPS answer.
  WsClient::Options bad;
  bad.bearer = "not-a-token";
  bad.ca_file = tls.cert.cert_file;
  int status = 0;
  EXPECT_FALSE(WsClient::connect(s.port(), "/v1/runtime/rooms/lobby?agent_code=" + code, bad, &status));
  EXPECT_EQ(status, 401);
}

TEST(Tls, ACertificateThatDoesNotLoadStopsTheStartWithAClearMessage) {
  Tls tls;
  std::string data = make_temp_dir();
  std::string cmd = imagod_path() + " serve --listen 127.0.0.1:0 --no-bootstrap --no-workers --data-dir " +
                    data + " --tls-cert " + tls.dir + "/missing.pem --tls-key " + tls.cert.key_file + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  std::filesystem::remove_all(data);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("cannot read TLS certificate '" + tls.dir + "/missing.pem': No such file or directory"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace imago::testing

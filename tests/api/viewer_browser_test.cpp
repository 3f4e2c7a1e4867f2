// Runs tests/browser/viewer_test.mjs: the viewer's controls, captions and layouts, the embed page
// without a token, the agent page's Embed dialog (its snippet on a page of another origin), and
// the Live rooms and Sessions pages, in Debian's chromium through playwright-core (no browser
// download) against a real imagod. Missing node, npm or chromium is a failure, not a skip.
// IMAGO_SCREENSHOT_DIR, when set, receives PNGs at 1280x800 and 390x844.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "fixtures/fixture.h"
#include "support/browser_tools.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

TEST(ViewerBrowser, ControlsCaptionsLayoutsEmbedRoomsAndSessions) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(tests_dir()) / "browser";
  ASSERT_TRUE(browser_tools_ready(dir.string()));

  TestServer srv;
  auto acct = srv.create_account("pro", 5000, "viewer");
  auto m = srv.admin("POST", "/admin/v1/accounts/" + acct.account_id + "/members",
                     R"({"email": "vi@example.org", "password": "correct horse battery"})");
  ASSERT_EQ(m.status, 201) << m.body;
  // A 16:9 agent made from a prompt (ready in seconds, no photo needed).
  auto g = srv.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"16:9"})",
                    acct.api_secret);
  ASSERT_EQ(g.status, 200) << g.body;
  const std::string code = str(g.json(), "agent_id");
  ASSERT_TRUE(eventually(
      [&] {
        return str(srv.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready";
      },
      120))
      << "agent " << code << " never became ready";
  auto e = srv.post("/v1/embed-tokens/request",
                    R"({"agent_id":")" + code + R"(","fingerprint":"viewer-test"})", acct.api_secret);
  ASSERT_EQ(e.status, 200) << e.body;

  const char* shots = std::getenv("IMAGO_SCREENSHOT_DIR");
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + srv.url() +
                    "' IMAGO_EMAIL=vi@example.org IMAGO_PASSWORD='correct horse battery' AGENT_CODE='" +
                    code + "' API_SECRET='" + acct.api_secret + "' EMBED_TOKEN='" +
                    str(e.json().at("data"), "token") + "' " +
                    (shots ? "IMAGO_SCREENSHOT_DIR='" + std::string(shots) + "' " : "") +
                    "timeout 400 node viewer_test.mjs";
  EXPECT_EQ(run_command(cmd), 0) << "the browser checks failed (see output above)";
}

// The page any site may frame: its own stylesheet, no inline style or script allowed, no referrer.
TEST(ViewerBrowser, EmbedPageHeadersAndStylesheet) {
  TestServer srv;
  auto r = srv.get("/embed/A12BCD3456");
  ASSERT_EQ(r.status, 200);
  const std::string csp = r.header("content-security-policy");
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
  EXPECT_NE(csp.find("style-src 'self'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("frame-ancestors"), std::string::npos) << "any site may frame the viewer: " << csp;
  EXPECT_EQ(r.header("x-frame-options"), "");
  EXPECT_EQ(r.header("referrer-policy"), "no-referrer");
  EXPECT_EQ(r.body.find("<style"), std::string::npos);
  EXPECT_EQ(r.body.find(" style=\""), std::string::npos);
  EXPECT_NE(r.body.find("/embed-assets/viewer.css"), std::string::npos);
  EXPECT_NE(r.body.find("id=\"help\""), std::string::npos)
      << "the help shows before (and without) the script";
  auto css = srv.get("/embed-assets/viewer.css");
  ASSERT_EQ(css.status, 200);
  EXPECT_NE(css.header("content-type").find("text/css"), std::string::npos);
}

}  // namespace
}  // namespace imago::testing

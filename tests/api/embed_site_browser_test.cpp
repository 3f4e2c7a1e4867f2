// Runs tests/browser/embed_site_test.mjs: an embed token kept to one site, in Debian's chromium
// through playwright-core (no browser download) against a real imagod. The snippet plays on a
// static page of the token's origin (another loopback port) and is refused on a page of a third
// port. Missing node, npm or chromium is a failure, not a skip. IMAGO_SCREENSHOT_DIR, when set,
// receives PNGs of both pages.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "fixtures/fixture.h"
#include "support/browser_tools.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

TEST(EmbedSiteBrowser, TheSnippetPlaysOnItsSiteAndIsRefusedOnAnother) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(tests_dir()) / "browser";
  ASSERT_TRUE(browser_tools_ready(dir.string()));

  TestServer srv;
  auto acct = srv.create_account("pro", 5000, "embed-site");
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

  const char* shots = std::getenv("IMAGO_SCREENSHOT_DIR");
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + srv.url() + "' AGENT_CODE='" + code +
                    "' API_SECRET='" + acct.api_secret + "' " +
                    (shots ? "IMAGO_SCREENSHOT_DIR='" + std::string(shots) + "' " : "") +
                    "timeout 300 node embed_site_test.mjs";
  EXPECT_EQ(run_command(cmd), 0) << "the browser checks failed (see output above)";
}

}  // namespace
}  // namespace imago::testing

// Runs tests/browser/dashboard_test.mjs: Debian's chromium driven by playwright-core (no browser
// download) against a real imagod. Missing node, npm or chromium is a failure, not a skip.
// IMAGO_SCREENSHOT_DIR, when set, receives a PNG of every dashboard page.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "fixtures/fixture.h"
#include "support/browser_tools.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

TEST(DashboardBrowser, SignInKeysDeviceApprovalAgentFromAPhotoAndEveryPage) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(tests_dir()) / "browser";
  ASSERT_TRUE(fs::exists(dir / "package-lock.json")) << dir;
  ASSERT_TRUE(browser_tools_ready(dir.string()));
  const std::string face = "/usr/share/doc/opencv-doc/opencv4/html/face_swapped.jpg";
  ASSERT_TRUE(fs::exists(face)) << "opencv-doc provides the test photo";

  TestServer srv;
  auto acct = srv.create_account("pro", 2000, "browser");
  auto m = srv.admin("POST", "/admin/v1/accounts/" + acct.account_id + "/members",
                     R"({"email": "ada@example.org", "password": "correct horse battery"})");
  ASSERT_EQ(m.status, 201) << m.body;
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + srv.url() +
                    "' IMAGO_EMAIL=ada@example.org IMAGO_PASSWORD='correct horse battery' IMAGO_FACE='" +
                    face + "' timeout 420 node dashboard_test.mjs";
  EXPECT_EQ(run_command(cmd), 0) << "the browser checks failed (see output above)";
}

}  // namespace
}  // namespace imago::testing

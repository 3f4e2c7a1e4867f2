// Runs tests/browser/studio_test.mjs: the agent studio, the agent list and the agent page's
// settings in Debian's chromium (playwright-core, no browser download) against a real imagod.
// Missing node, npm or chromium is a failure, not a skip. IMAGO_SCREENSHOT_DIR, when set, receives
// a PNG of each page at 1280x800 and 390x844.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "fixtures/fixture.h"
#include "support/browser_tools.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

TEST(StudioBrowser, FaceCheckedCropVoicePreviewKnowledgeCreateAndTheAgentList) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(tests_dir()) / "browser";
  ASSERT_TRUE(fs::exists(dir / "package-lock.json")) << dir;
  ASSERT_TRUE(browser_tools_ready(dir.string()));
  const std::string face = "/usr/share/doc/opencv-doc/opencv4/html/face_swapped.jpg";
  const std::string no_face = "/usr/share/doc/opencv-doc/examples/data/fruits.jpg";
  ASSERT_TRUE(fs::exists(face) && fs::exists(no_face)) << "opencv-doc provides the test pictures";

  TestServer srv;
  auto acct = srv.create_account("pro", 2000, "studio");
  auto m = srv.admin("POST", "/admin/v1/accounts/" + acct.account_id + "/members",
                     R"({"email": "nora@example.org", "password": "correct horse battery"})");
  ASSERT_EQ(m.status, 201) << m.body;
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + srv.url() +
                    "' IMAGO_EMAIL=nora@example.org IMAGO_PASSWORD='correct horse battery' IMAGO_FACE='" +
                    face + "' IMAGO_NO_FACE='" + no_face + "' timeout 420 node studio_test.mjs";
  EXPECT_EQ(run_command(cmd), 0) << "the browser checks failed (see output above)";
}

}  // namespace
}  // namespace imago::testing

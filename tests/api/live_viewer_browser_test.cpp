// Runs tests/node/live_viewer_test.mjs: the viewer page in Debian's chromium (playwright-core from
// npm, no browser download) against a real imagod, which this side restarts on the same port when
// the page asks, to check the page reconnects by itself. Missing node or chromium is a failure.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include "fixtures/fixture.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

namespace fs = std::filesystem;

int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(LiveViewerBrowser, PageShowsFramesPlaysSpeechAndReconnects) {
  fs::path dir = fs::path(IMAGO_TESTS_DIR) / "node";
  ASSERT_EQ(run("command -v node >/dev/null 2>&1"), 0)
      << "node is not installed (scripts/setup.sh installs nodejs)";
  ASSERT_TRUE(fs::exists("/usr/bin/chromium")) << "chromium is not installed (scripts/setup.sh installs it)";
  if (!fs::exists(dir / "node_modules" / "playwright-core")) {
    ASSERT_EQ(run("cd '" + dir.string() +
                  "' && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error"),
              0);
  }
  auto s = std::make_unique<TestServer>();
  auto acct = s->create_account("enterprise", 2000);
  auto g = s->post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})",
                   acct.api_secret);
  ASSERT_EQ(g.status, 200);
  std::string code = str(g.json(), "agent_id");
  ASSERT_TRUE(eventually(
      [&] {
        return str(s->get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready";
      },
      120));
  auto e = s->post("/v1/embed-tokens/request", R"({"agent_id":")" + code + R"(","fingerprint":"browser"})",
                   acct.api_secret);
  ASSERT_EQ(e.status, 200);
  std::string token = str(e.json().at("data"), "token");

  std::string sync = make_temp_dir();
  const char* shots = std::getenv("IMAGO_SCREENSHOT_DIR");
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + s->url() + "' AGENT_CODE='" + code +
                    "' EMBED_TOKEN='" + token + "' API_SECRET='" + acct.api_secret + "' SYNC_DIR='" + sync +
                    "' " + (shots ? "SCREENSHOT_DIR='" + std::string(shots) + "' " : "") +
                    "timeout 150 node live_viewer_test.mjs";
  auto node = std::async(std::launch::async, [cmd] { return run(cmd); });

  // When the page is ready, drop every socket by restarting imagod on the same port and data.
  const std::string data_dir = s->data_dir();
  const int port = s->port();
  bool restarted = false;
  std::unique_ptr<TestServer> s2;
  while (node.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (!restarted && fs::exists(fs::path(sync) / "ready_for_drop")) {
      s->stop();
      s2 = std::make_unique<TestServer>(
          data_dir, std::vector<std::string>{"--listen", "127.0.0.1:" + std::to_string(port)},
          std::map<std::string, std::string>{});
      std::ofstream(fs::path(sync) / "restarted") << "1";
      restarted = true;
    }
  }
  EXPECT_EQ(node.get(), 0) << "tests/node/live_viewer_test.mjs failed (its output is above)";
  EXPECT_TRUE(restarted);
  s2.reset();
  fs::remove_all(sync);
}

}  // namespace
}  // namespace imago::testing

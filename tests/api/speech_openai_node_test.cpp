// Runs tests/node/openai_speech_test.mjs (the official `openai` npm client against
// POST /v1/audio/speech) against a real imagod. Missing node/npm is a failure, not a skip.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "support/test_server.h"

namespace imago::testing {
namespace {

int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(SpeechOpenAIClient, OfficialNodeClientWorksForEveryFormat) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(tests_dir()) / "node";
  ASSERT_TRUE(fs::exists(dir / "package-lock.json")) << dir;
  ASSERT_EQ(run("command -v node >/dev/null 2>&1"), 0)
      << "node is not installed (scripts/setup.sh installs nodejs)";
  ASSERT_EQ(run("command -v npm >/dev/null 2>&1"), 0)
      << "npm is not installed (scripts/setup.sh installs npm)";
  ASSERT_TRUE(ensure_node_packages(dir.string())) << "npm ci failed in " << dir;
  TestServer srv;
  auto acct = srv.create_account("enterprise", 0, "openai-client");
  std::string cmd = "cd '" + dir.string() + "' && IMAGO_URL='" + srv.url() + "' IMAGO_API_SECRET='" +
                    acct.api_secret + "' node openai_speech_test.mjs";
  EXPECT_EQ(run(cmd), 0) << "the openai client checks failed (see output above)";
}

}  // namespace
}  // namespace imago::testing

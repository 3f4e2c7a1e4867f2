// The typed TypeScript client (clients/typescript, generated from docs/openapi.yaml) against a real
// imagod: clients/typescript/test/client_test.ts creates a key, uploads a face, generates an agent
// and polls it to ready, synthesizes speech and mints a runtime token. Missing node/npm fails.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/test_server.h"

namespace imago::testing {
namespace {

int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(OpenApiClient, GeneratedTypeScriptClientDrivesTheServer) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(tests_dir()).parent_path() / "clients" / "typescript";
  ASSERT_TRUE(fs::exists(dir / "package-lock.json")) << dir;
  ASSERT_EQ(run("command -v node >/dev/null 2>&1"), 0)
      << "node is not installed (scripts/setup.sh installs nodejs)";
  ASSERT_TRUE(ensure_node_packages(dir.string())) << "npm ci failed in " << dir;
  // Compiled into a directory of this run's own (inside the package, where node finds its
  // node_modules), so parallel runs never share an output.
  fs::create_directories(dir / "dist");
  std::string out = (dir / "dist" / "test-XXXXXX").string();
  ASSERT_NE(mkdtemp(out.data()), nullptr);
  ASSERT_EQ(run("cd '" + dir.string() + "' && node_modules/.bin/tsc -p tsconfig.json --outDir '" + out + "'"),
            0)
      << "the client or its test does not type-check against src/schema.d.ts";
  TestServer srv;
  auto acct = srv.create_account("enterprise", 1000, "typescript-client");
  EXPECT_EQ(run("cd '" + dir.string() + "' && IMAGO_URL='" + srv.url() + "' IMAGO_API_SECRET='" +
                acct.api_secret + "' node '" + out + "/test/client_test.js'"),
            0)
      << "the TypeScript client's checks failed (see output above)";
  fs::remove_all(out);
}

}  // namespace
}  // namespace imago::testing

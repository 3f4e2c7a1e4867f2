// The browser tests' tools (kept out of the test-support library, which benchmarks link
// without GoogleTest).
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "support/test_server.h"

namespace imago::testing {

// node and Debian's chromium present and `dir`'s npm packages installed (ensure_node_packages).
// What is missing is a failure that says how to get it, not a skip.
inline ::testing::AssertionResult browser_tools_ready(const std::string& dir) {
  if (run_command("command -v node >/dev/null 2>&1") != 0)
    return ::testing::AssertionFailure() << "node is not installed (scripts/setup.sh installs nodejs)";
  if (run_command("test -x /usr/bin/chromium") != 0)
    return ::testing::AssertionFailure() << "chromium is not installed (scripts/setup.sh installs it)";
  if (!ensure_node_packages(dir)) return ::testing::AssertionFailure() << "npm ci failed in " << dir;
  return ::testing::AssertionSuccess();
}

}  // namespace imago::testing

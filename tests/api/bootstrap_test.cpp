// The first start on an empty database creates an account and hands its API secret over without
// writing it to the log: with stderr not a terminal (as under a service manager, and here), it goes
// to a 0600 file in the data directory, and the log only names the file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_server.h"

namespace imago::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Bootstrap, FirstAccountSecretGoesToAPrivateFileNeverToTheLog) {
  TestServer s({"--no-bootstrap=false"});
  const std::string file = s.data_dir() + "/bootstrap-api-secret";
  ASSERT_TRUE(std::filesystem::exists(file)) << "no " << file;
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  std::string secret = slurp(file);
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  ASSERT_GE(secret.size(), 20u);
  // It is the real secret of the new account.
  auto me = s.get("/v1/me", secret);
  EXPECT_EQ(me.status, 200) << me.body;

  // Neither the JSON log (stdout) nor stderr (the same file here) holds it, nor any long part of it.
  const std::string log = slurp(s.data_dir() + "/imagod.log");
  ASSERT_NE(log.find("bootstrap_account_created"), std::string::npos) << log;
  EXPECT_EQ(log.find(secret), std::string::npos);
  EXPECT_EQ(log.find(secret.substr(secret.size() - 16)), std::string::npos);
  // The log says where the secret is.
  EXPECT_NE(log.find("\"api_secret_file\":\"" + file + "\""), std::string::npos) << log;
}

}  // namespace
}  // namespace imago::testing

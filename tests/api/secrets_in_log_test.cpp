// Secrets never reach the server's log (stdout, and stderr, which service managers collect with
// it): the first start's API secret, and credentials inside URLs the server fetches.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fixtures/fixture.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The first start on an empty database creates an account and hands its API secret over without
// writing it to the log: with stderr not a terminal (as under a service manager, and here), it goes
// to a 0600 file in the data directory, and the log only names the file.
TEST(SecretsInLog, FirstAccountSecretGoesToAPrivateFileNeverToTheLog) {
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

// A webhook URL often carries a token in its query (and a media URL a signature): a failed
// delivery's error names the URL without it, in the delivery log and in the server's log.
TEST(SecretsInLog, AFailedFetchNamesItsUrlWithoutItsQuery) {
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  const std::string marker = "Hook-Token-Marker-8841";
  auto c =
      s.post("/v1/webhooks",
             boost::json::serialize(boost::json::object{{"url", "http://127.0.0.1:1/hook?token=" + marker}}),
             acct.api_secret);
  ASSERT_EQ(c.status, 200) << c.body;
  const std::string id(c.json().at("data").at("id").as_string());
  ASSERT_EQ(s.post("/v1/webhooks/" + id + "/test", "", acct.api_secret).status, 200);
  std::string deliveries;
  ASSERT_TRUE(eventually(
      [&] {
        deliveries = s.get("/v1/webhooks/" + id + "/deliveries", acct.api_secret).body;
        return deliveries.find("cannot fetch") != std::string::npos;
      },
      30))
      << deliveries;
  EXPECT_EQ(deliveries.find(marker), std::string::npos) << deliveries;
  EXPECT_NE(deliveries.find("127.0.0.1:1/hook?[redacted]"), std::string::npos) << deliveries;
  s.stop();
  const std::string log = slurp(s.data_dir() + "/imagod.log");
  ASSERT_NE(log.find("/v1/webhooks/" + id + "/test"), std::string::npos) << "the request was logged";
  EXPECT_EQ(log.find(marker), std::string::npos);
}

}  // namespace
}  // namespace imago::testing

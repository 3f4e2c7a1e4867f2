// Contract of SecretStore: a value is created once (the first creator wins, also when several
// start at once), read back, and replaced atomically (concurrent updates all take effect, a
// failed update changes nothing). SQLite nodes keep their secrets in files in the data
// directory; PostgreSQL nodes share them in the database.
#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "store/contracts/store_backends.h"
#include "util/random.h"

namespace imago::contracts {
namespace {

class SecretStoreContract : public StoreContract {
 protected:
  void TearDown() override {
    file_store_.reset();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  // The backend's shared store when it has one, else the single node's files (opened on the first
  // call: make that call before starting threads).
  SecretStore& secrets() {
    if (stores().secrets) return *stores().secrets;
    if (!file_store_) {
      char tmpl[] = "/tmp/imago-secrets-XXXXXX";
      dir_ = mkdtemp(tmpl);
      file_store_ = make_file_secret_store(dir_);
    }
    return *file_store_;
  }

 private:
  std::string dir_;
  std::unique_ptr<SecretStore> file_store_;
};

TEST_P(SecretStoreContract, TheFirstValueWinsAndIsReadBack) {
  EXPECT_EQ(secrets().get("keys").status().code(), Code::kNotFound);
  auto first = secrets().get_or_create("keys", "{\"v\":1}");
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, "{\"v\":1}");
  auto second = secrets().get_or_create("keys", "{\"v\":2}");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, "{\"v\":1}");
  EXPECT_EQ(*secrets().get("keys"), "{\"v\":1}");
  EXPECT_EQ(secrets().get("other").status().code(), Code::kNotFound);
}

TEST_P(SecretStoreContract, UpdateReplacesAndAFailedUpdateChangesNothing) {
  ASSERT_TRUE(secrets().get_or_create("keys", "a").ok());
  auto next =
      secrets().update("keys", [](const std::string& cur) -> Result<std::string> { return cur + "b"; });
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_EQ(*next, "ab");
  auto failed = secrets().update(
      "keys", [](const std::string&) -> Result<std::string> { return Status::Invalid("no"); });
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(*secrets().get("keys"), "ab");
  auto missing = secrets().update("none", [](const std::string& c) -> Result<std::string> { return c; });
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
}

TEST_P(SecretStoreContract, ConcurrentCreatorsAllGetTheOneValue) {
  ASSERT_EQ(secrets().get("ring").status().code(), Code::kNotFound);  // opens the store first
  std::vector<std::thread> threads;
  std::vector<std::string> got(8);
  std::atomic<int> errors{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto v = secrets().get_or_create("ring", "value-" + std::to_string(t));
      if (v.ok()) {
        got[static_cast<size_t>(t)] = *v;
      } else {
        ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), 1u);
  EXPECT_EQ(*secrets().get("ring"), got[0]);
}

TEST_P(SecretStoreContract, ConcurrentUpdatesAllTakeEffect) {
  ASSERT_TRUE(secrets().get_or_create("counter", "").ok());
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        auto r = secrets().update("counter",
                                  [](const std::string& cur) -> Result<std::string> { return cur + "x"; });
        if (!r.ok()) ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(secrets().get("counter")->size(), 30u);
}

IMAGO_STORE_CONTRACT(SecretStoreContract);

}  // namespace
}  // namespace imago::contracts

#include "store/contracts/store_backends.h"

#include <cstdlib>
#include <filesystem>

#include "store/postgres/test_postgres.h"
#include "util/random.h"

namespace imago::contracts {

namespace {

// SQLite in a fresh temporary directory.
class SqliteBackend final : public StoreBackend {
 public:
  static Result<std::unique_ptr<StoreBackend>> open(Clock& clock) {
    char tmpl[] = "/tmp/imago-contract-XXXXXX";
    if (!mkdtemp(tmpl)) return Status::Internal("mkdtemp failed");
    auto b = std::make_unique<SqliteBackend>();
    b->dir_ = tmpl;
    auto s = open_stores("sqlite:" + b->dir_ + "/contract.db", clock);
    if (!s.ok()) return s.status();
    b->stores_ = std::move(s).value();
    return std::unique_ptr<StoreBackend>(std::move(b));
  }
  ~SqliteBackend() override {
    stores_ = Stores();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Stores& stores() override { return stores_; }
  Result<Stores> open_another(Clock& clock) override {
    return open_stores("sqlite:" + dir_ + "/contract.db", clock);
  }

 private:
  std::string dir_;
  Stores stores_;
};

// PostgreSQL: a fresh database on the run's throwaway server (store/postgres/test_postgres.h),
// dropped afterwards. Never skipped: without a server the test fails and says why.
class PostgresBackend final : public StoreBackend {
 public:
  static Result<std::unique_ptr<StoreBackend>> open(Clock& clock) {
    auto b = std::make_unique<PostgresBackend>();
    auto s = open_stores(b->db_.url(), clock);
    if (!s.ok()) return s.status();
    b->stores_ = std::move(s).value();
    return std::unique_ptr<StoreBackend>(std::move(b));
  }
  ~PostgresBackend() override { stores_ = Stores(); }  // close the pool before the database is dropped
  Stores& stores() override { return stores_; }
  Result<Stores> open_another(Clock& clock) override { return open_stores(db_.url(), clock); }

 private:
  pg::TestDatabase db_;
  Stores stores_;
};

}  // namespace

std::vector<StoreBackendFactory> contract_backends() {
  return {
      {"sqlite", &SqliteBackend::open},
      {"postgres", &PostgresBackend::open},
  };
}

void StoreContract::SetUp() {
  auto b = GetParam().open(clock_);
  if (!b.ok() && b.status().code() == Code::kUnavailable) GTEST_SKIP() << b.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  backend_ = std::move(b).value();
}

std::string StoreContract::new_account(int64_t credits, Plan plan) {
  KeyMaterial km{"contract-hash-" + random_base62(16), "imago_sk_x", "abcd"};
  auto r = accounts().create_account("acct", plan, credits, "default", km);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->first.id : std::string();
}

int64_t StoreContract::balance(const std::string& account_id) {
  auto b = ledger().balance(account_id);
  EXPECT_TRUE(b.ok()) << b.status().message();
  return b.ok() ? b->total() : -1;
}

}  // namespace imago::contracts

// Store contracts: one test suite per store interface, written once against the interfaces and run
// against every backend (the RocksDB env_test pattern). A backend joins by adding one factory to
// contract_backends() in store_backends.cpp; every TEST_P then runs on it unchanged.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "store/stores.h"
#include "util/clock.h"

namespace imago::contracts {

// A fresh, migrated, empty set of stores for one test; removed again when destroyed.
class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  virtual Stores& stores() = 0;
  // A second, independent set of stores on the same database, as another process or node opens it.
  virtual Result<Stores> open_another(Clock& clock) = 0;
};

struct StoreBackendFactory {
  std::string name;  // test-name suffix: letters, digits and '_' only
  // Opens the stores on `clock` (the test's ManualClock). kUnavailable skips the backend's tests
  // (e.g. no database server configured on this machine).
  std::function<Result<std::unique_ptr<StoreBackend>>(Clock& clock)> open;
};

// Every backend the contracts run against.
std::vector<StoreBackendFactory> contract_backends();

// gtest prints a parameter with this (the backend's name instead of its bytes).
inline void PrintTo(const StoreBackendFactory& f, std::ostream* os) {
  *os << f.name;
}

// The base of every contract suite: a ManualClock, the backend's stores and an account helper.
class StoreContract : public ::testing::TestWithParam<StoreBackendFactory> {
 protected:
  void SetUp() override;
  Stores& stores() { return backend_->stores(); }
  AccountStore& accounts() { return *stores().accounts; }
  LedgerStore& ledger() { return *stores().ledger; }
  AgentStore& agents() { return *stores().agents; }
  JobStore& jobs() { return *stores().jobs; }
  FileStore& files() { return *stores().files; }
  WebhookStore& webhooks() { return *stores().webhooks; }
  VoiceStore& voices() { return *stores().voices; }
  SessionStore& sessions() { return *stores().sessions; }

  // A new account holding `credits` top-up credits.
  std::string new_account(int64_t credits, Plan plan = Plan::kFree);
  int64_t balance(const std::string& account_id);

  ManualClock clock_;
  // See StoreBackend::open_another.
  Result<Stores> open_another() { return backend_->open_another(clock_); }

 private:
  std::unique_ptr<StoreBackend> backend_;
};

}  // namespace imago::contracts

// Runs the TEST_Ps of `suite` (a class derived from StoreContract) on every backend.
#define IMAGO_STORE_CONTRACT(suite)                                                                       \
  INSTANTIATE_TEST_SUITE_P(Backends, suite, ::testing::ValuesIn(::imago::contracts::contract_backends()), \
                           [](const auto& info) { return info.param.name; })

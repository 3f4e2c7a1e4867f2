// The operator's account administration as a domain, without HTTP: creating accounts with their
// first key, plans and limits, credit top-ups, issuing, revoking and rotating keys. The admin API
// (src/api/admin.cpp) parses, calls this and renders the view.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/provisioning.h"
#include "billing/ledger.h"
#include "billing/spend_cap.h"
#include "limits/plan.h"
#include "store/account_store.h"
#include "store/ledger_store.h"

namespace imago {

// What the operator sees of one account.
struct AccountOverview {
  Account account;
  Balance balance;
  std::vector<ApiKey> keys;
  billing::LiveSpend live_spend;
};

class AccountAdmin {
 public:
  AccountAdmin(AccountStore& accounts, LedgerStore& ledger) : accounts_(accounts), ledger_(ledger) {}

  // A new account with `initial_credits` and its first key; `limits` (enterprise only, checked by
  // the caller) replace the plan's defaults.
  Result<CreatedAccount> create(const std::string& name, Plan plan, int64_t initial_credits,
                                const std::optional<PlanLimits>& limits);
  Result<AccountPage> list(int limit, int offset);
  Result<AccountOverview> overview(const std::string& account_id);
  // Sets plan and limits; returns the account as it is now.
  Result<AccountOverview> set_plan(const std::string& account_id, Plan plan,
                                   const std::optional<PlanLimits>& limits);
  // Adds credits; a repeated `idempotency_key` returns the first entry instead of adding again.
  Result<LedgerEntry> top_up(const std::string& account_id, int64_t amount, const std::string& reason,
                             std::string_view idempotency_key);
  Result<IssuedKey> issue_key(const std::string& account_id, const std::string& alias);
  // Any account's key (the operator is not limited to one account).
  Status revoke_key(const std::string& key_id);
  Result<IssuedKey> rotate_key(const std::string& key_id);

 private:
  AccountStore& accounts_;
  LedgerStore& ledger_;
};

}  // namespace imago

#include "auth/account_admin.h"

#include "billing/operations.h"

namespace imago {

Result<CreatedAccount> AccountAdmin::create(const std::string& name, Plan plan, int64_t initial_credits,
                                            const std::optional<PlanLimits>& limits) {
  auto created = create_account_with_key(accounts_, name, plan, initial_credits);
  if (!created.ok()) return created.status();
  if (limits) {
    if (Status st = accounts_.set_plan(created->account.id, plan, limits); !st.ok()) return st;
  }
  return created;
}

Result<AccountPage> AccountAdmin::list(int limit, int offset) {
  return accounts_.list_accounts(limit, offset);
}

Result<AccountOverview> AccountAdmin::overview(const std::string& account_id) {
  AccountOverview out;
  auto a = accounts_.get_account(account_id);
  if (!a.ok()) return a.status();
  out.account = std::move(a).value();
  auto bal = ledger_.balance(account_id);
  if (!bal.ok()) return bal.status();
  out.balance = *bal;
  auto keys = accounts_.list_keys(account_id);
  if (!keys.ok()) return keys.status();
  out.keys = std::move(keys).value();
  auto spend = ledger_.live_spend(account_id);
  if (!spend.ok()) return spend.status();
  out.live_spend = *spend;
  return out;
}

Result<AccountOverview> AccountAdmin::set_plan(const std::string& account_id, Plan plan,
                                               const std::optional<PlanLimits>& limits) {
  if (Status st = accounts_.set_plan(account_id, plan, limits); !st.ok()) return st;
  return overview(account_id);
}

Result<LedgerEntry> AccountAdmin::top_up(const std::string& account_id, int64_t amount,
                                         const std::string& reason, std::string_view idempotency_key) {
  return ledger_.apply(billing::operator_topup(account_id, amount, reason, idempotency_key));
}

Result<IssuedKey> AccountAdmin::issue_key(const std::string& account_id, const std::string& alias) {
  return imago::issue_key(accounts_, account_id, alias);
}

Status AccountAdmin::revoke_key(const std::string& key_id) {
  return accounts_.revoke_key(std::nullopt, key_id);
}

Result<IssuedKey> AccountAdmin::rotate_key(const std::string& key_id) {
  return imago::rotate_key(accounts_, std::nullopt, key_id);
}

}  // namespace imago

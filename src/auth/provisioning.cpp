#include "auth/provisioning.h"

#include "auth/api_key.h"

namespace imago {

Result<CreatedAccount> create_account_with_key(AccountStore& store, const std::string& name, Plan plan,
                                               int64_t initial_credits, const std::string& key_alias) {
  GeneratedKey g = generate_api_key();
  auto r = store.create_account(name, plan, initial_credits, key_alias, g.material);
  if (!r.ok()) return r.status();
  return CreatedAccount{r->first, IssuedKey{r->second, g.secret}};
}

Result<IssuedKey> issue_key(AccountStore& store, const std::string& account_id, const std::string& alias) {
  GeneratedKey g = generate_api_key();
  auto k = store.create_key(account_id, alias, g.material);
  if (!k.ok()) return k.status();
  return IssuedKey{*k, g.secret};
}

Result<IssuedKey> rotate_key(AccountStore& store, const std::optional<std::string>& account_id,
                             const std::string& key_id) {
  GeneratedKey g = generate_api_key();
  auto k = store.rotate_key(account_id, key_id, g.material);
  if (!k.ok()) return k.status();
  return IssuedKey{*k, g.secret};
}

}  // namespace imago

// Issuing secrets: the few operations that generate a key and hand its secret back exactly once.
// Shared by the key endpoints, the admin API and `imagod admin`.
#pragma once
#include <string>

#include "store/account_store.h"

namespace imago {

struct IssuedKey {
  ApiKey key;
  std::string secret;  // shown once
};

struct CreatedAccount {
  Account account;
  IssuedKey first_key;
};

Result<CreatedAccount> create_account_with_key(AccountStore& store, const std::string& name, Plan plan,
                                               int64_t initial_credits,
                                               const std::string& key_alias = "default");
Result<IssuedKey> issue_key(AccountStore& store, const std::string& account_id, const std::string& alias);
Result<IssuedKey> rotate_key(AccountStore& store, const std::optional<std::string>& account_id,
                             const std::string& key_id);

}  // namespace imago

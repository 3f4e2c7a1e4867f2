// Accounts and their API keys. Keys are stored only as SHA-256 hashes; the secret exists in
// memory just long enough to be shown once.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "limits/plan.h"
#include "util/status.h"

namespace imago {

struct Account {
  std::string id;  // "usr_..."
  std::string name;
  Plan plan = Plan::kFree;
  std::optional<PlanLimits> custom_limits;  // enterprise only
  int64_t created_at = 0;                   // Unix seconds
  PlanLimits limits() const { return custom_limits ? *custom_limits : default_limits(plan); }
};

struct ApiKey {
  std::string id;  // "key_..."
  std::string account_id;
  std::string alias;
  std::string prefix;  // first characters of the secret, for recognition
  std::string last4;   // last four characters of the secret
  int64_t created_at = 0;
  std::optional<int64_t> last_used_at;
  std::optional<int64_t> revoked_at;
};

// The parts of a freshly generated key that may be stored.
struct KeyMaterial {
  std::string hash_hex;  // SHA-256 of the secret
  std::string prefix;
  std::string last4;
};

struct AccountPage {
  std::vector<Account> accounts;
  int64_t total = 0;
};

class AccountStore {
 public:
  virtual ~AccountStore() = default;

  // Creates the account, its first key and (when initial_credits > 0) a top-up ledger entry, in
  // one transaction.
  virtual Result<std::pair<Account, ApiKey>> create_account(const std::string& name, Plan plan,
                                                            int64_t initial_credits,
                                                            const std::string& key_alias,
                                                            const KeyMaterial& key) = 0;
  virtual Result<Account> get_account(const std::string& id) = 0;
  virtual Result<AccountPage> list_accounts(int limit, int offset) = 0;
  virtual Result<int64_t> count_accounts() = 0;
  // Custom limits are kept only for enterprise; other plans clear them.
  virtual Status set_plan(const std::string& id, Plan plan, std::optional<PlanLimits> limits) = 0;

  virtual Result<ApiKey> create_key(const std::string& account_id, const std::string& alias,
                                    const KeyMaterial& key) = 0;
  // Active (not revoked) keys, oldest first.
  virtual Result<std::vector<ApiKey>> list_keys(const std::string& account_id) = 0;
  virtual Result<ApiKey> get_key(const std::string& key_id) = 0;
  // Revokes one key. When account_id is set the key must belong to it (else kNotFound).
  virtual Status revoke_key(const std::optional<std::string>& account_id, const std::string& key_id) = 0;
  // Revokes the key and issues its replacement (same alias) in one transaction: no overlap.
  virtual Result<ApiKey> rotate_key(const std::optional<std::string>& account_id, const std::string& key_id,
                                    const KeyMaterial& key) = 0;

  struct KeyOwner {
    Account account;
    ApiKey key;
    std::string stored_hash;  // compared in constant time by the authenticator
    // The key-change counter read in the same statement as the answer. Every write that can
    // change a lookup's answer (revoke, rotate, plan change) adds one to it in its own
    // transaction, so the answer stays current exactly as long as the counter keeps this value.
    uint64_t changes = 0;
    // Set when the answer was remembered rather than read for this call (find_active_key_deferred):
    // it may only be used once a counter value read after the request arrived equals `changes`.
    bool unconfirmed = false;
  };
  // The active key with this hash and its account, read for this call (or remembered under a
  // check that is exact at the time of the call), or kUnauthenticated.
  virtual Result<KeyOwner> find_active_key(const std::string& hash_hex) = 0;
  // Like find_active_key, but the answer may be a remembered one marked `unconfirmed`; the caller
  // then compares `changes` with a key-change counter read by a statement that began after the
  // request arrived (the rate limit's, store/postgres/pg_rate_limiter.h) and calls find_active_key
  // when they differ. Stores that remember nothing answer as find_active_key.
  virtual Result<KeyOwner> find_active_key_deferred(const std::string& hash_hex) {
    return find_active_key(hash_hex);
  }
  // A key-change counter value read from the database: remembered answers read before it moved
  // there are forgotten. Does nothing in stores that remember nothing.
  virtual void saw_key_changes(uint64_t /*value*/) {}
  // The key-change counter, read from the database now.
  virtual Result<uint64_t> key_changes() = 0;
  // Records use; implementations may coalesce writes (precision: one minute).
  virtual void touch_key(const std::string& key_id, int64_t now_s) = 0;

  // True when the database answers (readiness probe).
  virtual Status ping() = 0;
};

}  // namespace imago

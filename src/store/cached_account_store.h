// An AccountStore that remembers find_active_key answers, so an authenticated request costs no
// database read, while revocation stays immediate: every process on the database shares one
// change counter (util/shared_counter.h), which this store increments after each write that can
// change what a key authenticates as (revoke, rotate, plan change, new account or key). A
// remembered answer is used only while the counter still has the value it had before the answer
// was read, and for at most kMaxAgeUs (a safety net for a process that died between committing
// a revocation and incrementing). Only positive answers are kept; unknown keys always reach the
// database (and the failed-auth throttle). See docs/http.md, "Authentication cache".
#pragma once
#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "store/account_store.h"
#include "util/clock.h"
#include "util/shared_counter.h"

namespace imago {

class CachedAccountStore final : public AccountStore {
 public:
  static constexpr int64_t kMaxAgeUs = 2'000'000;
  static constexpr size_t kMaxEntriesPerShard = 4096;

  // `changes` must be the counter every process writing this database increments.
  CachedAccountStore(std::unique_ptr<AccountStore> inner, std::unique_ptr<SharedCounter> changes,
                     const Clock& clock);

  Result<std::pair<Account, ApiKey>> create_account(const std::string& name, Plan plan,
                                                    int64_t initial_credits, const std::string& key_alias,
                                                    const KeyMaterial& key) override;
  Result<Account> get_account(const std::string& id) override { return inner_->get_account(id); }
  Result<AccountPage> list_accounts(int limit, int offset) override {
    return inner_->list_accounts(limit, offset);
  }
  Result<int64_t> count_accounts() override { return inner_->count_accounts(); }
  Status set_plan(const std::string& id, Plan plan, std::optional<PlanLimits> limits) override;
  Result<ApiKey> create_key(const std::string& account_id, const std::string& alias,
                            const KeyMaterial& key) override;
  Result<std::vector<ApiKey>> list_keys(const std::string& account_id) override {
    return inner_->list_keys(account_id);
  }
  Result<ApiKey> get_key(const std::string& key_id) override { return inner_->get_key(key_id); }
  Status revoke_key(const std::optional<std::string>& account_id, const std::string& key_id) override;
  Result<ApiKey> rotate_key(const std::optional<std::string>& account_id, const std::string& key_id,
                            const KeyMaterial& key) override;
  Result<KeyOwner> find_active_key(const std::string& hash_hex) override;
  // last_used_at is not part of a remembered answer: no increment, nothing forgotten.
  void touch_key(const std::string& key_id, int64_t now_s) override { inner_->touch_key(key_id, now_s); }
  Status ping() override { return inner_->ping(); }

 private:
  struct Entry {
    KeyOwner owner;
    uint64_t changes;    // the counter's value before the owner was read
    int64_t read_at_us;  // monotonic
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, Entry> entries;
  };
  Shard& shard_for(const std::string& hash_hex);
  // After a write that committed (whatever its outcome: a failed write may still have changed
  // nothing, and one extra increment only costs a few database reads).
  void changed() { changes_->increment(); }

  std::unique_ptr<AccountStore> inner_;
  std::unique_ptr<SharedCounter> changes_;
  const Clock& clock_;
  // Sharded so the I/O threads that authenticate at once rarely wait on each other.
  std::array<Shard, 16> shards_;
};

}  // namespace imago

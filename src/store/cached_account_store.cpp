#include "store/cached_account_store.h"

#include <functional>

namespace imago {

CachedAccountStore::CachedAccountStore(std::unique_ptr<AccountStore> inner,
                                       std::unique_ptr<SharedCounter> changes, const Clock& clock)
    : inner_(std::move(inner)), changes_(std::move(changes)), clock_(clock) {}

CachedAccountStore::Shard& CachedAccountStore::shard_for(const std::string& hash_hex) {
  return shards_[std::hash<std::string>{}(hash_hex) % shards_.size()];
}

Result<AccountStore::KeyOwner> CachedAccountStore::find_active_key(const std::string& hash_hex) {
  // Read before the database: an answer read after a concurrent write committed but tagged with
  // the counter from before that write's increment is discarded at its next use.
  const uint64_t changes = changes_->load();
  const int64_t now = clock_.monotonic_us();
  Shard& shard = shard_for(hash_hex);
  {
    std::lock_guard lock(shard.mu);
    auto it = shard.entries.find(hash_hex);
    if (it != shard.entries.end()) {
      if (it->second.changes == changes && now - it->second.read_at_us < kMaxAgeUs) return it->second.owner;
      shard.entries.erase(it);
    }
  }
  auto owner = inner_->find_active_key(hash_hex);
  if (!owner.ok()) return owner;
  std::lock_guard lock(shard.mu);
  if (shard.entries.size() >= kMaxEntriesPerShard) shard.entries.clear();  // bounded; refills on use
  shard.entries.insert_or_assign(hash_hex, Entry{*owner, changes, now});
  return owner;
}

Result<std::pair<Account, ApiKey>> CachedAccountStore::create_account(const std::string& name, Plan plan,
                                                                      int64_t initial_credits,
                                                                      const std::string& key_alias,
                                                                      const KeyMaterial& key) {
  auto r = inner_->create_account(name, plan, initial_credits, key_alias, key);
  changed();
  return r;
}

Status CachedAccountStore::set_plan(const std::string& id, Plan plan, std::optional<PlanLimits> limits) {
  Status s = inner_->set_plan(id, plan, limits);
  changed();
  return s;
}

Result<ApiKey> CachedAccountStore::create_key(const std::string& account_id, const std::string& alias,
                                              const KeyMaterial& key) {
  auto r = inner_->create_key(account_id, alias, key);
  changed();
  return r;
}

Status CachedAccountStore::revoke_key(const std::optional<std::string>& account_id,
                                      const std::string& key_id) {
  Status s = inner_->revoke_key(account_id, key_id);
  changed();
  return s;
}

Result<ApiKey> CachedAccountStore::rotate_key(const std::optional<std::string>& account_id,
                                              const std::string& key_id, const KeyMaterial& key) {
  auto r = inner_->rotate_key(account_id, key_id, key);
  changed();
  return r;
}

}  // namespace imago

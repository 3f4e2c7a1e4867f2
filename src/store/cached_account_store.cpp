#include "store/cached_account_store.h"

#include <functional>

namespace imago {

CachedAccountStore::CachedAccountStore(std::unique_ptr<AccountStore> inner,
                                       std::unique_ptr<SharedCounter> changes, const Clock& clock)
    : inner_(std::move(inner)), changes_(std::move(changes)), clock_(clock) {}

CachedAccountStore::CachedAccountStore(std::unique_ptr<AccountStore> inner, const Clock& clock)
    : inner_(std::move(inner)), clock_(clock) {}

CachedAccountStore::Shard& CachedAccountStore::shard_for(const std::string& hash_hex) {
  return shards_[std::hash<std::string>{}(hash_hex) % shards_.size()];
}

std::optional<AccountStore::KeyOwner> CachedAccountStore::recall(const std::string& hash_hex,
                                                                 uint64_t changes, int64_t now) {
  Shard& shard = shard_for(hash_hex);
  std::lock_guard lock(shard.mu);
  auto it = shard.entries.find(hash_hex);
  if (it == shard.entries.end()) return std::nullopt;
  const uint64_t tag = it->second.changes;
  const bool current = changes_ ? tag == changes : tag >= changes;
  if (current && now - it->second.read_at_us < kMaxAgeUs) return it->second.owner;
  shard.entries.erase(it);
  return std::nullopt;
}

void CachedAccountStore::forget(const std::string& hash_hex) {
  Shard& shard = shard_for(hash_hex);
  std::lock_guard lock(shard.mu);
  shard.entries.erase(hash_hex);
}

void CachedAccountStore::remember(Shard& shard, const std::string& hash_hex, const KeyOwner& owner,
                                  uint64_t changes, int64_t now) {
  std::lock_guard lock(shard.mu);
  if (shard.entries.size() >= kMaxEntriesPerShard) shard.entries.clear();  // bounded; refills on use
  shard.entries.insert_or_assign(hash_hex, Entry{owner, changes, now});
}

Result<AccountStore::KeyOwner> CachedAccountStore::find_active_key(const std::string& hash_hex) {
  const int64_t now = clock_.monotonic_us();
  if (!changes_) {
    // PostgreSQL: always read; the answer carries the counter of its own snapshot.
    auto owner = inner_->find_active_key(hash_hex);
    if (!owner.ok()) {
      forget(hash_hex);
      return owner;
    }
    saw_key_changes(owner->changes);
    remember(shard_for(hash_hex), hash_hex, *owner, owner->changes, now);
    return owner;
  }
  // Read before the database: an answer read after a concurrent write committed but tagged with
  // the counter from before that write's increment is discarded at its next use.
  const uint64_t changes = changes_->load();
  if (auto owner = recall(hash_hex, changes, now)) return std::move(*owner);
  auto owner = inner_->find_active_key(hash_hex);
  if (!owner.ok()) return owner;
  remember(shard_for(hash_hex), hash_hex, *owner, changes, now);
  return owner;
}

Result<AccountStore::KeyOwner> CachedAccountStore::find_active_key_deferred(const std::string& hash_hex) {
  if (changes_) return find_active_key(hash_hex);  // SQLite: exact at lookup already
  if (auto owner = recall(hash_hex, seen_.load(std::memory_order_relaxed), clock_.monotonic_us())) {
    owner->unconfirmed = true;  // owner->changes is the tag to confirm
    return std::move(*owner);
  }
  return find_active_key(hash_hex);
}

void CachedAccountStore::saw_key_changes(uint64_t value) {
  if (changes_) return;
  uint64_t cur = seen_.load(std::memory_order_relaxed);
  while (cur < value && !seen_.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
}

}  // namespace imago

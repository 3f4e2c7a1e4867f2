// An AccountStore that remembers find_active_key answers, so an authenticated request costs no
// database read of its own, while revocation stays immediate on every process and node. Each
// answer is tagged with a key-change counter that every writer of the database increments with
// each write that can change what a key authenticates as (revoke, rotate, plan change), and is
// used only while the counter still holds that value. Two counters, by engine:
//
// SQLite (every process on one host): a file mapped into each process (util/shared_counter.h),
// which this store increments after the write commits and reads before each database read. An
// answer is checked at lookup, which is exact then; kMaxAgeUs covers a process that died between
// committing a revocation and incrementing.
//
// PostgreSQL (nodes on other hosts): the key_changes row, incremented by the account store in the
// same transaction as the write (store/sql/account_store.cpp) and read in the same statement as
// each key lookup, so an entry's tag is the counter of the snapshot its answer came from. A node
// cannot read that row for free, so a remembered answer is handed out unconfirmed
// (find_active_key_deferred) and the request's own rate-limit statement, which begins after the
// request arrived, reads the counter too (store/postgres/pg_rate_limiter.cpp). The authenticator
// uses the answer only if that value equals the tag, and otherwise reads the key again
// (auth/authenticator.h, Authenticator::confirm). Ordering: a write W that changes the answer and
// commits after the entry's snapshot leaves the counter above the tag; if W's commit was
// acknowledged before the request was sent, the rate-limit statement's snapshot (taken after the
// request arrived) includes W, so its value differs from the tag and the answer is not used. Equal values
// mean no such write committed between the entry's snapshot and the request's: the answer is what a read in
// the request's own round trip would have returned. find_active_key itself never answers from memory here.
//
// Only positive answers are kept; unknown keys always reach the database (and the failed-auth
// throttle). See docs/http.md, "Authentication cache".
#pragma once
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
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

  // SQLite: `changes` must be the counter every process writing this database increments.
  CachedAccountStore(std::unique_ptr<AccountStore> inner, std::unique_ptr<SharedCounter> changes,
                     const Clock& clock);
  // PostgreSQL: the counter is the database's key_changes row (KeyOwner::changes).
  CachedAccountStore(std::unique_ptr<AccountStore> inner, const Clock& clock);

  // The writes, each followed by changed().
  Result<std::pair<Account, ApiKey>> create_account(const std::string& name, Plan plan,
                                                    int64_t initial_credits, const std::string& key_alias,
                                                    const KeyMaterial& key) override {
    return changed(inner_->create_account(name, plan, initial_credits, key_alias, key));
  }
  Result<Account> get_account(const std::string& id) override { return inner_->get_account(id); }
  Result<AccountPage> list_accounts(int limit, int offset) override {
    return inner_->list_accounts(limit, offset);
  }
  Result<int64_t> count_accounts() override { return inner_->count_accounts(); }
  Status set_plan(const std::string& id, Plan plan, std::optional<PlanLimits> limits) override {
    return changed(inner_->set_plan(id, plan, limits));
  }
  Result<ApiKey> create_key(const std::string& account_id, const std::string& alias,
                            const KeyMaterial& key) override {
    return changed(inner_->create_key(account_id, alias, key));
  }
  Result<std::vector<ApiKey>> list_keys(const std::string& account_id) override {
    return inner_->list_keys(account_id);
  }
  Result<ApiKey> get_key(const std::string& key_id) override { return inner_->get_key(key_id); }
  Status revoke_key(const std::optional<std::string>& account_id, const std::string& key_id) override {
    return changed(inner_->revoke_key(account_id, key_id));
  }
  Result<ApiKey> rotate_key(const std::optional<std::string>& account_id, const std::string& key_id,
                            const KeyMaterial& key) override {
    return changed(inner_->rotate_key(account_id, key_id, key));
  }
  Result<KeyOwner> find_active_key(const std::string& hash_hex) override;
  Result<KeyOwner> find_active_key_deferred(const std::string& hash_hex) override;
  void saw_key_changes(uint64_t value) override;
  Result<uint64_t> key_changes() override { return inner_->key_changes(); }
  // last_used_at is not part of a remembered answer: no increment, nothing forgotten.
  void touch_key(const std::string& key_id, int64_t now_s) override { inner_->touch_key(key_id, now_s); }
  Status ping() override { return inner_->ping(); }

 private:
  struct Entry {
    KeyOwner owner;
    uint64_t changes;    // SQLite: the file counter before the owner was read; PostgreSQL: owner.changes
    int64_t read_at_us;  // monotonic
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, Entry> entries;
  };
  Shard& shard_for(const std::string& hash_hex);
  void forget(const std::string& hash_hex);
  void remember(Shard& shard, const std::string& hash_hex, const KeyOwner& owner, uint64_t changes,
                int64_t now);
  // The remembered answer when it is usable under `changes` (its tag equals it, or on PostgreSQL
  // is not below it), else forgets it.
  std::optional<KeyOwner> recall(const std::string& hash_hex, uint64_t changes, int64_t now);
  // SQLite: after a write that committed (whatever its outcome: a failed write may still have
  // changed nothing, and one extra increment only costs a few database reads). PostgreSQL: the
  // write incremented the database's counter itself. Returns the write's result.
  template <typename R>
  R changed(R result) {
    if (changes_) changes_->increment();
    return result;
  }

  std::unique_ptr<AccountStore> inner_;
  std::unique_ptr<SharedCounter> changes_;  // SQLite's file counter; null on PostgreSQL
  const Clock& clock_;
  // PostgreSQL: the highest counter value this process has seen read from the database. Entries
  // tagged below it are stale and forgotten at their next lookup, before any round trip.
  std::atomic<uint64_t> seen_{0};
  // Sharded so the I/O threads that authenticate at once rarely wait on each other.
  std::array<Shard, 16> shards_;
};

}  // namespace imago

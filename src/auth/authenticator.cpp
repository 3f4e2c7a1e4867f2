#include "auth/authenticator.h"

#include "auth/api_key.h"
#include "util/crypto.h"

namespace imago {

namespace {
constexpr int64_t kTouchPrecisionS = 60;
constexpr std::size_t kMaxRemembered = 100000;
}  // namespace

Authenticator::~Authenticator() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (toucher_.joinable()) toucher_.join();
}

Result<Principal> Authenticator::authenticate(std::string_view secret) {
  if (!api_key_well_formed(secret)) return Status(Code::kUnauthenticated, "malformed key");
  const std::string hash = hash_api_key(secret);
  auto owner = accounts_.find_active_key(hash);
  auto p = principal_of(hash, owner);
  if (p.ok()) touch(p->key_id, clock_.now_s());
  return p;
}

Result<Principal> Authenticator::authenticate_deferred(std::string_view secret,
                                                       std::optional<uint64_t>* unconfirmed) {
  unconfirmed->reset();
  if (!api_key_well_formed(secret)) return Status(Code::kUnauthenticated, "malformed key");
  const std::string hash = hash_api_key(secret);
  auto owner = accounts_.find_active_key_deferred(hash);
  auto p = principal_of(hash, owner);
  if (!p.ok()) return p;
  if (owner->unconfirmed) {
    *unconfirmed = owner->changes;  // stamped once confirmed
  } else {
    touch(p->key_id, clock_.now_s());
  }
  return p;
}

Result<std::optional<Principal>> Authenticator::confirm(std::string_view secret, const Principal& principal,
                                                        uint64_t unconfirmed,
                                                        std::optional<uint64_t> changes_now) {
  if (changes_now) accounts_.saw_key_changes(*changes_now);  // forgets what it outdates
  if (changes_now == unconfirmed) {
    touch(principal.key_id, clock_.now_s());
    return std::optional<Principal>();
  }
  // A key changed somewhere since the answer was read (or the counter could not be read): read
  // this key again. The read begins after the request arrived, so it is as current as the check.
  auto fresh = authenticate(secret);
  if (!fresh.ok()) return fresh.status();
  return std::optional<Principal>(std::move(fresh).value());
}

Result<Principal> Authenticator::principal_of(std::string_view hash,
                                              const Result<AccountStore::KeyOwner>& owner) {
  if (!owner.ok()) return owner.status();
  // The index lookup found the row; the final equality check runs in constant time so no code
  // path compares secret-derived bytes with an early exit.
  if (!constant_time_equal(owner->stored_hash, hash)) {
    return Status(Code::kUnauthenticated, "unknown key");
  }
  Principal p;
  p.account_id = owner->account.id;
  p.account_name = owner->account.name;
  p.key_id = owner->key.id;
  p.key_alias = owner->key.alias;
  p.plan = owner->account.plan;
  p.custom_limits = owner->account.custom_limits;
  return p;
}

void Authenticator::touch(const std::string& key_id, int64_t now_s) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    auto [it, fresh] = last_touch_.try_emplace(key_id, now_s);
    if (!fresh) {
      if (now_s - it->second < kTouchPrecisionS) return;  // the common case: nothing to do
      it->second = now_s;
    }
    if (last_touch_.size() > kMaxRemembered) last_touch_.clear();  // bounded; costs a few writes
    pending_.emplace_back(key_id, now_s);
    if (!toucher_.joinable()) toucher_ = std::thread([this] { touch_loop(); });
  }
  cv_.notify_all();  // the writer, and flush_touches() waiters which share the condition
}

void Authenticator::touch_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stopping, everything written
    std::vector<std::pair<std::string, int64_t>> batch;
    batch.swap(pending_);
    writing_ = batch.size();
    lock.unlock();
    for (const auto& [key_id, at] : batch) accounts_.touch_key(key_id, at);
    lock.lock();
    writing_ = 0;
    cv_.notify_all();
  }
}

void Authenticator::flush_touches() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return (pending_.empty() && writing_ == 0) || !toucher_.joinable(); });
}

}  // namespace imago

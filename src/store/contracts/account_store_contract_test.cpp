// Contract of AccountStore: keys are found by hash, revoked and rotated without overlap; plans keep
// custom limits only for enterprise.
#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

KeyMaterial km(const std::string& h) {
  return KeyMaterial{h, "imago_sk_ab", "wxyz"};
}

class AccountStoreContract : public StoreContract {};

TEST_P(AccountStoreContract, CreateFindRevokeRotate) {
  auto created = accounts().create_account("Ada", Plan::kPro, 0, "default", km("h1"));
  ASSERT_TRUE(created.ok()) << created.status().message();
  const auto& [acct, key] = created.value();
  EXPECT_EQ(acct.id.substr(0, 4), "usr_");

  auto found = accounts().find_active_key("h1");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->account.id, acct.id);
  EXPECT_EQ(found->account.plan, Plan::kPro);
  EXPECT_EQ(found->key.alias, "default");

  auto rotated = accounts().rotate_key(acct.id, key.id, km("h2"));
  ASSERT_TRUE(rotated.ok());
  EXPECT_EQ(rotated->alias, "default");
  EXPECT_NE(rotated->id, key.id);
  EXPECT_EQ(accounts().find_active_key("h1").status().code(), Code::kUnauthenticated);
  EXPECT_TRUE(accounts().find_active_key("h2").ok());

  // Another account cannot revoke this key.
  auto other = accounts().create_account("Bob", Plan::kFree, 0, "default", km("h3"));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(accounts().revoke_key(other->first.id, rotated->id).code(), Code::kNotFound);
  EXPECT_TRUE(accounts().revoke_key(acct.id, rotated->id).ok());
  EXPECT_EQ(accounts().find_active_key("h2").status().code(), Code::kUnauthenticated);
  EXPECT_TRUE(accounts().list_keys(acct.id)->empty());
}

TEST_P(AccountStoreContract, PlanChangeKeepsCustomLimitsOnlyForEnterprise) {
  auto a = accounts().create_account("Ent", Plan::kFree, 0, "default", km("e1")).value().first;
  ASSERT_TRUE(accounts().set_plan(a.id, Plan::kEnterprise, PlanLimits{1, 2, 3}).ok());
  auto got = accounts().get_account(a.id).value();
  ASSERT_TRUE(got.custom_limits.has_value());
  EXPECT_EQ(got.limits().read_per_min, 3);
  ASSERT_TRUE(accounts().set_plan(a.id, Plan::kPro, PlanLimits{1, 2, 3}).ok());
  got = accounts().get_account(a.id).value();
  EXPECT_FALSE(got.custom_limits.has_value());
  EXPECT_EQ(got.limits().read_per_min, 720);
  EXPECT_EQ(accounts().set_plan("usr_missing", Plan::kPro, std::nullopt).code(), Code::kNotFound);
}

// Authentication may be answered from memory (store/cached_account_store.h), but a revocation or
// plan change made by another process or node is seen by the very next lookup.
TEST_P(AccountStoreContract, ChangesByAnotherProcessAreSeenByTheNextLookup) {
  auto other = open_another();
  ASSERT_TRUE(other.ok()) << other.status().message();
  auto [a, k] = accounts().create_account("Ada", Plan::kFree, 0, "default", km("x1")).value();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(accounts().find_active_key("x1").ok());  // warm

  ASSERT_TRUE(other->accounts->set_plan(a.id, Plan::kEnterprise, PlanLimits{7, 8, 9}).ok());
  auto found = accounts().find_active_key("x1");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->account.plan, Plan::kEnterprise);
  EXPECT_EQ(found->account.limits().read_per_min, 9);

  auto rotated = other->accounts->rotate_key(a.id, k.id, km("x2"));
  ASSERT_TRUE(rotated.ok());
  EXPECT_EQ(accounts().find_active_key("x1").status().code(), Code::kUnauthenticated);
  ASSERT_TRUE(accounts().find_active_key("x2").ok());
  ASSERT_TRUE(accounts().find_active_key("x2").ok());
  ASSERT_TRUE(other->accounts->revoke_key(std::nullopt, rotated->id).ok());
  EXPECT_EQ(accounts().find_active_key("x2").status().code(), Code::kUnauthenticated);
  // And in this process's own store, at once too.
  auto k3 = accounts().create_key(a.id, "second", km("x3"));
  ASSERT_TRUE(k3.ok());
  ASSERT_TRUE(other->accounts->find_active_key("x3").ok());
  ASSERT_TRUE(accounts().revoke_key(a.id, k3->id).ok());
  EXPECT_EQ(other->accounts->find_active_key("x3").status().code(), Code::kUnauthenticated);
}

// What the authenticator does with a deferred lookup (auth/authenticator.h): a remembered answer
// is used only when the key-change counter read by a later statement (the request's rate-limit
// statement on PostgreSQL; key_changes() here) equals the counter read with the answer.
Result<AccountStore::KeyOwner> confirmed_lookup(AccountStore& store, const std::string& hash) {
  auto owner = store.find_active_key_deferred(hash);
  if (!owner.ok() || !owner->unconfirmed) return owner;
  auto now = store.key_changes();
  if (!now.ok()) return now.status();
  store.saw_key_changes(*now);
  if (*now == owner->changes) return owner;
  return store.find_active_key(hash);
}

// The same changes by another process or node, seen through deferred lookups: on PostgreSQL the
// account store answers these from memory, so this is the cache under test there.
TEST_P(AccountStoreContract, DeferredLookupsSeeChangesByAnotherProcessOnceConfirmed) {
  auto other = open_another();
  ASSERT_TRUE(other.ok()) << other.status().message();
  auto [a, k] = accounts().create_account("Ada", Plan::kFree, 0, "default", km("y1")).value();
  ASSERT_TRUE(accounts().find_active_key("y1").ok());  // read, and remembered where a store does
  auto warm = accounts().find_active_key_deferred("y1");
  ASSERT_TRUE(warm.ok());
  if (GetParam().name == "postgres") {
    EXPECT_TRUE(warm->unconfirmed);                       // answered from memory
    EXPECT_EQ(warm->changes, *accounts().key_changes());  // and it would be confirmed
  }

  ASSERT_TRUE(other->accounts->set_plan(a.id, Plan::kEnterprise, PlanLimits{7, 8, 9}).ok());
  auto stale = accounts().find_active_key_deferred("y1");
  ASSERT_TRUE(stale.ok());
  // A remembered answer from before the change cannot pass the check.
  if (stale->unconfirmed) {
    EXPECT_NE(stale->changes, *accounts().key_changes());
  }
  auto found = confirmed_lookup(accounts(), "y1");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->account.plan, Plan::kEnterprise);
  EXPECT_EQ(found->account.limits().read_per_min, 9);
  ASSERT_TRUE(confirmed_lookup(accounts(), "y1").ok());  // remembered again

  auto rotated = other->accounts->rotate_key(a.id, k.id, km("y2"));
  ASSERT_TRUE(rotated.ok());
  EXPECT_EQ(confirmed_lookup(accounts(), "y1").status().code(), Code::kUnauthenticated);
  ASSERT_TRUE(confirmed_lookup(accounts(), "y2").ok());
  ASSERT_TRUE(confirmed_lookup(accounts(), "y2").ok());
  ASSERT_TRUE(other->accounts->revoke_key(std::nullopt, rotated->id).ok());
  EXPECT_EQ(confirmed_lookup(accounts(), "y2").status().code(), Code::kUnauthenticated);
  // And the other way round, from this process's own store.
  auto k3 = accounts().create_key(a.id, "second", km("y3"));
  ASSERT_TRUE(k3.ok());
  ASSERT_TRUE(confirmed_lookup(*other->accounts, "y3").ok());
  ASSERT_TRUE(confirmed_lookup(*other->accounts, "y3").ok());
  ASSERT_TRUE(accounts().revoke_key(a.id, k3->id).ok());
  EXPECT_EQ(confirmed_lookup(*other->accounts, "y3").status().code(), Code::kUnauthenticated);
}

// The counter moves with every write that can change a lookup's answer, in the write's own
// transaction, and not with last-used stamps.
TEST_P(AccountStoreContract, KeyChangesCountRevokeRotateAndPlanChangesButNotStamps) {
  auto [a, k] = accounts().create_account("C", Plan::kFree, 0, "default", km("c1")).value();
  auto changes = [&] { return accounts().key_changes().value(); };
  const uint64_t start = changes();
  accounts().touch_key(k.id, 1000);
  EXPECT_EQ(changes(), start);
  ASSERT_TRUE(accounts().set_plan(a.id, Plan::kPro, std::nullopt).ok());
  EXPECT_EQ(changes(), start + 1);
  auto rotated = accounts().rotate_key(a.id, k.id, km("c2"));
  ASSERT_TRUE(rotated.ok());
  EXPECT_EQ(changes(), start + 2);
  ASSERT_TRUE(accounts().revoke_key(a.id, rotated->id).ok());
  EXPECT_EQ(changes(), start + 3);
  // Writes that fail change nothing, and count nothing.
  EXPECT_EQ(accounts().revoke_key(a.id, rotated->id).code(), Code::kNotFound);
  EXPECT_EQ(accounts().set_plan("usr_missing", Plan::kPro, std::nullopt).code(), Code::kNotFound);
  EXPECT_EQ(changes(), start + 3);
  // The answer carries the counter of its own read.
  auto k4 = accounts().create_key(a.id, "fourth", km("c4"));
  ASSERT_TRUE(k4.ok());
  EXPECT_EQ(accounts().find_active_key("c4")->changes, changes());
}

TEST_P(AccountStoreContract, TouchRecordsLastUse) {
  auto [a, k] = accounts().create_account("T", Plan::kFree, 0, "default", km("t1")).value();
  accounts().touch_key(k.id, 1000);
  EXPECT_EQ(accounts().get_key(k.id)->last_used_at.value_or(0), 1000);
}

TEST_P(AccountStoreContract, DuplicateKeyHashIsAConflictNotAnInternalError) {
  ASSERT_TRUE(accounts().create_account("A", Plan::kFree, 0, "default", km("dup")).ok());
  auto again = accounts().create_account("B", Plan::kFree, 0, "default", km("dup"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Code::kConflict);
  EXPECT_EQ(*accounts().count_accounts(), 1);
}

IMAGO_STORE_CONTRACT(AccountStoreContract);

}  // namespace
}  // namespace imago::contracts

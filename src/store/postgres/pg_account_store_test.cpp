#include "store/postgres/pg_stores.h"

#include <gtest/gtest.h>

#include "store/postgres/test_db.h"

namespace imago::pg {
namespace {

KeyMaterial km(const std::string& h) { return KeyMaterial{h, "imago_sk_ab", "wxyz"}; }

TEST(AccountStore, CreateFindRevokeRotate) {
  ManualClock clock;
  TestDb tdb;
  auto store = make_account_store(tdb.db(), clock);
  auto created = store->create_account("Ada", Plan::kPro, 0, "default", km("h1"));
  ASSERT_TRUE(created.ok()) << created.status().message();
  const auto& [acct, key] = created.value();
  EXPECT_EQ(acct.id.substr(0, 4), "usr_");

  auto found = store->find_active_key("h1");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->account.id, acct.id);
  EXPECT_EQ(found->account.plan, Plan::kPro);
  EXPECT_EQ(found->key.alias, "default");

  auto rotated = store->rotate_key(acct.id, key.id, km("h2"));
  ASSERT_TRUE(rotated.ok());
  EXPECT_EQ(rotated->alias, "default");
  EXPECT_NE(rotated->id, key.id);
  EXPECT_EQ(store->find_active_key("h1").status().code(), Code::kUnauthenticated);
  EXPECT_TRUE(store->find_active_key("h2").ok());

  // Another account cannot revoke this key.
  auto other = store->create_account("Bob", Plan::kFree, 0, "default", km("h3"));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(store->revoke_key(other->first.id, rotated->id).code(), Code::kNotFound);
  EXPECT_TRUE(store->revoke_key(acct.id, rotated->id).ok());
  EXPECT_EQ(store->find_active_key("h2").status().code(), Code::kUnauthenticated);
  EXPECT_TRUE(store->list_keys(acct.id)->empty());
}

TEST(AccountStore, PlanChangeKeepsCustomLimitsOnlyForEnterprise) {
  ManualClock clock;
  TestDb tdb;
  auto store = make_account_store(tdb.db(), clock);
  auto a = store->create_account("Ent", Plan::kFree, 0, "default", km("e1")).value().first;
  ASSERT_TRUE(store->set_plan(a.id, Plan::kEnterprise, PlanLimits{1, 2, 3}).ok());
  auto got = store->get_account(a.id).value();
  ASSERT_TRUE(got.custom_limits.has_value());
  EXPECT_EQ(got.limits().read_per_min, 3);
  ASSERT_TRUE(store->set_plan(a.id, Plan::kPro, PlanLimits{1, 2, 3}).ok());
  got = store->get_account(a.id).value();
  EXPECT_FALSE(got.custom_limits.has_value());
  EXPECT_EQ(got.limits().read_per_min, 720);
  EXPECT_EQ(store->set_plan("usr_missing", Plan::kPro, std::nullopt).code(), Code::kNotFound);
}

TEST(AccountStore, TouchRecordsLastUse) {
  ManualClock clock;
  TestDb tdb;
  auto store = make_account_store(tdb.db(), clock);
  auto [a, k] = store->create_account("T", Plan::kFree, 0, "default", km("t1")).value();
  store->touch_key(k.id, 1000);
  EXPECT_EQ(store->get_key(k.id)->last_used_at.value_or(0), 1000);
}

}  // namespace
}  // namespace imago::pg

// The operator's account administration without HTTP: real stores (SQLite in a temporary
// directory).
#include "auth/account_admin.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "store/stores.h"
#include "util/clock.h"

namespace imago {
namespace {

class AccountAdminTest : public ::testing::Test {
 protected:
  AccountAdminTest() {
    char tmpl[] = "/tmp/imago-admin-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto st = open_stores("sqlite:" + dir_ + "/db", clock_);
    EXPECT_TRUE(st.ok()) << st.status().message();
    stores_ = std::move(st).value();
    admin_ = std::make_unique<AccountAdmin>(*stores_.accounts, *stores_.ledger);
  }
  ~AccountAdminTest() override {
    admin_.reset();
    stores_ = Stores();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string dir_;
  ManualClock clock_;
  Stores stores_;
  std::unique_ptr<AccountAdmin> admin_;
};

TEST_F(AccountAdminTest, CreateGivesAFirstKeyCreditsAndCustomLimits) {
  PlanLimits limits = default_limits(Plan::kEnterprise);
  limits.read_per_min = 12345;
  auto c = admin_->create("Acme", Plan::kEnterprise, 500, limits);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->first_key.secret.empty());
  auto o = admin_->overview(c->account.id);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->account.name, "Acme");
  EXPECT_EQ(o->account.plan, Plan::kEnterprise);
  ASSERT_TRUE(o->account.custom_limits.has_value());
  EXPECT_EQ(o->account.limits().read_per_min, 12345);
  EXPECT_EQ(o->balance.total(), 500);
  ASSERT_EQ(o->keys.size(), 1u);
  EXPECT_EQ(o->keys[0].id, c->first_key.key.id);
  EXPECT_FALSE(o->live_spend.cap.effective().has_value());

  auto plain = admin_->create("Plain", Plan::kPro, 0, std::nullopt);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(admin_->overview(plain->account.id)->account.custom_limits.has_value());
  auto page = admin_->list(10, 0);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 2);
}

TEST_F(AccountAdminTest, SetPlanReturnsTheAccountAsItIsNow) {
  auto c = admin_->create("Acme", Plan::kFree, 0, std::nullopt);
  ASSERT_TRUE(c.ok());
  auto o = admin_->set_plan(c->account.id, Plan::kBusiness, std::nullopt);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->account.plan, Plan::kBusiness);
  EXPECT_EQ(admin_->set_plan("usr_missing", Plan::kPro, std::nullopt).status().code(), Code::kNotFound);
  EXPECT_EQ(admin_->overview("usr_missing").status().code(), Code::kNotFound);
}

TEST_F(AccountAdminTest, TopUpIsIdempotentUnderItsKey) {
  auto c = admin_->create("Acme", Plan::kFree, 0, std::nullopt);
  ASSERT_TRUE(c.ok());
  auto first = admin_->top_up(c->account.id, 100, "invoice 7", "idem-1");
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->balance_after, 100);
  auto again = admin_->top_up(c->account.id, 100, "invoice 7", "idem-1");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, first->id);
  EXPECT_EQ(admin_->overview(c->account.id)->balance.total(), 100);
  ASSERT_TRUE(admin_->top_up(c->account.id, 50, "top-up", "").ok());
  EXPECT_EQ(admin_->overview(c->account.id)->balance.total(), 150);
}

TEST_F(AccountAdminTest, KeysAreIssuedRotatedAndRevoked) {
  auto c = admin_->create("Acme", Plan::kFree, 0, std::nullopt);
  ASSERT_TRUE(c.ok());
  auto k = admin_->issue_key(c->account.id, "ci");
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_EQ(k->key.alias, "ci");
  auto r = admin_->rotate_key(k->key.id);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->key.id, k->key.id);
  EXPECT_NE(r->secret, k->secret);
  ASSERT_TRUE(admin_->revoke_key(r->key.id).ok());
  for (const auto& key : admin_->overview(c->account.id)->keys)
    EXPECT_NE(key.id, r->key.id);  // active keys only
  EXPECT_EQ(admin_->revoke_key("key_missing").code(), Code::kNotFound);
}

}  // namespace
}  // namespace imago

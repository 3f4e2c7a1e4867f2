#include "auth/device_login.h"

#include <gtest/gtest.h>

#include "store/sql/sql_stores.h"
#include "store/sqlite/test_db.h"
#include "util/base64.h"
#include "util/crypto.h"

namespace imago {
namespace {

struct DeviceFixture : ::testing::Test {
  sqlite::TestDb db;
  ManualClock clock;
  std::unique_ptr<AccountStore> accounts = sql::make_account_store(db.db(), clock);
  std::unique_ptr<DeviceGrantStore> grants = sql::make_device_grant_store(db.db());
  DeviceLogin login{*grants, *accounts, clock};
  std::string account_id = create_account_with_key(*accounts, "acme", Plan::kPro, 0).value().account.id;
};

TEST(DeviceLoginCodes, UserCodeNormalization) {
  EXPECT_EQ(normalize_user_code("wdjb-mjht"), "WDJBMJHT");
  EXPECT_EQ(normalize_user_code(" WDJB MJHT "), "WDJBMJHT");
  EXPECT_TRUE(check_hostname("build-box.local").ok());
  EXPECT_FALSE(check_hostname("").ok());
  EXPECT_FALSE(check_hostname("evil host").ok());
}

TEST_F(DeviceFixture, DeviceFlowPendingSlowDownApprovedThenSpent) {
  auto d = login.start_device("laptop");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->user_code.size(), 9u);
  EXPECT_EQ(d->user_code[4], '-');
  EXPECT_EQ(d->interval, 5);
  EXPECT_EQ(login.poll_device(d->device_code).error, "authorization_pending");
  auto fast = login.poll_device(d->device_code);
  EXPECT_EQ(fast.error, "slow_down");
  EXPECT_EQ(fast.interval, 10);
  clock.advance_seconds(10);
  EXPECT_EQ(login.poll_device(d->device_code).error, "authorization_pending");
  ASSERT_TRUE(login.decide_user_code(d->user_code, true, account_id, "mem_x").ok());
  EXPECT_EQ(login.decide_user_code(d->user_code, true, account_id, "mem_x").status().code(), Code::kNotFound);
  clock.advance_seconds(10);
  auto t = login.poll_device(d->device_code);
  ASSERT_TRUE(t.key.has_value()) << t.error;
  EXPECT_EQ(t.key->key.alias, "cli@laptop");
  EXPECT_EQ(t.key->key.account_id, account_id);
  EXPECT_EQ(grants->device_key_ids(account_id).value(), std::vector<std::string>{t.key->key.id});
  clock.advance_seconds(10);
  EXPECT_EQ(login.poll_device(d->device_code).error, "invalid_grant");
  EXPECT_EQ(login.poll_device("nonsense").error, "invalid_grant");
}

TEST_F(DeviceFixture, DeniedAndExpired) {
  auto d = login.start_device("a");
  ASSERT_TRUE(login.decide_user_code(d->user_code, false, account_id, "m").ok());
  EXPECT_EQ(login.poll_device(d->device_code).error, "access_denied");
  auto e = login.start_device("b");
  clock.advance_seconds(601);
  EXPECT_EQ(login.poll_device(e->device_code).error, "expired_token");
  EXPECT_EQ(login.decide_user_code(e->user_code, true, account_id, "m").status().code(), Code::kNotFound);
}

TEST_F(DeviceFixture, BrowserCodeNeedsTheVerifierAndWorksOnce) {
  const std::string verifier = std::string(50, 'v');
  const std::string challenge = base64url_encode(sha256(verifier));
  EXPECT_FALSE(login.start_browser("short", "host", account_id, "m").ok());
  auto code = login.start_browser(challenge, "host", account_id, "m");
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(login.redeem_browser(*code, std::string(50, 'w')).error, "invalid_grant");
  auto t = login.redeem_browser(*code, verifier);
  ASSERT_TRUE(t.key.has_value()) << t.error;
  EXPECT_EQ(t.key->key.alias, "cli@host");
  EXPECT_EQ(login.redeem_browser(*code, verifier).error, "invalid_grant");
  auto late = login.start_browser(challenge, "host", account_id, "m");
  clock.advance_seconds(121);
  EXPECT_EQ(login.redeem_browser(*late, verifier).error, "expired_token");
}

}  // namespace
}  // namespace imago

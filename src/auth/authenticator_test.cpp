#include "auth/authenticator.h"

#include <gtest/gtest.h>

#include "auth/provisioning.h"
#include "store/cached_account_store.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/test_db.h"

namespace imago {
namespace {

class AuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto a = create_account_with_key(*accounts, "acme", Plan::kPro, 0);
    ASSERT_TRUE(a.ok()) << a.status().message();
    secret = a->first_key.secret;
    key_id = a->first_key.key.id;
  }
  sqlite::TestDb db;
  ManualClock clock;
  std::unique_ptr<AccountStore> accounts = sql::make_account_store(db.db(), clock);
  std::string secret, key_id;
};

TEST_F(AuthenticatorTest, RevocationIsRefusedOnTheVeryNextCall) {
  Authenticator auth(*accounts, clock);
  auto p = auth.authenticate(secret);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->key_id, key_id);
  ASSERT_TRUE(accounts->revoke_key(std::nullopt, key_id).ok());
  auto again = auth.authenticate(secret);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Code::kUnauthenticated);
}

// PostgreSQL's arrangement (remembered answers confirmed by the database's key-change counter, read
// by the request's rate-limit statement), on SQLite's copy of the same counter table. `accounts`
// plays another node writing the database.
TEST_F(AuthenticatorTest, DeferredAnswersStandOnlyWhileTheCounterReadAfterTheRequestIsUnchanged) {
  CachedAccountStore cached(sql::make_account_store(db.db(), clock), clock);
  Authenticator auth(cached, clock);
  auto counter_now = [&] { return accounts->key_changes().value(); };
  std::optional<uint64_t> unconfirmed;
  ASSERT_TRUE(auth.authenticate_deferred(secret, &unconfirmed).ok());
  EXPECT_FALSE(unconfirmed);  // read from the database
  auto p = auth.authenticate_deferred(secret, &unconfirmed);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(unconfirmed);  // from memory
  auto same = auth.confirm(secret, *p, *unconfirmed, counter_now());
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(*same);  // stands

  ASSERT_TRUE(accounts->set_plan(p->account_id, Plan::kEnterprise, PlanLimits{1, 2, 3}).ok());
  p = auth.authenticate_deferred(secret, &unconfirmed);  // nothing seen yet: still from memory
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(unconfirmed);
  EXPECT_EQ(p->plan, Plan::kPro);
  auto fresh = auth.confirm(secret, *p, *unconfirmed, counter_now());
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE(*fresh);  // read again
  EXPECT_EQ((*fresh)->plan, Plan::kEnterprise);

  p = auth.authenticate_deferred(secret, &unconfirmed);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(unconfirmed);
  // Without a counter (the limiter could not reach the database) the key is read again.
  auto unread = auth.confirm(secret, *p, *unconfirmed, std::nullopt);
  ASSERT_TRUE(unread.ok());
  EXPECT_TRUE(*unread);
  ASSERT_TRUE(accounts->revoke_key(std::nullopt, key_id).ok());
  p = auth.authenticate_deferred(secret, &unconfirmed);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(unconfirmed);
  auto refused = auth.confirm(secret, *p, *unconfirmed, counter_now());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnauthenticated);
  // Once a newer counter was seen, the stale answer is not handed out at all.
  EXPECT_EQ(auth.authenticate_deferred(secret, &unconfirmed).status().code(), Code::kUnauthenticated);
}

TEST_F(AuthenticatorTest, LastUsedIsStampedInTheBackgroundOncePerMinute) {
  Authenticator auth(*accounts, clock);
  ASSERT_TRUE(auth.authenticate(secret).ok());
  auth.flush_touches();
  const int64_t first = clock.now_s();
  EXPECT_EQ(accounts->get_key(key_id)->last_used_at.value_or(0), first);
  clock.advance_seconds(30);  // within the minute: no new stamp
  ASSERT_TRUE(auth.authenticate(secret).ok());
  auth.flush_touches();
  EXPECT_EQ(accounts->get_key(key_id)->last_used_at.value_or(0), first);
  clock.advance_seconds(31);
  ASSERT_TRUE(auth.authenticate(secret).ok());
  auth.flush_touches();
  EXPECT_EQ(accounts->get_key(key_id)->last_used_at.value_or(0), first + 61);
}

TEST_F(AuthenticatorTest, PendingStampIsWrittenOnDestruction) {
  {
    Authenticator auth(*accounts, clock);
    ASSERT_TRUE(auth.authenticate(secret).ok());
  }
  EXPECT_EQ(accounts->get_key(key_id)->last_used_at.value_or(0), clock.now_s());
}

TEST_F(AuthenticatorTest, MalformedAndUnknownKeysAreUnauthenticated) {
  Authenticator auth(*accounts, clock);
  EXPECT_EQ(auth.authenticate("nope").status().code(), Code::kUnauthenticated);
  std::string other = secret;
  other[12] = other[12] == 'a' ? 'b' : 'a';  // checksum no longer matches
  EXPECT_EQ(auth.authenticate(other).status().code(), Code::kUnauthenticated);
}

}  // namespace
}  // namespace imago

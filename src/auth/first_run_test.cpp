#include "auth/first_run.h"

#include <gtest/gtest.h>

#include "auth/provisioning.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/test_db.h"

namespace imago {
namespace {

struct FirstRunTest : ::testing::Test {
  sqlite::TestDb db;
  ManualClock clock;
  std::unique_ptr<AccountStore> accounts = sql::make_account_store(db.db(), clock);
  std::unique_ptr<MemberStore> members = sql::make_member_store(db.db(), clock);
  std::unique_ptr<WindowCounter> windows = make_memory_window_counter(clock);
  MemberAuth auth{*members, *accounts, *windows, clock};
  std::unique_ptr<TokenKeyring> keys = TokenKeyring::in_memory({"rk_test", std::string(32, 'k')});
  FirstRun first_run{*keys, *members, auth, clock};
  std::string account_id = create_account_with_key(*accounts, "owner", Plan::kPro, 0).value().account.id;
};

TEST_F(FirstRunTest, TheLinkMakesTheFirstMemberOnceAndSignsItIn) {
  const std::string token = mint_first_run_token(*keys, account_id, clock.now_s());
  auto in = first_run.claim(token, "Owner@Example.org", "correct horse battery", "127.0.0.1");
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(in->member.account_id, account_id);
  EXPECT_EQ(in->member.email, "owner@example.org");
  EXPECT_TRUE(auth.authenticate(in->token, "GET", "").ok());
  // Used: the same link, with any email, makes no second member.
  auto again = first_run.claim(token, "mallory@example.org", "another password!", "127.0.0.1");
  EXPECT_EQ(again.status().code(), Code::kConflict);
  EXPECT_EQ(members->list_members(account_id)->size(), 1u);
}

TEST_F(FirstRunTest, OnlyAValidUnexpiredFirstRunTokenIsTaken) {
  const std::string token = mint_first_run_token(*keys, account_id, clock.now_s(), 3600);
  // A weak password changes nothing: the link still works afterwards.
  EXPECT_EQ(first_run.claim(token, "owner@example.org", "short", "127.0.0.1").status().code(),
            Code::kInvalidArgument);
  EXPECT_TRUE(members->list_members(account_id)->empty());
  // A runtime token of the same keys is not a first-run token.
  TokenClaims other;
  other.api_key_id = "key_1";
  other.subject = account_id;
  other.audience = std::string(kRuntimeAudience);
  other.issued_at = clock.now_s();
  other.expires_at = clock.now_s() + 600;
  other.token_id = "jti_1";
  EXPECT_EQ(first_run
                .claim(sign_token(keys->current(), other), "owner@example.org", "correct horse battery",
                       "127.0.0.1")
                .status()
                .code(),
            Code::kUnauthenticated);
  // Another key's signature, and a tampered token, are refused.
  auto stranger = TokenKeyring::in_memory({"rk_other", std::string(32, 'x')});
  EXPECT_EQ(first_run
                .claim(mint_first_run_token(*stranger, account_id, clock.now_s()), "owner@example.org",
                       "correct horse battery", "127.0.0.1")
                .status()
                .code(),
            Code::kUnauthenticated);
  EXPECT_EQ(
      first_run.claim(token + "x", "owner@example.org", "correct horse battery", "127.0.0.1").status().code(),
      Code::kUnauthenticated);
  // Expired after its lifetime.
  clock.advance_us(int64_t{3601} * 1'000'000);
  EXPECT_EQ(first_run.claim(token, "owner@example.org", "correct horse battery", "127.0.0.1").status().code(),
            Code::kUnauthenticated);
  EXPECT_TRUE(members->list_members(account_id)->empty());
}

}  // namespace
}  // namespace imago

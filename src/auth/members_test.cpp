#include "auth/members.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "auth/password.h"
#include "auth/provisioning.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/test_db.h"

namespace imago {
namespace {

struct MemberAuthTest : ::testing::Test {
  sqlite::TestDb db;
  ManualClock clock;
  std::unique_ptr<AccountStore> accounts = sql::make_account_store(db.db(), clock);
  std::unique_ptr<MemberStore> members = sql::make_member_store(db.db(), clock);
  std::unique_ptr<WindowCounter> windows = make_memory_window_counter(clock);
  MemberAuth auth{*members, *accounts, *windows, clock};
  std::string account_id = create_account_with_key(*accounts, "acme", Plan::kPro, 0).value().account.id;
};

TEST(Members, CookieAndEmailParsing) {
  EXPECT_EQ(cookie_value("a=1; imago_session=xyz; b=2", "imago_session").value(), "xyz");
  EXPECT_FALSE(cookie_value("a=1; imago_sessionx=2", "imago_session").has_value());
  EXPECT_EQ(normalize_email("  Ada@Example.ORG ").value(), "ada@example.org");
  EXPECT_FALSE(normalize_email("no-at-sign").ok());
  EXPECT_FALSE(normalize_email("a@b@c").ok());
  EXPECT_FALSE(normalize_email("a b@c").ok());
}

TEST_F(MemberAuthTest, SignInMakesAFreshSessionEachTimeAndChecksCsrf) {
  ASSERT_TRUE(auth.create_member(account_id, "Ada@example.org", "correct horse battery").ok());
  EXPECT_EQ(auth.create_member(account_id, "ada@example.org", "another password!").status().code(),
            Code::kConflict);
  int retry = 0;
  auto a = auth.sign_in("ada@example.org", "correct horse battery", "10.0.0.1", &retry);
  auto b = auth.sign_in("ADA@example.org", "correct horse battery", "10.0.0.1", &retry);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->token, b->token);
  EXPECT_NE(a->session.id, b->session.id);
  auto p = auth.authenticate(a->token, "GET", "");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->account_id, account_id);
  EXPECT_EQ(p->member_id, a->member.id);
  EXPECT_TRUE(p->key_id.empty());
  EXPECT_EQ(auth.authenticate(a->token, "POST", "").status().code(), Code::kForbidden);
  EXPECT_EQ(auth.authenticate(a->token, "POST", b->session.csrf_token).status().code(), Code::kForbidden);
  EXPECT_TRUE(auth.authenticate(a->token, "DELETE", a->session.csrf_token).ok());
  EXPECT_EQ(auth.authenticate("bogus", "GET", "").status().code(), Code::kUnauthenticated);
}

TEST_F(MemberAuthTest, SessionsExpireWhenIdleAndAfterTheAbsoluteLimit) {
  ASSERT_TRUE(auth.create_member(account_id, "ada@example.org", "correct horse battery").ok());
  int retry = 0;
  auto a = auth.sign_in("ada@example.org", "correct horse battery", "ip", &retry);
  ASSERT_TRUE(a.ok());
  clock.advance_seconds(11 * 3600);
  ASSERT_TRUE(auth.authenticate(a->token, "GET", "").ok());  // slides the idle expiry
  clock.advance_seconds(11 * 3600);
  ASSERT_TRUE(auth.authenticate(a->token, "GET", "").ok());
  clock.advance_seconds(13 * 3600);  // idle for longer than 12 h
  EXPECT_EQ(auth.authenticate(a->token, "GET", "").status().code(), Code::kUnauthenticated);

  auto b = auth.sign_in("ada@example.org", "correct horse battery", "ip", &retry);
  ASSERT_TRUE(b.ok());
  for (int i = 0; i < 20; ++i) {  // 200 h of activity, every 10 h
    clock.advance_seconds(10 * 3600);
    if (!auth.authenticate(b->token, "GET", "").ok()) break;
  }
  EXPECT_FALSE(auth.authenticate(b->token, "GET", "").ok())
      << "the absolute limit ends even an active session";
}

TEST_F(MemberAuthTest, FailedSignInsAreThrottledPerAccountAndPerIp) {
  ASSERT_TRUE(auth.create_member(account_id, "ada@example.org", "correct horse battery").ok());
  int retry = 0;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(
        auth.sign_in("ada@example.org", "wrong password", "ip" + std::to_string(i), &retry).status().code(),
        Code::kUnauthenticated);
  }
  // Even the right password is refused while the account is throttled.
  auto t = auth.sign_in("ada@example.org", "correct horse battery", "another-ip", &retry);
  EXPECT_EQ(t.status().code(), Code::kRateLimited);
  EXPECT_GT(retry, 0);
  clock.advance_seconds(901);
  EXPECT_TRUE(auth.sign_in("ada@example.org", "correct horse battery", "another-ip", &retry).ok());

  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(auth.sign_in("nobody" + std::to_string(i) + "@x.org", "pw", "1.2.3.4", &retry).status().code(),
              Code::kUnauthenticated);
  }
  EXPECT_EQ(auth.sign_in("someone@x.org", "pw", "1.2.3.4", &retry).status().code(), Code::kRateLimited);
}

// Runs `n` calls of `attempt(i)` at once (all threads released together) and returns how many
// argon2 verifications they ran and how many answered each code.
template <typename F>
std::pair<uint64_t, std::map<Code, int>> concurrently(int n, F attempt) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::mutex mu;
  std::map<Code, int> codes;
  const uint64_t before = password_verifications();
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (!go.load()) std::this_thread::yield();
      Code c = attempt(i);
      std::lock_guard lock(mu);
      ++codes[c];
    });
  }
  while (ready.load() < n) std::this_thread::yield();
  go = true;
  for (auto& t : threads) t.join();
  return {password_verifications() - before, codes};
}

TEST_F(MemberAuthTest, ConcurrentWrongPasswordsRunAtMostTheLimitOfVerifications) {
  ASSERT_TRUE(auth.create_member(account_id, "ada@example.org", "correct horse battery").ok());
  // 24 guesses at once from different addresses: the per-email limit (5) bounds the argon2 work.
  auto [verified, codes] = concurrently(24, [&](int i) {
    int retry = 0;
    return auth
        .sign_in("ada@example.org", "guess " + std::to_string(i), "10.1.0." + std::to_string(i), &retry)
        .status()
        .code();
  });
  EXPECT_LE(verified, 5u);
  EXPECT_EQ(codes[Code::kUnauthenticated], 5);
  EXPECT_EQ(codes[Code::kRateLimited], 19);

  // Unknown emails from one address: the per-IP limit (10) bounds the decoy verifications.
  auto [decoys, decoy_codes] = concurrently(24, [&](int i) {
    int retry = 0;
    return auth.sign_in("nobody" + std::to_string(i) + "@x.org", "guess", "10.2.0.1", &retry).status().code();
  });
  EXPECT_LE(decoys, 10u);
  EXPECT_EQ(decoy_codes[Code::kUnauthenticated], 10);

  // A right password is not counted as a failure: 20 sign-ins in a row all succeed.
  clock.advance_seconds(901);
  for (int i = 0; i < 20; ++i) {
    int retry = 0;
    ASSERT_TRUE(auth.sign_in("ada@example.org", "correct horse battery", "10.3.0.1", &retry).ok()) << i;
  }
}

TEST_F(MemberAuthTest, ConcurrentWrongCurrentPasswordsRunAtMostTheLimitOfVerifications) {
  ASSERT_TRUE(auth.create_member(account_id, "ada@example.org", "correct horse battery").ok());
  int retry = 0;
  auto a = auth.sign_in("ada@example.org", "correct horse battery", "ip-a", &retry);
  ASSERT_TRUE(a.ok());
  auto pa = auth.authenticate(a->token, "GET", "").value();
  auto [verified, codes] = concurrently(24, [&](int i) {
    int r = 0;
    return auth
        .change_password(pa, "guess " + std::to_string(i), "a brand new password",
                         "10.4.0." + std::to_string(i), &r)
        .code();
  });
  EXPECT_LE(verified, 5u);
  EXPECT_EQ(codes[Code::kForbidden], 5);
  EXPECT_EQ(codes[Code::kRateLimited], 19);
}

TEST_F(MemberAuthTest, SignUpDoesNotTellWhetherTheEmailIsTaken) {
  const int64_t accounts_before = accounts->count_accounts().value();
  ASSERT_TRUE(auth.sign_up("New@example.org", "a long password", "Newco").ok());
  auto m = members->find_member_by_email("new@example.org");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(accounts->get_account(m->member.account_id)->name, "Newco");
  EXPECT_TRUE(accounts->list_keys(m->member.account_id)->empty()) << "no key whose secret nobody saw";
  EXPECT_EQ(accounts->count_accounts().value(), accounts_before + 1);

  // Taken: the same answer, and nothing changes.
  EXPECT_TRUE(auth.sign_up("new@example.org", "another long password", "").ok());
  EXPECT_EQ(accounts->count_accounts().value(), accounts_before + 1);
  int retry = 0;
  EXPECT_TRUE(auth.sign_in("new@example.org", "a long password", "ip", &retry).ok());
  EXPECT_FALSE(auth.sign_in("new@example.org", "another long password", "ip", &retry).ok());

  // Bad input is refused before any lookup, the same for new and taken emails.
  EXPECT_EQ(auth.sign_up("new@example.org", "short", "").code(), Code::kInvalidArgument);
  EXPECT_EQ(auth.sign_up("fresh@example.org", "short", "").code(), Code::kInvalidArgument);
  EXPECT_EQ(auth.sign_up("no-at-sign", "a long password", "").code(), Code::kInvalidArgument);
  EXPECT_EQ(auth.sign_up("x@example.org", "a long password", std::string(101, 'n')).code(),
            Code::kInvalidArgument);
}

TEST_F(MemberAuthTest, PasswordChangeEndsOtherSessionsAndSignOutEverywhereEndsAll) {
  ASSERT_TRUE(auth.create_member(account_id, "ada@example.org", "correct horse battery").ok());
  int retry = 0;
  auto a = auth.sign_in("ada@example.org", "correct horse battery", "ip", &retry);
  auto b = auth.sign_in("ada@example.org", "correct horse battery", "ip", &retry);
  ASSERT_TRUE(a.ok() && b.ok());
  auto pa = auth.authenticate(a->token, "GET", "").value();
  EXPECT_EQ(auth.change_password(pa, "wrong current", "a brand new password", "ip", &retry).code(),
            Code::kForbidden);
  EXPECT_EQ(auth.change_password(pa, "correct horse battery", "short", "ip", &retry).code(),
            Code::kInvalidArgument);
  ASSERT_TRUE(auth.change_password(pa, "correct horse battery", "a brand new password", "ip", &retry).ok());
  EXPECT_TRUE(auth.authenticate(a->token, "GET", "").ok());
  EXPECT_FALSE(auth.authenticate(b->token, "GET", "").ok());
  EXPECT_FALSE(auth.sign_in("ada@example.org", "correct horse battery", "ip", &retry).ok());
  auto c = auth.sign_in("ada@example.org", "a brand new password", "ip", &retry);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(auth.sign_out_everywhere(pa).value(), 2);
  EXPECT_FALSE(auth.authenticate(a->token, "GET", "").ok());
  EXPECT_FALSE(auth.authenticate(c->token, "GET", "").ok());
}

TEST_F(MemberAuthTest, WrongCurrentPasswordsOnChangeShareTheSignInThrottle) {
  ASSERT_TRUE(auth.create_member(account_id, "ada@example.org", "correct horse battery").ok());
  int retry = 0;
  auto a = auth.sign_in("ada@example.org", "correct horse battery", "ip-a", &retry);
  ASSERT_TRUE(a.ok());
  auto pa = auth.authenticate(a->token, "GET", "").value();
  // Per account: 5 wrong guesses from different addresses, then even the right one is refused.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(auth.change_password(pa, "guess " + std::to_string(i), "a brand new password",
                                   "ip" + std::to_string(i), &retry)
                  .code(),
              Code::kForbidden);
  }
  retry = 0;
  EXPECT_EQ(auth.change_password(pa, "correct horse battery", "a brand new password", "ip-b", &retry).code(),
            Code::kRateLimited);
  EXPECT_GT(retry, 0);
  // The same counter guards sign-in: the account is throttled there too.
  EXPECT_EQ(auth.sign_in("ada@example.org", "correct horse battery", "ip-c", &retry).status().code(),
            Code::kRateLimited);
  clock.advance_seconds(901);
  EXPECT_TRUE(auth.change_password(pa, "correct horse battery", "a brand new password", "ip-b", &retry).ok());

  // Per IP: wrong sign-ins from one address also block password changes from it.
  for (int i = 0; i < 10; ++i) {
    (void)auth.sign_in("nobody" + std::to_string(i) + "@x.org", "pw", "9.9.9.9", &retry);
  }
  EXPECT_EQ(
      auth.change_password(pa, "a brand new password", "another new password", "9.9.9.9", &retry).code(),
      Code::kRateLimited);
}

}  // namespace
}  // namespace imago

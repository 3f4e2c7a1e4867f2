// Contracts of MemberStore and DeviceGrantStore: emails are unique service-wide, sessions are found
// only by their token hash while neither revoked nor expired, password changes end every other
// session, and a device grant moves pending -> approved/denied -> consumed exactly once.
#include "store/contracts/store_backends.h"

namespace imago::contracts {
namespace {

class MemberStoreContract : public StoreContract {
 protected:
  MemberStore& members() { return *stores().members; }
  DeviceGrantStore& grants() { return *stores().device_grants; }

  DashboardSession session(const Member& m, const std::string& id, int64_t expires_at) {
    DashboardSession s;
    s.id = id;
    s.member_id = m.id;
    s.account_id = m.account_id;
    s.csrf_token = "csrf-" + id;
    s.created_at = s.last_seen_at = clock_.now_s();
    s.expires_at = expires_at;
    return s;
  }
};

TEST_P(MemberStoreContract, EmailsAreUniqueAndMembersBelongToTheirAccount) {
  auto a = new_account(0), b = new_account(0);
  auto m = members().create_member(a, "ada@example.org", "hash-1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->account_id, a);
  EXPECT_EQ(members().create_member(b, "ada@example.org", "hash-2").status().code(), Code::kConflict);
  EXPECT_EQ(members().create_member("usr_missing", "x@example.org", "h").status().code(), Code::kNotFound);
  auto found = members().find_member_by_email("ada@example.org");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->member.id, m->id);
  EXPECT_EQ(found->password_hash, "hash-1");
  EXPECT_EQ(members().find_member_by_email("nobody@example.org").status().code(), Code::kNotFound);
  EXPECT_EQ(members().list_members(a)->size(), 1u);
  EXPECT_TRUE(members().list_members(b)->empty());
}

TEST_P(MemberStoreContract, SessionsAreFoundByHashUntilRevokedOrExpired) {
  auto a = new_account(0);
  auto m = members().create_member(a, "ada@example.org", "h").value();
  const int64_t now = clock_.now_s();
  ASSERT_TRUE(members().create_session(session(m, "ses_1", now + 100), "hash-1").ok());
  ASSERT_TRUE(members().create_session(session(m, "ses_2", now + 100), "hash-2").ok());
  auto s = members().find_session("hash-1", now);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->id, "ses_1");
  EXPECT_EQ(s->csrf_token, "csrf-ses_1");
  EXPECT_EQ(members().find_session("hash-1", now + 100).status().code(), Code::kNotFound) << "expired";
  ASSERT_TRUE(members().touch_session("ses_1", now + 50, now + 500).ok());
  EXPECT_TRUE(members().find_session("hash-1", now + 400).ok()) << "touch slides the expiry";
  ASSERT_TRUE(members().revoke_session("ses_1").ok());
  EXPECT_EQ(members().find_session("hash-1", now).status().code(), Code::kNotFound);
  EXPECT_TRUE(members().find_session("hash-2", now).ok());
  EXPECT_EQ(members().find_session("unknown", now).status().code(), Code::kNotFound);
  // By id, with the same rules.
  auto by_id = members().get_session("ses_2", now);
  ASSERT_TRUE(by_id.ok());
  EXPECT_EQ(by_id->member_id, m.id);
  EXPECT_EQ(by_id->account_id, a);
  EXPECT_EQ(members().get_session("ses_1", now).status().code(), Code::kNotFound) << "revoked";
  EXPECT_EQ(members().get_session("ses_2", now + 100).status().code(), Code::kNotFound) << "expired";
  EXPECT_EQ(members().get_session("ses_none", now).status().code(), Code::kNotFound);
}

TEST_P(MemberStoreContract, PasswordChangeAndSignOutEverywhereEndOtherSessions) {
  auto a = new_account(0);
  auto m = members().create_member(a, "ada@example.org", "old").value();
  const int64_t now = clock_.now_s();
  for (const char* id : {"ses_a", "ses_b", "ses_c"}) {
    ASSERT_TRUE(members().create_session(session(m, id, now + 100), std::string("hash-") + id).ok());
  }
  ASSERT_TRUE(members().set_password(m.id, "new", std::string("ses_a")).ok());
  EXPECT_EQ(members().get_member(m.id)->password_hash, "new");
  EXPECT_TRUE(members().find_session("hash-ses_a", now).ok());
  EXPECT_FALSE(members().find_session("hash-ses_b", now).ok());
  EXPECT_FALSE(members().find_session("hash-ses_c", now).ok());
  EXPECT_EQ(members().set_password("mem_missing", "x", std::nullopt).code(), Code::kNotFound);
  EXPECT_EQ(members().revoke_member_sessions(m.id, std::nullopt).value(), 1);
  EXPECT_FALSE(members().find_session("hash-ses_a", now).ok());
}

TEST_P(MemberStoreContract, DeviceGrantsMoveForwardOnlyAndAreConsumedOnce) {
  auto a = new_account(0);
  const int64_t now = clock_.now_s();
  DeviceGrant g;
  g.id = "dgr_1";
  g.kind = GrantKind::kDevice;
  g.hostname = "laptop";
  g.user_code = "BCDFGHJK";
  g.created_at = now;
  g.expires_at = now + 600;
  ASSERT_TRUE(grants().create_grant(g, "secret-1").ok());
  DeviceGrant clash = g;
  clash.id = "dgr_2";
  EXPECT_EQ(grants().create_grant(clash, "secret-2").code(), Code::kConflict) << "live user codes are unique";
  auto found = grants().find_by_secret("secret-1");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->state, GrantState::kPending);
  EXPECT_EQ(found->hostname, "laptop");
  EXPECT_TRUE(grants().find_pending_by_user_code("BCDFGHJK", now).ok());
  EXPECT_FALSE(grants().find_pending_by_user_code("BCDFGHJK", now + 600).ok()) << "expired";
  EXPECT_EQ(grants().consume("dgr_1").code(), Code::kConflict) << "not approved yet";
  ASSERT_TRUE(grants().record_poll("dgr_1", now + 5, 10).ok());
  EXPECT_EQ(grants().find_by_secret("secret-1")->interval_s, 10);
  ASSERT_TRUE(grants().decide("dgr_1", true, a, "mem_x").ok());
  EXPECT_EQ(grants().decide("dgr_1", false, a, "mem_x").code(), Code::kNotFound) << "decided once";
  EXPECT_FALSE(grants().find_pending_by_user_code("BCDFGHJK", now).ok());
  ASSERT_TRUE(grants().consume("dgr_1").ok());
  EXPECT_EQ(grants().consume("dgr_1").code(), Code::kConflict);
  ASSERT_TRUE(grants().set_issued_key("dgr_1", "key_1").ok());
  EXPECT_EQ(grants().device_key_ids(a).value(), std::vector<std::string>{"key_1"});
  EXPECT_TRUE(grants().device_key_ids(new_account(0))->empty());
  auto done = grants().find_by_secret("secret-1").value();
  EXPECT_EQ(done.state, GrantState::kConsumed);
  EXPECT_EQ(done.account_id, a);
  EXPECT_EQ(done.key_id, "key_1");
}

IMAGO_STORE_CONTRACT(MemberStoreContract);

}  // namespace
}  // namespace imago::contracts

// Members, dashboard sessions and CLI device grants, on either backend (SQLite migrations 500-599,
// PostgreSQL migration 600).
#include "store/sql/sql_stores.h"
#include "util/random.h"

namespace imago::sql {

namespace {

MemberWithHash read_member(const Stmt& s) {
  MemberWithHash m;
  m.member.id = s.col_text(0);
  m.member.account_id = s.col_text(1);
  m.member.email = s.col_text(2);
  m.member.created_at = s.col_int(3);
  m.member.password_changed_at = s.col_int(4);
  m.password_hash = s.col_text(5);
  return m;
}

// The session with this token hash, or this id, if it is neither revoked nor expired at `now`;
// else kNotFound.
enum class SessionKey { kTokenHash, kId };
Result<DashboardSession> live_session(Connection& c, SessionKey by, const std::string& key, int64_t now) {
  // Statements are cached by the literal's address: one literal per key.
  static constexpr const char* kSql[] = {
      "SELECT id, member_id, account_id, csrf_token, created_at, last_seen_at, expires_at "
      "FROM dashboard_sessions WHERE token_hash = ? AND revoked_at IS NULL AND expires_at > ?",
      "SELECT id, member_id, account_id, csrf_token, created_at, last_seen_at, expires_at "
      "FROM dashboard_sessions WHERE id = ? AND revoked_at IS NULL AND expires_at > ?"};
  auto s = c.prepare(kSql[static_cast<int>(by)]);
  s.bind(1, key).bind(2, now);
  if (!s.step()) return Status::NotFound("No such session");
  DashboardSession d;
  d.id = s.col_text(0);
  d.member_id = s.col_text(1);
  d.account_id = s.col_text(2);
  d.csrf_token = s.col_text(3);
  d.created_at = s.col_int(4);
  d.last_seen_at = s.col_int(5);
  d.expires_at = s.col_int(6);
  return d;
}

class SqlMemberStore final : public MemberStore {
 public:
  SqlMemberStore(Database& db, Clock& clock) : clock_(clock), db_(db) {}

  Result<Member> create_member(const std::string& account_id, const std::string& email,
                               const std::string& password_hash) override {
    return db_.write([&](Connection& c) -> Result<Member> {
      auto exists = c.prepare("SELECT 1 FROM members WHERE email = ?");
      exists.bind(1, email);
      if (exists.step()) return Status::Conflict("A member with this email already exists");
      auto acct = c.prepare("SELECT created_at FROM accounts WHERE id = ?");
      acct.bind(1, account_id);
      if (!acct.step()) return Status::NotFound("Account not found: " + account_id);
      Member m;
      m.id = new_id("mem");
      m.account_id = account_id;
      m.email = email;
      m.created_at = m.password_changed_at = now_s();
      c.prepare(
           "INSERT INTO members(id, account_id, email, password_hash, created_at, password_changed_at) "
           "VALUES(?,?,?,?,?,?)")
          .bind(1, m.id)
          .bind(2, m.account_id)
          .bind(3, m.email)
          .bind(4, password_hash)
          .bind(5, m.created_at)
          .bind(6, m.password_changed_at)
          .run();
      return m;
    });
  }

  Result<MemberWithHash> find_member_by_email(const std::string& email) override {
    return db_.read([&](Connection& c) -> Result<MemberWithHash> {
      auto s = c.prepare(
          "SELECT id, account_id, email, created_at, password_changed_at, password_hash "
          "FROM members WHERE email = ?");
      s.bind(1, email);
      if (!s.step()) return Status::NotFound("No member with this email");
      return read_member(s);
    });
  }

  Result<MemberWithHash> get_member(const std::string& member_id) override {
    return db_.read([&](Connection& c) -> Result<MemberWithHash> {
      auto s = c.prepare(
          "SELECT id, account_id, email, created_at, password_changed_at, password_hash "
          "FROM members WHERE id = ?");
      s.bind(1, member_id);
      if (!s.step()) return Status::NotFound("Member not found");
      return read_member(s);
    });
  }

  Result<std::vector<Member>> list_members(const std::string& account_id) override {
    return db_.read([&](Connection& c) -> Result<std::vector<Member>> {
      auto s = c.prepare(
          "SELECT id, account_id, email, created_at, password_changed_at, password_hash "
          "FROM members WHERE account_id = ? ORDER BY created_at, id");
      s.bind(1, account_id);
      std::vector<Member> out;
      while (s.step()) out.push_back(read_member(s).member);
      return out;
    });
  }

  Status set_password(const std::string& member_id, const std::string& password_hash,
                      const std::optional<std::string>& keep_session_id) override {
    return db_.write([&](Connection& c) -> Status {
      const int64_t now = now_s();
      c.prepare("UPDATE members SET password_hash = ?, password_changed_at = ? WHERE id = ?")
          .bind(1, password_hash)
          .bind(2, now)
          .bind(3, member_id)
          .run();
      if (c.changes() == 0) return Status::NotFound("Member not found");
      revoke_sessions(c, member_id, keep_session_id, now);
      return Status::Ok();
    });
  }

  Status create_session(const DashboardSession& s, const std::string& token_hash) override {
    return db_.write([&](Connection& c) -> Status {
      c.prepare(
           "INSERT INTO dashboard_sessions(id, token_hash, member_id, account_id, csrf_token, created_at, "
           "last_seen_at, expires_at) VALUES(?,?,?,?,?,?,?,?)")
          .bind(1, s.id)
          .bind(2, token_hash)
          .bind(3, s.member_id)
          .bind(4, s.account_id)
          .bind(5, s.csrf_token)
          .bind(6, s.created_at)
          .bind(7, s.last_seen_at)
          .bind(8, s.expires_at)
          .run();
      return Status::Ok();
    });
  }

  Result<DashboardSession> find_session(const std::string& token_hash, int64_t now) override {
    return db_.read([&](Connection& c) { return live_session(c, SessionKey::kTokenHash, token_hash, now); });
  }

  Result<DashboardSession> get_session(const std::string& session_id, int64_t now) override {
    return db_.read([&](Connection& c) { return live_session(c, SessionKey::kId, session_id, now); });
  }

  Status touch_session(const std::string& session_id, int64_t now, int64_t expires_at) override {
    return db_.write([&](Connection& c) -> Status {
      c.prepare(
           "UPDATE dashboard_sessions SET last_seen_at = ?, expires_at = ? WHERE id = ? AND revoked_at IS "
           "NULL")
          .bind(1, now)
          .bind(2, expires_at)
          .bind(3, session_id)
          .run();
      return Status::Ok();
    });
  }

  Status revoke_session(const std::string& session_id) override {
    return db_.write([&](Connection& c) -> Status {
      c.prepare("UPDATE dashboard_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
          .bind(1, now_s())
          .bind(2, session_id)
          .run();
      return Status::Ok();
    });
  }

  Result<int> revoke_member_sessions(const std::string& member_id,
                                     const std::optional<std::string>& keep_session_id) override {
    return db_.write([&](Connection& c) -> Result<int> {
      return revoke_sessions(c, member_id, keep_session_id, now_s());
    });
  }

 private:
  Clock& clock_;
  int64_t now_s() const { return clock_.now_s(); }

  static int revoke_sessions(Connection& c, const std::string& member_id,
                             const std::optional<std::string>& keep, int64_t now) {
    c.prepare(
         "UPDATE dashboard_sessions SET revoked_at = ? WHERE member_id = ? AND revoked_at IS NULL AND id != "
         "?")
        .bind(1, now)
        .bind(2, member_id)
        .bind(3, keep.value_or(""))
        .run();
    return c.changes();
  }

  Database& db_;
};

std::string_view kind_name(GrantKind k) {
  return k == GrantKind::kDevice ? "device" : "browser";
}

GrantState parse_state(const std::string& s) {
  if (s == "approved") return GrantState::kApproved;
  if (s == "denied") return GrantState::kDenied;
  if (s == "consumed") return GrantState::kConsumed;
  return GrantState::kPending;
}

DeviceGrant read_grant(const Stmt& s) {
  DeviceGrant g;
  g.id = s.col_text(0);
  g.kind = s.col_text(1) == "browser" ? GrantKind::kBrowser : GrantKind::kDevice;
  g.hostname = s.col_text(2);
  g.user_code = s.col_opt_text(3).value_or("");
  g.challenge = s.col_opt_text(4).value_or("");
  g.state = parse_state(s.col_text(5));
  g.account_id = s.col_opt_text(6).value_or("");
  g.member_id = s.col_opt_text(7).value_or("");
  g.created_at = s.col_int(8);
  g.expires_at = s.col_int(9);
  g.interval_s = static_cast<int>(s.col_int(10));
  g.last_poll_at = s.col_int(11);
  g.key_id = s.col_opt_text(12).value_or("");
  return g;
}

std::optional<std::string> opt(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional(s);
}

class SqlDeviceGrantStore final : public DeviceGrantStore {
 public:
  explicit SqlDeviceGrantStore(Database& db) : db_(db) {}

  Status create_grant(const DeviceGrant& g, const std::string& secret_hash) override {
    return db_.write([&](Connection& c) -> Status {
      if (!g.user_code.empty()) {
        auto live = c.prepare(
            "SELECT 1 FROM device_grants WHERE user_code = ? AND state = 'pending' AND expires_at > ?");
        live.bind(1, g.user_code).bind(2, g.created_at);
        if (live.step()) return Status::Conflict("user code in use");
      }
      c.prepare(
           "INSERT INTO device_grants(id, kind, secret_hash, hostname, user_code, challenge, state, "
           "account_id, "
           "member_id, created_at, expires_at, interval_s) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)")
          .bind(1, g.id)
          .bind(2, kind_name(g.kind))
          .bind(3, secret_hash)
          .bind(4, g.hostname)
          .bind(5, opt(g.user_code))
          .bind(6, opt(g.challenge))
          .bind(7, grant_state_name(g.state))
          .bind(8, opt(g.account_id))
          .bind(9, opt(g.member_id))
          .bind(10, g.created_at)
          .bind(11, g.expires_at)
          .bind(12, g.interval_s)
          .run();
      return Status::Ok();
    });
  }

  Result<DeviceGrant> find_by_secret(const std::string& secret_hash) override {
    return db_.read([&](Connection& c) -> Result<DeviceGrant> {
      auto s = c.prepare(
          "SELECT id, kind, hostname, user_code, challenge, state, account_id, member_id, created_at, "
          "expires_at, "
          "interval_s, last_poll_at, key_id FROM device_grants WHERE secret_hash = ?");
      s.bind(1, secret_hash);
      if (!s.step()) return Status::NotFound("Unknown code");
      return read_grant(s);
    });
  }

  Result<DeviceGrant> find_pending_by_user_code(const std::string& user_code, int64_t now) override {
    return db_.read([&](Connection& c) -> Result<DeviceGrant> {
      auto s = c.prepare(
          "SELECT id, kind, hostname, user_code, challenge, state, account_id, member_id, created_at, "
          "expires_at, "
          "interval_s, last_poll_at, key_id FROM device_grants "
          "WHERE user_code = ? AND state = 'pending' AND expires_at > ? AND kind = 'device'");
      s.bind(1, user_code).bind(2, now);
      if (!s.step()) return Status::NotFound("No pending sign-in with this code (it may have expired)");
      return read_grant(s);
    });
  }

  Status decide(const std::string& grant_id, bool approve, const std::string& account_id,
                const std::string& member_id) override {
    return db_.write([&](Connection& c) -> Status {
      c.prepare(
           "UPDATE device_grants SET state = ?, account_id = ?, member_id = ? WHERE id = ? AND state = "
           "'pending'")
          .bind(1, approve ? "approved" : "denied")
          .bind(2, account_id)
          .bind(3, member_id)
          .bind(4, grant_id)
          .run();
      if (c.changes() == 0) return Status::NotFound("This sign-in is no longer pending");
      return Status::Ok();
    });
  }

  Status record_poll(const std::string& grant_id, int64_t now, int interval_s) override {
    return db_.write([&](Connection& c) -> Status {
      c.prepare("UPDATE device_grants SET last_poll_at = ?, interval_s = ? WHERE id = ?")
          .bind(1, now)
          .bind(2, interval_s)
          .bind(3, grant_id)
          .run();
      return Status::Ok();
    });
  }

  Status consume(const std::string& grant_id) override {
    return db_.write([&](Connection& c) -> Status {
      c.prepare("UPDATE device_grants SET state = 'consumed' WHERE id = ? AND state = 'approved'")
          .bind(1, grant_id)
          .run();
      if (c.changes() == 0) return Status::Conflict("This sign-in was already used");
      return Status::Ok();
    });
  }

  Status set_issued_key(const std::string& grant_id, const std::string& key_id) override {
    return db_.write([&](Connection& c) -> Status {
      c.prepare("UPDATE device_grants SET key_id = ? WHERE id = ?").bind(1, key_id).bind(2, grant_id).run();
      return Status::Ok();
    });
  }

  Result<std::vector<std::string>> device_key_ids(const std::string& account_id) override {
    return db_.read([&](Connection& c) -> Result<std::vector<std::string>> {
      auto s = c.prepare("SELECT key_id FROM device_grants WHERE account_id = ? AND key_id IS NOT NULL");
      s.bind(1, account_id);
      std::vector<std::string> out;
      while (s.step()) out.push_back(s.col_text(0));
      return out;
    });
  }

 private:
  Database& db_;
};

}  // namespace

std::unique_ptr<MemberStore> make_member_store(Database& db, Clock& clock) {
  return std::make_unique<SqlMemberStore>(db, clock);
}
std::unique_ptr<DeviceGrantStore> make_device_grant_store(Database& db) {
  return std::make_unique<SqlDeviceGrantStore>(db);
}

}  // namespace imago::sql

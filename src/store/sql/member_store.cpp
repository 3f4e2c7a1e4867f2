// Members, dashboard sessions and CLI device grants, on either backend (SQLite migrations 500-599,
// PostgreSQL migration 600).
#include "store/sql/sql_stores.h"
#include "util/random.h"

namespace imago::sql {

namespace {

#define MEMBER_COLUMNS "id, account_id, email, created_at, password_changed_at, password_hash"

MemberWithHash read_member(const Stmt& s) {
  MemberWithHash m;
  s.read(m.member.id, m.member.account_id, m.member.email, m.member.created_at, m.member.password_changed_at,
         m.password_hash);
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
  auto s = c.query(kSql[static_cast<int>(by)], key, now);
  if (!s.step()) return Status::NotFound("No such session");
  DashboardSession d;
  s.read(d.id, d.member_id, d.account_id, d.csrf_token, d.created_at, d.last_seen_at, d.expires_at);
  return d;
}

class SqlMemberStore final : public MemberStore, TableStore {
 public:
  using TableStore::TableStore;

  Result<Member> create_member(const std::string& account_id, const std::string& email,
                               const std::string& password_hash) override {
    return db_.write([&](Connection& c) -> Result<Member> {
      if (c.exists("SELECT 1 FROM members WHERE email = ?", email))
        return Status::Conflict("A member with this email already exists");
      if (!c.exists("SELECT created_at FROM accounts WHERE id = ?", account_id))
        return Status::NotFound("Account not found: " + account_id);
      Member m;
      m.id = new_id("mem");
      m.account_id = account_id;
      m.email = email;
      m.created_at = m.password_changed_at = now_s();
      c.run("INSERT INTO members(" MEMBER_COLUMNS ") VALUES(?,?,?,?,?,?)", m.id, m.account_id, m.email,
            m.created_at, m.password_changed_at, password_hash);
      return m;
    });
  }

  Result<MemberWithHash> find_member_by_email(const std::string& email) override {
    return db_.read_one(Status::NotFound("No member with this email"), read_member,
                        "SELECT " MEMBER_COLUMNS " FROM members WHERE email = ?", email);
  }

  Result<MemberWithHash> get_member(const std::string& member_id) override {
    return db_.read_one(Status::NotFound("Member not found"), read_member,
                        "SELECT " MEMBER_COLUMNS " FROM members WHERE id = ?", member_id);
  }

  Result<std::vector<Member>> list_members(const std::string& account_id) override {
    return db_.read_all([](const Stmt& s) { return read_member(s).member; },
                        "SELECT " MEMBER_COLUMNS " FROM members WHERE account_id = ? ORDER BY created_at, id",
                        account_id);
  }

  Status set_password(const std::string& member_id, const std::string& password_hash,
                      const std::optional<std::string>& keep_session_id) override {
    return db_.write([&](Connection& c) -> Status {
      const int64_t now = now_s();
      if (c.run("UPDATE members SET password_hash = ?, password_changed_at = ? WHERE id = ?", password_hash,
                now, member_id) == 0)
        return Status::NotFound("Member not found");
      revoke_sessions(c, member_id, keep_session_id, now);
      return Status::Ok();
    });
  }

  Status create_session(const DashboardSession& s, const std::string& token_hash) override {
    return db_.write([&](Connection& c) -> Status {
      c.run(
          "INSERT INTO dashboard_sessions(id, token_hash, member_id, account_id, csrf_token, created_at,"
          " last_seen_at, expires_at) VALUES(?,?,?,?,?,?,?,?)",
          s.id, token_hash, s.member_id, s.account_id, s.csrf_token, s.created_at, s.last_seen_at,
          s.expires_at);
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
      c.run(
          "UPDATE dashboard_sessions SET last_seen_at = ?, expires_at = ?"
          " WHERE id = ? AND revoked_at IS NULL",
          now, expires_at, session_id);
      return Status::Ok();
    });
  }

  Status revoke_session(const std::string& session_id) override {
    return db_.write([&](Connection& c) -> Status {
      c.run("UPDATE dashboard_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", now_s(),
            session_id);
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
  int64_t now_s() const { return clock_.now_s(); }

  static int revoke_sessions(Connection& c, const std::string& member_id,
                             const std::optional<std::string>& keep, int64_t now) {
    return static_cast<int>(c.run(
        "UPDATE dashboard_sessions SET revoked_at = ? WHERE member_id = ? AND revoked_at IS NULL AND id != ?",
        now, member_id, keep.value_or("")));
  }
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

#define GRANT_COLUMNS                                                                                \
  "id, kind, hostname, user_code, challenge, state, account_id, member_id, created_at, expires_at, " \
  "interval_s, last_poll_at, key_id"

// NULL texts read as empty.
DeviceGrant read_grant(const Stmt& s) {
  DeviceGrant g;
  std::string kind, state;
  s.read(g.id, kind, g.hostname, g.user_code, g.challenge, state, g.account_id, g.member_id, g.created_at,
         g.expires_at, g.interval_s, g.last_poll_at, g.key_id);
  g.kind = kind == "browser" ? GrantKind::kBrowser : GrantKind::kDevice;
  g.state = parse_state(state);
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
      if (!g.user_code.empty() &&
          c.exists("SELECT 1 FROM device_grants WHERE user_code = ? AND state = 'pending' AND expires_at > ?",
                   g.user_code, g.created_at))
        return Status::Conflict("user code in use");
      c.run(
          "INSERT INTO device_grants(id, kind, secret_hash, hostname, user_code, challenge, state,"
          " account_id, member_id, created_at, expires_at, interval_s) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
          g.id, kind_name(g.kind), secret_hash, g.hostname, opt(g.user_code), opt(g.challenge),
          grant_state_name(g.state), opt(g.account_id), opt(g.member_id), g.created_at, g.expires_at,
          g.interval_s);
      return Status::Ok();
    });
  }

  Result<DeviceGrant> find_by_secret(const std::string& secret_hash) override {
    return db_.read_one(Status::NotFound("Unknown code"), read_grant,
                        "SELECT " GRANT_COLUMNS " FROM device_grants WHERE secret_hash = ?", secret_hash);
  }

  Result<DeviceGrant> find_pending_by_user_code(const std::string& user_code, int64_t now) override {
    return db_.read([&](Connection& c) {
      return found(
          c.first(read_grant,
                  "SELECT " GRANT_COLUMNS " FROM device_grants"
                  " WHERE user_code = ? AND state = 'pending' AND expires_at > ? AND kind = 'device'",
                  user_code, now),
          Status::NotFound("No pending sign-in with this code (it may have expired)"));
    });
  }

  Status decide(const std::string& grant_id, bool approve, const std::string& account_id,
                const std::string& member_id) override {
    return db_.write([&](Connection& c) -> Status {
      if (c.run("UPDATE device_grants SET state = ?, account_id = ?, member_id = ?"
                " WHERE id = ? AND state = 'pending'",
                approve ? "approved" : "denied", account_id, member_id, grant_id) == 0)
        return Status::NotFound("This sign-in is no longer pending");
      return Status::Ok();
    });
  }

  Status record_poll(const std::string& grant_id, int64_t now, int interval_s) override {
    return db_.write([&](Connection& c) -> Status {
      c.run("UPDATE device_grants SET last_poll_at = ?, interval_s = ? WHERE id = ?", now, interval_s,
            grant_id);
      return Status::Ok();
    });
  }

  Status consume(const std::string& grant_id) override {
    return db_.write([&](Connection& c) -> Status {
      if (c.run("UPDATE device_grants SET state = 'consumed' WHERE id = ? AND state = 'approved'",
                grant_id) == 0)
        return Status::Conflict("This sign-in was already used");
      return Status::Ok();
    });
  }

  Status set_issued_key(const std::string& grant_id, const std::string& key_id) override {
    return db_.write([&](Connection& c) -> Status {
      c.run("UPDATE device_grants SET key_id = ? WHERE id = ?", key_id, grant_id);
      return Status::Ok();
    });
  }

  Result<std::vector<std::string>> device_key_ids(const std::string& account_id) override {
    return db_.read_all(
        text_col, "SELECT key_id FROM device_grants WHERE account_id = ? AND key_id IS NOT NULL", account_id);
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

// Members, dashboard sessions and CLI device grants on SQLite: the schema (migrations 500-599)
// and the shared stores (store/sql/).
#include "store/sqlite/sqlite_member_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/migrations.h"

namespace imago::sqlite {

std::vector<Migration> member_migrations() {
  return {
      {500, "members, dashboard sessions, device grants", R"sql(
CREATE TABLE members (
  id                  TEXT PRIMARY KEY,
  account_id          TEXT NOT NULL REFERENCES accounts(id),
  email               TEXT NOT NULL UNIQUE,
  password_hash       TEXT NOT NULL,
  created_at          INTEGER NOT NULL,
  password_changed_at INTEGER NOT NULL
);
CREATE INDEX members_by_account ON members(account_id);
CREATE TABLE dashboard_sessions (
  id           TEXT PRIMARY KEY,
  token_hash   TEXT NOT NULL UNIQUE,
  member_id    TEXT NOT NULL REFERENCES members(id),
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  csrf_token   TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  revoked_at   INTEGER
);
CREATE INDEX dashboard_sessions_by_member ON dashboard_sessions(member_id);
CREATE TABLE device_grants (
  id           TEXT PRIMARY KEY,
  kind         TEXT NOT NULL,
  secret_hash  TEXT NOT NULL UNIQUE,
  hostname     TEXT NOT NULL,
  user_code    TEXT,
  challenge    TEXT,
  state        TEXT NOT NULL,
  account_id   TEXT,
  member_id    TEXT,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  interval_s   INTEGER NOT NULL,
  last_poll_at INTEGER NOT NULL DEFAULT 0,
  key_id       TEXT
);
CREATE INDEX device_grants_by_user_code ON device_grants(user_code);
CREATE INDEX device_grants_by_account ON device_grants(account_id);
)sql"},
  };
}

std::unique_ptr<MemberStore> make_member_store(Db& db, Clock& clock) {
  return sql::make_member_store(sql::wrap(db), clock);
}

std::unique_ptr<DeviceGrantStore> make_device_grant_store(Db& db) {
  return sql::make_device_grant_store(sql::wrap(db));
}

}  // namespace imago::sqlite

// Accounts, keys and the ledger on SQLite: the schema (migrations 1-99) and the shared account
// store (store/sql/).
#include "store/sqlite/sqlite_account_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/migrations.h"

namespace imago::sqlite {

std::vector<Migration> core_migrations() {
  return {
      {1, "accounts, api keys, ledger", R"sql(
CREATE TABLE accounts (
  id             TEXT PRIMARY KEY,
  name           TEXT NOT NULL,
  plan           TEXT NOT NULL,
  limit_generate INTEGER,
  limit_write    INTEGER,
  limit_read     INTEGER,
  plan_credits   INTEGER NOT NULL DEFAULT 0 CHECK (plan_credits >= 0),
  topup_credits  INTEGER NOT NULL DEFAULT 0 CHECK (topup_credits >= 0),
  created_at     INTEGER NOT NULL
);
CREATE TABLE api_keys (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  alias        TEXT NOT NULL,
  secret_hash  TEXT NOT NULL UNIQUE,
  prefix       TEXT NOT NULL,
  last4        TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at   INTEGER
);
CREATE INDEX api_keys_by_account ON api_keys(account_id);
CREATE TABLE ledger (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  kind          TEXT NOT NULL,
  amount        INTEGER NOT NULL,
  balance_after INTEGER NOT NULL CHECK (balance_after >= 0),
  reason        TEXT NOT NULL,
  operation_key TEXT NOT NULL,
  reference     TEXT,
  created_at    INTEGER NOT NULL,
  UNIQUE (account_id, operation_key)
);
CREATE INDEX ledger_by_account ON ledger(account_id, seq DESC);
)sql"},
      // An enterprise account's own storage quota in bytes (NULL: the plan's).
      {2, "account storage quota", "ALTER TABLE accounts ADD COLUMN limit_storage INTEGER;"},
      // Monthly live spend caps in credits (NULL: none), set by the holder and by the operator,
      // and the index the month's live spend is summed with (billing/spend_cap.h).
      {3, "live spend cap", R"sql(
ALTER TABLE accounts ADD COLUMN live_spend_cap INTEGER;
ALTER TABLE accounts ADD COLUMN operator_live_spend_cap INTEGER;
CREATE INDEX ledger_by_account_time ON ledger(account_id, created_at);
)sql"},
  };
}

std::unique_ptr<AccountStore> make_account_store(Db& db, Clock& clock) {
  return sql::make_account_store(sql::wrap(db), clock);
}

}  // namespace imago::sqlite

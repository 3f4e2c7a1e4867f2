// The schema of the table stores: one migration history with the same versions on SQLite and
// PostgreSQL. Each migration is written once in PostgreSQL's types; SQLite reads them as its own
// (schema.cpp says how), and where the engines truly differ a migration names both texts (an empty
// text: nothing to do on that engine, the version is still recorded).
//
// Version ranges, so parallel work never collides:
//   1-99 accounts, keys, ledger   100-199 voices   200-299 agents, files, jobs
//   300-399 webhooks   400-499 live sessions   500-599 cluster state (PostgreSQL only)
//   600-699 members, dashboard sessions, CLI device grants
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "store/sql/connection.h"
#include "util/status.h"

namespace imago::sql {

struct Migration {
  int version;
  const char* name;
  Dialects sql;
};

// Every migration, in version order. A new one goes at the end of its range.
const std::vector<Migration>& migrations();

// The text a migration runs on `d` (SQLite: PostgreSQL's types read as SQLite's).
std::string migration_text(const Migration& m, Dialect d);

// Applies every migration of `list` not yet recorded, in order, each in its own write transaction.
// On PostgreSQL each takes a transaction advisory lock first, so nodes starting at once apply each
// migration once (the others find it recorded); SQLite's writer lock does the same.
Status migrate(Database& db, const std::vector<Migration>& list = migrations());

struct AppliedMigration {
  int version = 0;
  std::string name;
  int64_t applied_at = 0;  // Unix seconds
};
// What the database has recorded, by version; empty for a database never migrated.
Result<std::vector<AppliedMigration>> applied_migrations(Database& db);

}  // namespace imago::sql

// The table stores, written once over the SQL interfaces (connection.h) and run on SQLite and
// PostgreSQL alike (docs/architecture.md, "One store, two databases"); each backend binds them to
// its own database in its factories (store/sqlite/sqlite_*_store.h, store/postgres/pg_stores.h).
// Schemas stay with each backend's migrations.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/file_store.h"
#include "store/ledger_store.h"
#include "store/sql/connection.h"
#include "store/voice_store.h"
#include "util/clock.h"

namespace imago::sql {

std::unique_ptr<VoiceStore> make_voice_store(std::unique_ptr<Database> db, Clock& clock);
std::unique_ptr<FileStore> make_file_store(std::unique_ptr<Database> db, Clock& clock);
std::unique_ptr<LedgerStore> make_ledger_store(std::unique_ptr<Database> db, Clock& clock);

// --- inside a write transaction on `c` (a store's work that commits together with another's) ---

// Applies a credit movement (billing/) so that it commits with the work it pays for (SPEC 8.6).
// Locks the account row first on PostgreSQL, so operations on one account are serialized across
// nodes; then claims the operation key (a known one replays) and applies the movement with a
// conditional update. Idempotent by (account_id, operation_key).
Result<LedgerEntry> apply_ledger_op(Connection& c, const LedgerOp& op, int64_t now_s);
// The entry recorded under an operation key, if any.
std::optional<LedgerEntry> load_ledger_entry(Connection& c, const std::string& account_id,
                                             const std::string& key);

// Agent artifacts are registered with the outcome that made them.
void insert_file(Connection& c, const FileRecord& f);
// Deletes the agent's file records and returns their blob keys.
std::vector<std::string> delete_agent_files(Connection& c, const std::string& account_id,
                                            const std::string& agent_code);
// Deletes the given file records (replaced artifacts) and returns their blob keys.
std::vector<std::string> delete_files(Connection& c, const std::vector<std::string>& ids);

}  // namespace imago::sql

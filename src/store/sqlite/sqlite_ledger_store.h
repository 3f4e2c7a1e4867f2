// SQLite ledger. apply_ledger_op() is exposed so that other SQLite stores can charge credits in
// the same transaction as the work the charge pays for (SPEC 8.6: they commit together or not at
// all), e.g. creating an agent and its generation job.
#pragma once
#include <memory>

#include "store/ledger_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

// Must run inside a write transaction on `c`. Idempotent by (account_id, operation_key).
Result<LedgerEntry> apply_ledger_op(Conn& c, const LedgerOp& op, int64_t now_s);
// The entry recorded under an operation key, if any.
std::optional<LedgerEntry> load_ledger_entry(Conn& c, const std::string& account_id, const std::string& key);

std::unique_ptr<LedgerStore> make_ledger_store(Db& db, Clock& clock);

}  // namespace imago::sqlite

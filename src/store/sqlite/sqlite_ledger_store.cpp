// The ledger on SQLite: the shared store (store/sql/), and its in-transaction helpers for the
// SQLite stores not on the shared stores yet.
#include "store/sqlite/sqlite_ledger_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago::sqlite {

std::unique_ptr<LedgerStore> make_ledger_store(Db& db, Clock& clock) {
  return sql::make_ledger_store(sql::wrap(db), clock);
}

Result<LedgerEntry> apply_ledger_op(Conn& c, const LedgerOp& op, int64_t now_s) {
  sql::SqliteConnection conn(c);
  return sql::apply_ledger_op(conn, op, now_s);
}

std::optional<LedgerEntry> load_ledger_entry(Conn& c, const std::string& account_id, const std::string& key) {
  sql::SqliteConnection conn(c);
  return sql::load_ledger_entry(conn, account_id, key);
}

}  // namespace imago::sqlite

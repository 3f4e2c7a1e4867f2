// The PostgreSQL factories of the shared SQL stores (store/sql/sql_stores.h).
#include "store/postgres/pg_stores.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago::pg {

std::unique_ptr<VoiceStore> make_voice_store(Db& db, Clock& clock) {
  return sql::make_voice_store(sql::wrap(db), clock);
}

std::unique_ptr<FileStore> make_file_store(Db& db, Clock& clock) {
  return sql::make_file_store(sql::wrap(db), clock);
}

std::unique_ptr<LedgerStore> make_ledger_store(Db& db, Clock& clock) {
  return sql::make_ledger_store(sql::wrap(db), clock);
}

// In-transaction helpers for the PostgreSQL stores not on the shared stores yet.

Result<LedgerEntry> apply_ledger_op(Conn& c, const LedgerOp& op, int64_t now_s) {
  sql::PgConnection conn(c);
  return sql::apply_ledger_op(conn, op, now_s);
}

std::optional<LedgerEntry> load_ledger_entry(Conn& c, const std::string& account_id, const std::string& key) {
  sql::PgConnection conn(c);
  return sql::load_ledger_entry(conn, account_id, key);
}

void insert_file(Conn& c, const FileRecord& f) {
  sql::PgConnection conn(c);
  sql::insert_file(conn, f);
}

std::vector<std::string> delete_agent_files(Conn& c, const std::string& account_id,
                                            const std::string& agent_code) {
  sql::PgConnection conn(c);
  return sql::delete_agent_files(conn, account_id, agent_code);
}

std::vector<std::string> delete_files(Conn& c, const std::vector<std::string>& ids) {
  sql::PgConnection conn(c);
  return sql::delete_files(conn, ids);
}

}  // namespace imago::pg

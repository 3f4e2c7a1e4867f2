// Files on SQLite: the shared store (store/sql/), and its in-transaction helpers for the SQLite
// agent store, which is not on the shared stores yet.
#include "store/sqlite/sqlite_file_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago::sqlite {

std::unique_ptr<FileStore> make_file_store(Db& db, Clock& clock) {
  return sql::make_file_store(sql::wrap(db), clock);
}

void insert_file(Conn& c, const FileRecord& f) {
  sql::SqliteConnection conn(c);
  sql::insert_file(conn, f);
}

std::vector<std::string> delete_agent_files(Conn& c, const std::string& account_id,
                                            const std::string& agent_code) {
  sql::SqliteConnection conn(c);
  return sql::delete_agent_files(conn, account_id, agent_code);
}

std::vector<std::string> delete_files(Conn& c, const std::vector<std::string>& ids) {
  sql::SqliteConnection conn(c);
  return sql::delete_files(conn, ids);
}

}  // namespace imago::sqlite

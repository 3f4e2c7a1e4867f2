// The SQLite factory of the shared store (store/sql/); the schema is store/sql/schema.cpp.
#include "store/sqlite/sqlite_account_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago::sqlite {

std::unique_ptr<AccountStore> make_account_store(Db& db, Clock& clock) {
  return sql::make_account_store(sql::wrap(db), clock);
}

}  // namespace imago::sqlite

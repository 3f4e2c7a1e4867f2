// The SQLite factory of the shared store (store/sql/); the schema is store/sql/schema.cpp.
#include "store/sqlite/sqlite_job_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago::sqlite {

std::unique_ptr<JobStore> make_job_store(Db& db, Clock& clock) {
  return sql::make_job_store(sql::wrap(db), clock);
}

}  // namespace imago::sqlite

// The SQLite factory of the shared store (store/sql/); the schema is store/sql/schema.cpp.
#include "store/sqlite/sqlite_member_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago::sqlite {

std::unique_ptr<MemberStore> make_member_store(Db& db, Clock& clock) {
  return sql::make_member_store(sql::wrap(db), clock);
}

std::unique_ptr<DeviceGrantStore> make_device_grant_store(Db& db) {
  return sql::make_device_grant_store(sql::wrap(db));
}

}  // namespace imago::sqlite

// The SQLite factory of the shared store (store/sql/); the schema is store/sql/schema.cpp.
#include "store/sqlite/sqlite_webhook_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago {

namespace sqlite {

std::unique_ptr<WebhookStore> make_webhook_store(Db& db, Clock& clock) {
  return sql::make_webhook_store(sql::wrap(db), clock);
}

}  // namespace sqlite
}  // namespace imago

// Webhooks on SQLite: the schema (migrations 300-399) and the shared store (store/sql/).
#include "store/sqlite/sqlite_webhook_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/migrations.h"

namespace imago {

namespace sqlite {

std::vector<Migration> webhook_migrations() {
  return {
      {300, "webhooks",
       "CREATE TABLE webhooks ("
       " id TEXT PRIMARY KEY,"
       " account_id TEXT NOT NULL,"
       " url TEXT NOT NULL,"
       " events TEXT NOT NULL DEFAULT '[]',"
       " description TEXT,"
       " secret TEXT NOT NULL,"
       " active INTEGER NOT NULL DEFAULT 1,"
       " created_at INTEGER NOT NULL,"
       " updated_at INTEGER NOT NULL);"
       "CREATE INDEX webhooks_by_account ON webhooks(account_id, created_at);"
       "CREATE TABLE webhook_deliveries ("
       " id TEXT PRIMARY KEY,"
       " webhook_id TEXT NOT NULL,"
       " account_id TEXT NOT NULL,"
       " event_type TEXT NOT NULL,"
       " payload TEXT NOT NULL,"
       " state TEXT NOT NULL,"
       " attempts INTEGER NOT NULL DEFAULT 0,"
       " last_status_code INTEGER,"
       " last_error TEXT,"
       " created_at INTEGER NOT NULL,"
       " updated_at INTEGER NOT NULL,"
       " delivered_at INTEGER);"
       "CREATE INDEX deliveries_by_webhook ON webhook_deliveries(webhook_id, created_at);"
       "CREATE TABLE webhook_attempts ("
       " delivery_id TEXT NOT NULL,"
       " attempt INTEGER NOT NULL,"
       " status_code INTEGER,"
       " error TEXT,"
       " duration_ms INTEGER NOT NULL,"
       " created_at INTEGER NOT NULL,"
       " PRIMARY KEY(delivery_id, attempt));"},
  };
}

std::unique_ptr<WebhookStore> make_webhook_store(Db& db, Clock& clock) {
  return sql::make_webhook_store(sql::wrap(db), clock);
}

}  // namespace sqlite
}  // namespace imago

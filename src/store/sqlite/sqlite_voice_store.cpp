// Designed voices on SQLite: the schema (migrations 100-199) and the shared store (store/sql/).
#include "store/sqlite/sqlite_voice_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/migrations.h"

namespace imago::sqlite {

std::vector<Migration> speech_migrations() {
  return {
      {100, "designed voices",
       "CREATE TABLE voices ("
       "  code TEXT PRIMARY KEY,"
       "  account_id TEXT NOT NULL,"
       "  name TEXT NOT NULL,"
       "  base_voice TEXT NOT NULL,"
       "  description TEXT NOT NULL DEFAULT '',"
       "  gender REAL NOT NULL DEFAULT 0,"
       "  pitch REAL NOT NULL DEFAULT 0,"
       "  rate REAL NOT NULL DEFAULT 0,"
       "  brightness REAL NOT NULL DEFAULT 0,"
       "  created_at INTEGER NOT NULL,"
       "  updated_at INTEGER NOT NULL,"
       "  revoked_at INTEGER"  // revoked codes stay so that they can never be reissued
       ");"
       "CREATE INDEX voices_by_account ON voices(account_id, created_at);"},
  };
}

std::unique_ptr<VoiceStore> make_sqlite_voice_store(Db& db, Clock& clock) {
  return sql::make_voice_store(sql::wrap(db), clock);
}

}  // namespace imago::sqlite

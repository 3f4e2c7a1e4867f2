// Self-hosted session meters on SQLite: the schema (live sessions' range, 400-499) and the shared
// store (store/sql/).
#include "store/sqlite/sqlite_live_meter_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/migrations.h"

namespace imago::sqlite {

std::vector<Migration> live_migrations() {
  return {
      {410, "self-hosted live meters", R"sql(
-- One row per self-hosted session (docs/billing.md, "Self-hosted minutes"): where its billable
-- clock started and the first minute not yet charged, so a restart continues the count.
CREATE TABLE live_meters (
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  meter_id     TEXT NOT NULL,
  billing_type TEXT NOT NULL,
  started_us   INTEGER NOT NULL,
  last_seen_us INTEGER NOT NULL,
  next_minute  INTEGER NOT NULL,
  PRIMARY KEY (account_id, meter_id)
);
)sql"},
  };
}

std::unique_ptr<LiveMeterStore> make_live_meter_store(Db& db, Clock& clock) {
  return sql::make_live_meter_store(sql::wrap(db), clock);
}

}  // namespace imago::sqlite

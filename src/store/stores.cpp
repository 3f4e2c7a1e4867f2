#include "store/stores.h"

#include "store/sqlite/db.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_account_store.h"
#include "store/sqlite/sqlite_agent_store.h"
#include "store/sqlite/sqlite_file_store.h"
#include "store/sqlite/sqlite_job_store.h"
#include "store/sqlite/sqlite_ledger_store.h"
#include "store/sqlite/sqlite_member_store.h"
#include "store/sqlite/sqlite_voice_store.h"
#include "store/sqlite/sqlite_webhook_store.h"

namespace imago {

Stores::Stores() = default;
Stores::~Stores() {
  // Stores hold references to the database: drop them first.
  accounts.reset();
  ledger.reset();
  voices.reset();
  agents.reset();
  files.reset();
  jobs.reset();
  webhooks.reset();
  members.reset();
  device_grants.reset();
}
Stores::Stores(Stores&&) noexcept = default;
Stores& Stores::operator=(Stores&&) noexcept = default;

Result<Stores> open_stores(const std::string& database_url, Clock& clock) {
  if (database_url.rfind("postgres://", 0) == 0 || database_url.rfind("postgresql://", 0) == 0) {
    return Status::Invalid("PostgreSQL is not supported by this build yet; use sqlite:PATH");
  }
  if (database_url.rfind("sqlite:", 0) != 0) {
    return Status::Invalid("database URL must start with sqlite: (got '" + database_url + "')");
  }
  const std::string path = database_url.substr(7);
  auto db = sqlite::Db::open(path, 16);
  if (!db.ok()) return db.status();
  Status m = (*db)->migrate(sqlite::all_migrations());
  if (!m.ok()) return Status::Internal("migrating " + path + ": " + m.message());

  Stores s;
  s.sqlite_db = std::move(db).value();
  sqlite::Db& d = *s.sqlite_db;
  s.accounts = sqlite::make_account_store(d, clock);
  s.ledger = sqlite::make_ledger_store(d, clock);
  s.voices = sqlite::make_sqlite_voice_store(d, clock);
  s.agents = sqlite::make_agent_store(d, clock);
  s.files = sqlite::make_file_store(d, clock);
  s.jobs = sqlite::make_job_store(d, clock);
  s.webhooks = sqlite::make_webhook_store(d, clock);
  s.members = sqlite::make_member_store(d, clock);
  s.device_grants = sqlite::make_device_grant_store(d);
  return s;
}

}  // namespace imago

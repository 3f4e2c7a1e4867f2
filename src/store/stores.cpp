#include "store/stores.h"

#include "store/cached_account_store.h"
#include "store/postgres/db.h"
#include "store/postgres/pg_stores.h"
#include "store/sql/schema.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/db.h"
#include "util/log.h"

namespace imago {

namespace {

bool is_postgres_url(const std::string& url) {
  return url.rfind("postgres://", 0) == 0 || url.rfind("postgresql://", 0) == 0;
}

// The table stores, one implementation on either engine (store/sql/).
void add_table_stores(Stores& s, sql::Database& db, Clock& clock) {
  s.accounts = sql::make_account_store(db, clock);
  s.ledger = sql::make_ledger_store(db, clock);
  s.voices = sql::make_voice_store(db, clock);
  s.agents = sql::make_agent_store(db, clock);
  s.files = sql::make_file_store(db, clock);
  s.jobs = sql::make_job_store(db, clock);
  s.webhooks = sql::make_webhook_store(db, clock);
  s.members = sql::make_member_store(db, clock);
  s.device_grants = sql::make_device_grant_store(db);
  s.live_meters = sql::make_live_meter_store(db, clock);
  s.sessions = sql::make_session_store(db, clock);
}

// Connections per node: request handlers, job workers, the rate limiter and blob streams share them.
constexpr int kPgPoolSize = 24;

Result<Stores> open_postgres(const std::string& url, Clock& clock) {
  auto db = pg::Db::open(url, kPgPoolSize);
  if (!db.ok()) return db.status();
  Status m = sql::migrate(**db);
  if (!m.ok()) return Status::Internal("migrating PostgreSQL: " + m.message());
  Stores s;
  s.pg_db = std::move(db).value();
  pg::Db& d = *s.pg_db;
  add_table_stores(s, d, clock);
  // Key lookups are remembered and confirmed against the database's key-change counter, read in
  // the request's rate-limit statement (docs/http.md, "Authentication cache").
  s.accounts = std::make_unique<CachedAccountStore>(std::move(s.accounts), clock);
  s.secrets = pg::make_secret_store(d);
  s.rooms = pg::make_room_directory(d);
  return s;
}

}  // namespace

Stores::Stores() = default;
Stores::~Stores() {
  job_listener_.reset();
  rooms.reset();  // its threads read the database
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
  live_meters.reset();
  sessions.reset();
  secrets.reset();
}
Stores::Stores(Stores&&) noexcept = default;
Stores& Stores::operator=(Stores&&) noexcept = default;

std::string Stores::backend() const {
  return pg_db ? "postgres" : "sqlite";
}

void Stores::on_job_enqueued(std::function<void()> wake) {
  if (!pg_db) return;
  job_listener_ = std::make_unique<pg::Listener>(
      pg_db->url(), std::vector<std::string>{pg::kJobsChannel},
      [wake = std::move(wake)](const std::string&, const std::string&) { wake(); });
}

Result<std::optional<std::string>> Stores::shared_secret(const std::string& name,
                                                         const std::function<std::string()>& generate) {
  if (!secrets) return std::optional<std::string>();
  auto v = secrets->get_or_create(name, generate());  // the first node's value wins
  if (!v.ok()) return v.status();
  return std::optional<std::string>(std::move(v).value());
}

Result<Stores> open_stores(const std::string& database_url, Clock& clock) {
  if (is_postgres_url(database_url)) return open_postgres(database_url, clock);
  if (database_url.rfind("sqlite:", 0) != 0) {
    return Status::Invalid("database URL must start with sqlite: or postgres:// (got '" + database_url +
                           "')");
  }
  const std::string path = database_url.substr(7);
  auto db = sqlite::Db::open(path, 16);
  if (!db.ok()) return db.status();
  Status m = sql::migrate(**db);
  if (!m.ok()) return Status::Internal("migrating " + path + ": " + m.message());

  Stores s;
  s.sqlite_db = std::move(db).value();
  sqlite::Db& d = *s.sqlite_db;
  add_table_stores(s, d, clock);
  // Every process on this file (server, workers, the admin CLI) shares the change counter beside
  // it, so authentication can skip the database read without making revocation late
  // (docs/http.md, "Authentication cache").
  if (path != ":memory:") {
    auto changes = SharedCounter::open(path + "-auth-changes", path);
    if (changes.ok()) {
      s.accounts =
          std::make_unique<CachedAccountStore>(std::move(s.accounts), std::move(changes).value(), clock);
    } else {
      log::warn("auth_cache_disabled", {{"reason", changes.status().message()}});
    }
  }
  s.rooms = make_local_room_directory();
  return s;
}

Result<std::vector<MigrationInfo>> migrations_of(const std::string& database_url, bool apply) {
  std::unique_ptr<sql::Database> db;
  if (is_postgres_url(database_url)) {
    auto d = pg::Db::open(database_url, 1);
    if (!d.ok()) return d.status();
    db = std::move(d).value();
  } else if (database_url.rfind("sqlite:", 0) == 0) {
    auto d = sqlite::Db::open(database_url.substr(7), 1);
    if (!d.ok()) return d.status();
    db = std::move(d).value();
  } else {
    return Status::Invalid("database URL must start with sqlite: or postgres:// (got '" + database_url +
                           "')");
  }
  if (apply) {
    if (Status m = sql::migrate(*db); !m.ok()) return m;
  }
  auto applied = sql::applied_migrations(*db);
  if (!applied.ok()) return applied.status();
  std::vector<MigrationInfo> out;
  for (const auto& m : sql::migrations()) {
    MigrationInfo i{m.version, m.name, false, 0};
    for (const auto& a : *applied) {
      if (a.version == m.version) i.applied = true, i.applied_at = a.applied_at;
    }
    out.push_back(i);
  }
  return out;
}

}  // namespace imago

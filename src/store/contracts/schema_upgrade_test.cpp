// Databases written before the migration history was one (SQLite with the members tables at 500,
// PostgreSQL with its own list) open and migrate forward: every version recorded, the data
// readable through the stores, and the schema the same as a database created today.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "billing/operations.h"
#include "store/postgres/db.h"
#include "store/postgres/test_postgres.h"
#include "store/sql/schema.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/db.h"
#include "store/stores.h"

namespace imago::sql {
namespace {

std::string read_testdata(const std::string& name) {
  std::ifstream in(std::string(IMAGO_STORE_TESTDATA) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The dump's rows, read back through the stores of the migrated database.
void expect_old_data_readable(Stores& s) {
  auto owner = s.accounts->find_active_key("hash-old");
  ASSERT_TRUE(owner.ok()) << owner.status().message();
  const std::string acct = owner->account.id;
  EXPECT_EQ(owner->account.name, "Old Co");
  auto balance = s.ledger->balance(acct);
  ASSERT_TRUE(balance.ok());
  auto ledger = s.ledger->list(acct, 10, 0);
  ASSERT_TRUE(ledger.ok());
  EXPECT_GE(ledger->total, 3);  // the top-up, a charge, the agent's generation
  EXPECT_EQ(s.voices->get(acct, "11111111-2222-3333-4444-555555555555")->name, "Old voice");
  auto agent = s.agents->get(acct, "old-bot");
  ASSERT_TRUE(agent.ok()) << agent.status().message();
  EXPECT_EQ(agent->name, "Old bot");
  EXPECT_EQ(s.files->get(acct, "file_old")->blob_key, "agents/old-bot/file_old.png");
  EXPECT_EQ(s.jobs->get("job_old")->state, "queued");
  EXPECT_EQ(s.webhooks->get(acct, "wh_old")->url, "https://example.com/hook");
  EXPECT_EQ(s.members->find_member_by_email("old@example.com")->member.account_id, acct);
  EXPECT_TRUE(s.live_meters->get(acct, "meter_old").ok());
  auto transcript = s.sessions->transcript(acct, "ses_old");
  ASSERT_TRUE(transcript.ok());
  ASSERT_EQ(transcript->size(), 1u);
  EXPECT_EQ((*transcript)[0].text, "hello");

  // And new writes work on the old tables.
  AgentRecord a;
  a.code = "new-bot";
  a.account_id = acct;
  a.name = "New bot";
  a.system_prompt = "hi";
  NewJob job;
  job.id = "job_new";
  job.kind = std::string(kJobAgentGenerate);
  job.account_id = acct;
  job.subject = a.code;
  auto created = s.agents->create(a, {}, billing::agent_generation_charge(acct, job.id, a.code), job);
  EXPECT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(s.agents->list(acct, std::nullopt, 10, 0)->total, 2);
}

void expect_every_version_recorded(Database& db) {
  auto applied = applied_migrations(db);
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  std::map<int, std::string> got, want;
  for (const auto& a : *applied) got[a.version] = a.name;
  for (const auto& m : migrations()) want[m.version] = m.name;
  EXPECT_EQ(got, want);
}

// --- SQLite ---

class SqliteUpgrade : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/imago-upgrade-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Every table's and index's definition, as SQLite reports its columns.
  static std::set<std::string> schema_of(const std::string& path) {
    auto db = sqlite::Db::open(path, 1).value();
    auto r = db->read([](Connection& c) {
      std::set<std::string> out;
      auto objects = c.prepare(
          "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
      while (objects.step()) {
        const std::string type = objects.col_text(0), name = objects.col_text(1);
        out.insert(type + " " + name + " on " + objects.col_text(2));
        if (type != "table") continue;
        auto cols = c.prepare(
            "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid");
        cols.bind(1, name);
        while (cols.step()) {
          out.insert(name + "." + cols.col_text(0) + " " + cols.col_text(1) + " notnull=" + cols.col_text(2) +
                     " default=" + cols.col_text(3) + " pk=" + cols.col_text(4));
        }
      }
      return out;
    });
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : std::set<std::string>{};
  }
  std::string dir_;
};

TEST_F(SqliteUpgrade, AFileWrittenBeforeOneHistoryMigratesForward) {
  const std::string old_path = dir_ + "/old.db";
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(old_path.c_str(), &raw), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(raw, read_testdata("sqlite_v540.sql").c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(raw);
  }
  ManualClock clock;
  {
    auto s = open_stores("sqlite:" + old_path, clock);
    ASSERT_TRUE(s.ok()) << s.status().message();
    expect_old_data_readable(*s);
  }
  auto db = sqlite::Db::open(old_path, 1).value();
  expect_every_version_recorded(*db);
  // Opening again finds nothing to do.
  EXPECT_TRUE(migrate(*db).ok());

  const std::string new_path = dir_ + "/new.db";
  ASSERT_TRUE(open_stores("sqlite:" + new_path, clock).ok());
  const auto upgraded = schema_of(old_path);
  EXPECT_GT(upgraded.size(), 100u);
  EXPECT_EQ(upgraded, schema_of(new_path));
}

// --- PostgreSQL ---

// Runs a plain-SQL dump (pg_dump --inserts) on its own connection: the dump resets the session.
void restore(const std::string& url, const std::string& dump) {
  PGconn* c = PQconnectdb(url.c_str());
  ASSERT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
  PGresult* r = PQexec(c, dump.c_str());
  EXPECT_EQ(PQresultStatus(r), PGRES_COMMAND_OK) << PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(c);
}

std::set<std::string> pg_schema_of(Database& db) {
  auto r = db.read([](Connection& c) {
    std::set<std::string> out;
    auto cols = c.prepare(
        "SELECT table_name, column_name, data_type, is_nullable, COALESCE(column_default, '')"
        " FROM information_schema.columns WHERE table_schema = 'public'");
    while (cols.step()) {
      out.insert(cols.col_text(0) + "." + cols.col_text(1) + " " + cols.col_text(2) +
                 " null=" + cols.col_text(3) + " default=" + cols.col_text(4));
    }
    auto indexes = c.prepare("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'");
    while (indexes.step()) out.insert("index " + indexes.col_text(0) + ": " + indexes.col_text(1));
    auto constraints = c.prepare(
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE connamespace = 'public'::regnamespace");
    while (constraints.step())
      out.insert("constraint " + constraints.col_text(0) + "." + constraints.col_text(1) + ": " +
                 constraints.col_text(2));
    auto sequences = c.prepare("SELECT sequence_name FROM information_schema.sequences");
    while (sequences.step()) out.insert("sequence " + sequences.col_text(0));
    return out;
  });
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : std::set<std::string>{};
}

TEST(PostgresUpgrade, ADatabaseWrittenBeforeOneHistoryMigratesForward) {
  pg::TestDatabase old_db, new_db;
  restore(old_db.url(), read_testdata("postgres_v600.sql"));
  ManualClock clock;
  {
    auto s = open_stores(old_db.url(), clock);
    ASSERT_TRUE(s.ok()) << s.status().message();
    expect_old_data_readable(*s);
  }
  auto old_pool = pg::Db::open(old_db.url(), 1).value();
  expect_every_version_recorded(*old_pool);
  EXPECT_TRUE(migrate(*old_pool).ok());

  { ASSERT_TRUE(open_stores(new_db.url(), clock).ok()); }
  auto new_pool = pg::Db::open(new_db.url(), 1).value();
  const auto upgraded = pg_schema_of(*old_pool);
  EXPECT_GT(upgraded.size(), 100u);
  EXPECT_EQ(upgraded, pg_schema_of(*new_pool));
}

// --- one migration on both engines ---

// An empty database of `dialect`, not migrated; removed at the end.
class FreshDatabase {
 public:
  explicit FreshDatabase(Dialect dialect) {
    if (dialect == Dialect::kPostgres) {
      pg_ = std::make_unique<pg::TestDatabase>();
      db_ = pg::Db::open(pg_->url(), 2).value();
    } else {
      char tmpl[] = "/tmp/imago-migration-XXXXXX";
      dir_ = mkdtemp(tmpl);
      db_ = sqlite::Db::open(dir_ + "/t.db", 2).value();
    }
  }
  ~FreshDatabase() {
    db_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  Database& db() { return *db_; }

 private:
  std::string dir_;
  std::unique_ptr<pg::TestDatabase> pg_;
  std::unique_ptr<Database> db_;
};

class MigrationOnEngine : public ::testing::TestWithParam<Dialect> {};

// Migration 205 (agent codes per account) keeps a database written before it working: its agents,
// their files with the old blob keys and their queued jobs are found by (account, code), and
// another account may now use the same code.
TEST_P(MigrationOnEngine, AgentCodesPerAccountKeepExistingAgents) {
  FreshDatabase fresh(GetParam());
  Database& db = fresh.db();
  std::vector<Migration> before;
  for (const auto& m : migrations())
    if (m.version != 205) before.push_back(m);
  ASSERT_TRUE(migrate(db, before).ok());
  ASSERT_TRUE(
      db.write([](Connection& c) -> Status {
          c.exec(
              "INSERT INTO accounts(id, name, plan, topup_credits, created_at) VALUES"
              " ('acct_old', 'Old', 'free', 0, 1), ('acct_new', 'New', 'free', 1000, 1)");
          c.exec(
              "INSERT INTO agents(code, account_id, name, status, system_prompt, model, aspect_ratio,"
              " video_aspect_ratio, duration, created_at, updated_at) VALUES"
              " ('old-bot', 'acct_old', 'Old', 'processing', 'hi', 'essence', '16:9', '16:9', 10, 1, 1),"
              " ('A12BCD3456', 'acct_old', 'Old', 'processing', 'hi', 'essence', '16:9', '16:9', 10, 1, 1)");
          c.exec(
              "INSERT INTO files(id, account_id, agent_code, purpose, blob_key, kind, mime, ext, size,"
              " created_at) VALUES('file_old', 'acct_old', 'old-bot', 'input', 'agents/old-bot/file_old.png',"
              " 'image', 'image/png', 'png', 3, 1)");
          c.exec(
              "INSERT INTO jobs(id, kind, lane, account_id, subject, state, max_attempts, run_at,"
              " created_at, updated_at) VALUES('job_old', 'agent_generate', 'generate', 'acct_old',"
              " 'old-bot', 'queued', 3, 0, 0, 0)");
          return Status::Ok();
        }).ok());
  ASSERT_TRUE(migrate(db).ok());
  ManualClock clock;
  auto agents = make_agent_store(db, clock);
  auto jobs = make_job_store(db, clock);
  auto old = agents->get("acct_old", "old-bot");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->name, "Old");
  EXPECT_EQ(agents->list("acct_old", std::nullopt, 10, 0)->total, 2);
  EXPECT_EQ(agents->get("acct_new", "old-bot").status().code(), Code::kNotFound);
  EXPECT_FALSE(*agents->code_taken("acct_new", "old-bot"));

  AgentRecord a;
  a.code = "old-bot";
  a.account_id = "acct_new";
  a.name = "New";
  a.system_prompt = "hi";
  NewJob job;
  job.id = "job_new";
  job.kind = std::string(kJobAgentGenerate);
  job.account_id = "acct_new";
  job.subject = a.code;
  auto created = agents->create(a, {}, billing::agent_generation_charge("acct_new", job.id, a.code), job);
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(agents->get("acct_old", "old-bot")->name, "Old");
  EXPECT_EQ(agents->get("acct_new", "old-bot")->name, "New");

  // Deleting the old agent cancels its old job and queues its old blob for deletion; the new
  // account's agent and job stay.
  ASSERT_TRUE(agents->remove("acct_old", "old-bot").ok());
  EXPECT_EQ(jobs->get("job_old")->state, "cancelled");
  EXPECT_EQ(jobs->get("job_new")->state, "queued");
  auto cleanup = jobs->list_by_subject("blobs:old-bot");
  ASSERT_EQ(cleanup->size(), 1u);
  EXPECT_NE((*cleanup)[0].payload.find("agents/old-bot/file_old.png"), std::string::npos);
  EXPECT_TRUE(agents->get("acct_new", "old-bot").ok());
}

INSTANTIATE_TEST_SUITE_P(Engines, MigrationOnEngine, ::testing::Values(Dialect::kSqlite, Dialect::kPostgres),
                         [](const auto& info) {
                           return info.param == Dialect::kSqlite ? "sqlite" : "postgres";
                         });

}  // namespace
}  // namespace imago::sql

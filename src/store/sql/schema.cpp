#include "store/sql/schema.h"

#include <regex>

namespace imago::sql {

namespace {

constexpr Dialects same(const char* text) {
  return {text, text};
}
// Cluster state that a single SQLite node keeps in memory or on its own disk.
constexpr Dialects postgres_only(const char* text) {
  return {"", text};
}

// Every column of the agents table (migrations 200, 201, 204), for SQLite's rebuild in 205.
#define AGENT_TABLE_COLUMNS                                                                              \
  "code, account_id, name, status, progress, progress_msg, current_step, error_message, system_prompt, " \
  "model, aspect_ratio, video_aspect_ratio, duration, image_source, video_source, audio_source, "        \
  "image_file, video_file, audio_file, model_file, dynamics_config, dynamics_status, dynamics_file, "    \
  "dynamics_gestures, dynamics_error, movements_file, created_at, updated_at, idempotency_key, voice"

// The agents table's columns after `code` as migration 200 created them, which SQLite's rebuild in
// 205 creates again (text kept as it was).
#define AGENT_COLUMN_DEFS                                                   \
  "  account_id TEXT NOT NULL,\n"                                           \
  "  name TEXT NOT NULL,\n"                                                 \
  "  status TEXT NOT NULL,\n"                                               \
  "  progress DOUBLE PRECISION NOT NULL DEFAULT 0,\n"                       \
  "  progress_msg TEXT NOT NULL DEFAULT '',\n"                              \
  "  current_step TEXT NOT NULL DEFAULT '',\n"                              \
  "  error_message TEXT,\n"                                                 \
  "  system_prompt TEXT NOT NULL,\n"                                        \
  "  model TEXT NOT NULL,\n"                                                \
  "  aspect_ratio TEXT NOT NULL,\n"                                         \
  "  video_aspect_ratio TEXT NOT NULL,\n"                                   \
  "  duration DOUBLE PRECISION NOT NULL,\n"                                 \
  "  image_source TEXT, video_source TEXT, audio_source TEXT,\n"            \
  "  image_file TEXT, video_file TEXT, audio_file TEXT, model_file TEXT,\n" \
  "  dynamics_config TEXT NOT NULL DEFAULT '{}',\n"                         \
  "  dynamics_status TEXT,\n"                                               \
  "  dynamics_file TEXT,\n"                                                 \
  "  dynamics_gestures TEXT NOT NULL DEFAULT '{}',\n"                       \
  "  dynamics_error TEXT,\n"                                                \
  "  movements_file TEXT,\n"                                                \
  "  created_at BIGINT NOT NULL,\n"                                         \
  "  updated_at BIGINT NOT NULL"

// Written in PostgreSQL's types: BIGINT for Unix times (microseconds for jobs), DOUBLE PRECISION,
// and a `seq BIGSERIAL` where listings need insertion order (SQLite orders by rowid instead).
const std::vector<Migration> kMigrations = {
    {1, "accounts, api keys, ledger", same(R"sql(
CREATE TABLE accounts (
  id             TEXT PRIMARY KEY,
  name           TEXT NOT NULL,
  plan           TEXT NOT NULL,
  limit_generate INTEGER,
  limit_write    INTEGER,
  limit_read     INTEGER,
  plan_credits   BIGINT NOT NULL DEFAULT 0 CHECK (plan_credits >= 0),
  topup_credits  BIGINT NOT NULL DEFAULT 0 CHECK (topup_credits >= 0),
  created_at     BIGINT NOT NULL
);
CREATE TABLE api_keys (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  alias        TEXT NOT NULL,
  secret_hash  TEXT NOT NULL UNIQUE,
  prefix       TEXT NOT NULL,
  last4        TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  last_used_at BIGINT,
  revoked_at   BIGINT
);
CREATE INDEX api_keys_by_account ON api_keys(account_id);
CREATE TABLE ledger (
  seq           BIGSERIAL PRIMARY KEY,
  id            TEXT NOT NULL UNIQUE,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  kind          TEXT NOT NULL,
  amount        BIGINT NOT NULL,
  balance_after BIGINT NOT NULL CHECK (balance_after >= 0),
  reason        TEXT NOT NULL,
  operation_key TEXT NOT NULL,
  reference     TEXT,
  created_at    BIGINT NOT NULL,
  UNIQUE (account_id, operation_key)
);
CREATE INDEX ledger_by_account ON ledger(account_id, seq DESC);
)sql")},
    // An enterprise account's own storage quota in bytes (NULL: the plan's).
    {2, "account storage quota", same("ALTER TABLE accounts ADD COLUMN limit_storage BIGINT;")},
    // Monthly live spend caps in credits (NULL: none), set by the holder and by the operator, and
    // the index the month's live spend is summed with (billing/spend_cap.h).
    {3, "live spend cap", same(R"sql(
ALTER TABLE accounts ADD COLUMN live_spend_cap BIGINT;
ALTER TABLE accounts ADD COLUMN operator_live_spend_cap BIGINT;
CREATE INDEX ledger_by_account_time ON ledger(account_id, created_at);
)sql")},
    // The key-change counter (one row): every write that can change what a key lookup answers
    // (revoke, rotate, plan change) adds one in its own transaction, so a remembered answer is
    // current while the counter still has the value read with it (store/cached_account_store.h).
    // On both engines; SQLite's cache reads its file twin instead (util/shared_counter.h).
    {4, "key change counter", same(R"sql(
CREATE TABLE key_changes (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  value BIGINT NOT NULL
);
INSERT INTO key_changes(id, value) VALUES (1, 0);
)sql")},
    {100, "designed voices", same(R"sql(
CREATE TABLE voices (
  seq BIGSERIAL,
  code        TEXT PRIMARY KEY,
  account_id  TEXT NOT NULL,
  name        TEXT NOT NULL,
  base_voice  TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  gender      DOUBLE PRECISION NOT NULL DEFAULT 0,
  pitch       DOUBLE PRECISION NOT NULL DEFAULT 0,
  rate        DOUBLE PRECISION NOT NULL DEFAULT 0,
  brightness  DOUBLE PRECISION NOT NULL DEFAULT 0,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  revoked_at  BIGINT -- revoked codes stay so that they can never be reissued
);
CREATE INDEX voices_by_account ON voices(account_id, created_at);
)sql")},
    {200, "agents_files_jobs", same(R"sql(
CREATE TABLE agents (
  seq BIGSERIAL,
  code TEXT PRIMARY KEY,
)sql" AGENT_COLUMN_DEFS R"sql();
CREATE INDEX agents_by_account ON agents(account_id, created_at);
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  agent_code TEXT,
  purpose TEXT NOT NULL,
  blob_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  mime TEXT NOT NULL,
  ext TEXT NOT NULL,
  size BIGINT NOT NULL,
  original_name TEXT,
  source_url TEXT,
  created_at BIGINT NOT NULL);
CREATE INDEX files_by_agent ON files(agent_code);
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  lane TEXT NOT NULL,
  account_id TEXT NOT NULL,
  subject TEXT NOT NULL DEFAULT '',
  payload TEXT NOT NULL DEFAULT '{}',
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  run_at BIGINT NOT NULL,
  lease_owner TEXT,
  lease_until BIGINT,
  last_error TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  finished_at BIGINT);
CREATE INDEX jobs_claimable ON jobs(lane, state, run_at);
CREATE INDEX jobs_by_subject ON jobs(subject);
CREATE INDEX jobs_by_account ON jobs(account_id, kind, state);
)sql")},
    {201, "agent_idempotency_keys", same(R"sql(
ALTER TABLE agents ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX agents_by_idempotency_key ON agents(account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
)sql")},
    // When each job was last claimed, as a sequence number: the claim serves the account that was
    // served least recently first (fair share between accounts). PostgreSQL draws the numbers
    // from a sequence; SQLite's single writer counts them itself.
    {202,
     "job_claim_order",
     {R"sql(
ALTER TABLE jobs ADD COLUMN claim_seq BIGINT;
CREATE INDEX jobs_by_claim_seq ON jobs(claim_seq);
CREATE INDEX jobs_account_claims ON jobs(account_id, lane, claim_seq);
)sql",
      R"sql(
ALTER TABLE jobs ADD COLUMN claim_seq BIGINT;
CREATE SEQUENCE job_claim_seq;
CREATE INDEX jobs_by_claim_seq ON jobs(claim_seq);
CREATE INDEX jobs_account_claims ON jobs(account_id, lane, claim_seq);
)sql"}},
    // Storage quotas sum an account's file sizes.
    {203, "files_by_account", same("CREATE INDEX files_by_account ON files(account_id);")},
    {204, "agent_voice", same("ALTER TABLE agents ADD COLUMN voice TEXT NOT NULL DEFAULT '{}';")},
    // Agent codes become a namespace per account: the key is (account_id, code), so two accounts
    // may each have `my-bot`; every existing row keeps its code. SQLite cannot change a primary
    // key in place, so its table is rebuilt (rowids kept: listings order by them).
    {205,
     "agent_codes_per_account",
     {R"sql(
CREATE TABLE agents_by_account_code (
  code TEXT NOT NULL,
)sql" AGENT_COLUMN_DEFS R"sql(,
  idempotency_key TEXT,
  voice TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (account_id, code));
INSERT INTO agents_by_account_code(rowid, )sql" AGENT_TABLE_COLUMNS R"sql()
  SELECT rowid, )sql" AGENT_TABLE_COLUMNS R"sql( FROM agents;
DROP TABLE agents;
ALTER TABLE agents_by_account_code RENAME TO agents;
CREATE INDEX agents_by_account ON agents(account_id, created_at);
CREATE UNIQUE INDEX agents_by_idempotency_key ON agents(account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX files_by_account_agent ON files(account_id, agent_code);
)sql",
      R"sql(
ALTER TABLE agents DROP CONSTRAINT agents_pkey;
ALTER TABLE agents ADD PRIMARY KEY (account_id, code);
CREATE INDEX files_by_account_agent ON files(account_id, agent_code);
)sql"}},
    // The claim walks accounts with queued work (a loose scan of jobs_fair_claim) and counts
    // running jobs through the small partial index, so its cost does not grow with the queue.
    // PostgreSQL's claim also reads the kind from the index (INCLUDE).
    {210,
     "job_fair_claim_indexes",
     {R"sql(
CREATE INDEX jobs_fair_claim ON jobs(lane, state, account_id, run_at, created_at);
CREATE INDEX jobs_running ON jobs(account_id, lane, kind, lease_until) WHERE state = 'running';
CREATE INDEX jobs_leases ON jobs(lane, lease_until) WHERE state = 'running';
)sql",
      R"sql(
CREATE INDEX jobs_fair_claim ON jobs(lane, state, account_id, run_at, created_at) INCLUDE (kind);
CREATE INDEX jobs_running ON jobs(account_id, lane, kind, lease_until) WHERE state = 'running';
CREATE INDEX jobs_leases ON jobs(lane, lease_until) WHERE state = 'running';
)sql"}},
    // Free movement regenerations get their own lane and workers (docs/jobs.md), queued and running
    // ones included: a running one keeps its lease and finishes where it is.
    {220, "job_background_lane",
     same("UPDATE jobs SET lane = 'background' WHERE kind = 'dynamics_movements';")},
    {300, "webhooks", same(R"sql(
CREATE TABLE webhooks (
  seq BIGSERIAL,
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL DEFAULT '[]',
  description TEXT,
  secret TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL);
CREATE INDEX webhooks_by_account ON webhooks(account_id, created_at);
CREATE TABLE webhook_deliveries (
  seq BIGSERIAL,
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status_code INTEGER,
  last_error TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  delivered_at BIGINT);
CREATE INDEX deliveries_by_webhook ON webhook_deliveries(webhook_id, created_at);
CREATE TABLE webhook_attempts (
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  duration_ms BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY(delivery_id, attempt));
)sql")},
    {410, "self-hosted live meters", same(R"sql(
-- One row per self-hosted session (docs/billing.md, "Self-hosted minutes"): where its billable
-- clock started and the first minute not yet charged, so a restart or another node continues the
-- count. A heartbeat locks the row while it charges a minute.
CREATE TABLE live_meters (
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  meter_id     TEXT NOT NULL,
  billing_type TEXT NOT NULL,
  started_us   BIGINT NOT NULL,
  last_seen_us BIGINT NOT NULL,
  next_minute  BIGINT NOT NULL,
  PRIMARY KEY (account_id, meter_id)
);
)sql")},
    {420, "live sessions, transcripts, recordings", same(R"sql(
-- One row per cloud live session (docs/sessions.md): written by the node running it, read by any.
-- The recording's MP4 is a file record (purpose 'recording'), so it counts against the storage quota
-- and goes with the agent; recording_file_id then points at nothing and the session shows none.
-- Transcript lines carry the writer's seq (unique per session), so a retried write adds nothing.
CREATE TABLE live_sessions (
  session_id            TEXT PRIMARY KEY,
  account_id            TEXT NOT NULL REFERENCES accounts(id),
  agent_code            TEXT NOT NULL,
  room_id               TEXT NOT NULL,
  billing_type          TEXT NOT NULL,
  status                TEXT NOT NULL CHECK (status IN ('active', 'ended')),
  started_us            BIGINT NOT NULL,
  ended_us              BIGINT,
  minutes_charged       BIGINT NOT NULL DEFAULT 0,
  end_reason            TEXT,
  viewers_peak          BIGINT NOT NULL DEFAULT 0,
  recording_status      TEXT,
  recording_file_id     TEXT,
  recording_bytes       BIGINT,
  recording_duration_ms BIGINT,
  recording_video_codec TEXT,
  recording_audio_codec TEXT
);
CREATE INDEX live_sessions_by_account ON live_sessions(account_id, started_us DESC, session_id DESC);
CREATE TABLE session_transcripts (
  session_id TEXT NOT NULL REFERENCES live_sessions(session_id) ON DELETE CASCADE,
  seq        BIGINT NOT NULL,
  role       TEXT NOT NULL,
  source     TEXT NOT NULL,
  text       TEXT NOT NULL,
  start_ms   BIGINT NOT NULL,
  end_ms     BIGINT NOT NULL,
  PRIMARY KEY (session_id, seq)
);
)sql")},
    {500, "cluster: rate limits, blobs, shared secrets", postgres_only(R"sql(
-- Token buckets and fixed windows: losing them in a crash only refills buckets, so no WAL.
CREATE UNLOGGED TABLE rate_buckets (
  key        TEXT PRIMARY KEY,
  tokens     DOUBLE PRECISION NOT NULL,
  updated_at DOUBLE PRECISION NOT NULL,  -- database clock, seconds since the epoch
  allowed    BOOLEAN NOT NULL            -- the verdict of the last take (read back by RETURNING)
);
CREATE UNLOGGED TABLE rate_windows (
  key        TEXT PRIMARY KEY,
  count      INTEGER NOT NULL,
  opened_at  DOUBLE PRECISION NOT NULL
);
CREATE TABLE blobs (
  key        TEXT PRIMARY KEY,
  size       BIGINT NOT NULL,
  chunks     INTEGER NOT NULL,
  version    BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);
-- Chunks of each version; a new version is written beside the old one and swapped in by one row
-- update, so readers see the old or the new content, never a mix.
CREATE TABLE blob_chunks (
  key     TEXT NOT NULL,
  version BIGINT NOT NULL,
  n       INTEGER NOT NULL,
  data    BYTEA NOT NULL,
  PRIMARY KEY (key, version, n)
);
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;  -- chunks are media: no compression
CREATE SEQUENCE blob_versions;
CREATE TABLE cluster_secrets (
  name       TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
)sql")},
    {510, "cluster: room leases and room commands", postgres_only(R"sql(
-- Which node runs which live room: a lease the owner renews (database clock, microseconds). Logged
-- (unlike the rate limits): a database crash must not make every node think it lost its rooms.
CREATE TABLE room_leases (
  account_id  TEXT NOT NULL,
  room_id     TEXT NOT NULL,
  agent_code  TEXT NOT NULL,
  session_id  TEXT NOT NULL,
  node_id     TEXT NOT NULL,
  node_url    TEXT NOT NULL,  -- where other nodes relay viewers to (--node-url)
  lease_until BIGINT NOT NULL,
  PRIMARY KEY (account_id, room_id)
);
CREATE INDEX room_leases_by_node ON room_leases(node_id);
-- Commands for rooms on another node; pg_notify carries only the id, the row is the command.
CREATE TABLE room_commands (
  id         BIGSERIAL PRIMARY KEY,
  node_id    TEXT NOT NULL,
  session_id TEXT NOT NULL,
  kind       TEXT NOT NULL,
  text       TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX room_commands_by_node ON room_commands(node_id, id);
)sql")},
    {520, "cluster: blob writes in progress", postgres_only(R"sql(
-- A streamed blob write commits its chunks one statement at a time under a fresh version, then
-- swaps the version into `blobs`; until then this row names the chunks, so a write whose node
-- died half way can be found and swept.
CREATE TABLE blob_writes (
  version    BIGINT PRIMARY KEY,
  key        TEXT NOT NULL,
  started_at BIGINT NOT NULL  -- database clock, seconds since the epoch
);
CREATE INDEX blob_writes_by_start ON blob_writes(started_at);
)sql")},
    {530, "cluster: room state in leases", postgres_only(R"sql(
-- The owner's snapshot of each room (JSON), refreshed with the lease, so any node can list the
-- account's rooms (GET /v1/rooms) with their state as of the last renewal.
ALTER TABLE room_leases ADD COLUMN details TEXT NOT NULL DEFAULT '{}';
ALTER TABLE room_leases ADD COLUMN details_at BIGINT NOT NULL DEFAULT 0;  -- database clock, microseconds
)sql")},
    // PostgreSQL's planner only: SQLite's claim reads the index it names (job_store.cpp).
    {540, "cluster: last-claim index serves only the last claim", postgres_only(R"sql(
-- jobs_account_claims exists for the fair claim's "last claim of this account" (MAX(claim_seq)).
-- As a full index it also matched the claim's candidate scan (account_id, lane), and a planner
-- without statistics for a freshly filled queue chose it there: every job of the account read and
-- sorted on each claim (41-66 ms with 100k queued, against 3-4 ms through jobs_fair_claim).
-- Partial on claim_seq IS NOT NULL, it still serves MAX(claim_seq) and nothing else.
DROP INDEX jobs_account_claims;
CREATE INDEX jobs_account_claims ON jobs(account_id, lane, claim_seq) WHERE claim_seq IS NOT NULL;
)sql")},
    {550, "cluster: lapsed room leases", postgres_only(R"sql(
-- When each lease was last renewed (database clock, microseconds). A node that stops renewing has
-- died; after a grace another node ends its sessions (docs/sessions.md, "When a node dies").
ALTER TABLE room_leases ADD COLUMN renewed_at BIGINT NOT NULL DEFAULT 0;
UPDATE room_leases SET renewed_at = details_at;
-- The expired lease of a session whose room another session has claimed since: kept until a sweep
-- has ended that session, which the lease row no longer names.
CREATE TABLE lapsed_leases (
  session_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  room_id    TEXT NOT NULL,
  node_id    TEXT NOT NULL,
  renewed_at BIGINT NOT NULL
);
)sql")},
    {600, "members, dashboard sessions, device grants", same(R"sql(
CREATE TABLE members (
  id                  TEXT PRIMARY KEY,
  account_id          TEXT NOT NULL REFERENCES accounts(id),
  email               TEXT NOT NULL UNIQUE,
  password_hash       TEXT NOT NULL,
  created_at          BIGINT NOT NULL,
  password_changed_at BIGINT NOT NULL
);
CREATE INDEX members_by_account ON members(account_id);
CREATE TABLE dashboard_sessions (
  id           TEXT PRIMARY KEY,
  token_hash   TEXT NOT NULL UNIQUE,
  member_id    TEXT NOT NULL REFERENCES members(id),
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  csrf_token   TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  expires_at   BIGINT NOT NULL,
  revoked_at   BIGINT
);
CREATE INDEX dashboard_sessions_by_member ON dashboard_sessions(member_id);
CREATE TABLE device_grants (
  id           TEXT PRIMARY KEY,
  kind         TEXT NOT NULL,
  secret_hash  TEXT NOT NULL UNIQUE,
  hostname     TEXT NOT NULL,
  user_code    TEXT,
  challenge    TEXT,
  state        TEXT NOT NULL,
  account_id   TEXT,
  member_id    TEXT,
  created_at   BIGINT NOT NULL,
  expires_at   BIGINT NOT NULL,
  interval_s   BIGINT NOT NULL,
  last_poll_at BIGINT NOT NULL DEFAULT 0,
  key_id       TEXT
);
CREATE INDEX device_grants_by_user_code ON device_grants(user_code);
CREATE INDEX device_grants_by_account ON device_grants(account_id);
)sql")},
};

// Versions an engine once recorded under another number: SQLite had the members tables at 500,
// where PostgreSQL has its cluster tables. Moved before anything is applied, matched by name.
struct Renumbered {
  int from, to;
  const char* name;
};
constexpr Renumbered kRenumbered[] = {{500, 600, "members, dashboard sessions, device grants"}};

const char* const kCreateMigrationsTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)";

// One key for the whole schema; any 64-bit number unlikely to be used by other applications.
constexpr Dialects kMigrationLock{"SELECT 1", "SELECT pg_advisory_xact_lock(7316548102938471)"};

}  // namespace

const std::vector<Migration>& migrations() {
  return kMigrations;
}

std::string migration_text(const Migration& m, Dialect d) {
  if (d == Dialect::kPostgres) return m.sql.postgres;
  // SQLite's own names for the same types: INTEGER (an alias of the rowid when it is the primary
  // key), REAL; a table's rowid already gives the insertion order `seq` stands for.
  static const std::regex kSerialKey(R"(\bBIGSERIAL PRIMARY KEY\b)");
  static const std::regex kSeqColumn(R"(\bseq BIGSERIAL,)");
  static const std::regex kBigint(R"(\bBIGINT\b)");
  static const std::regex kDouble(R"(\bDOUBLE PRECISION\b)");
  std::string s = std::regex_replace(m.sql.sqlite, kSerialKey, "INTEGER PRIMARY KEY AUTOINCREMENT");
  s = std::regex_replace(s, kSeqColumn, "");
  s = std::regex_replace(s, kBigint, "INTEGER");
  return std::regex_replace(s, kDouble, "REAL");
}

Status migrate(Database& db, const std::vector<Migration>& list) {
  const Dialect d = db.dialect();
  const std::string create = migration_text({0, "", same(kCreateMigrationsTable)}, d);
  Status st = db.write([&](Connection& c) -> Status {
    c.prepare(kMigrationLock).run();
    c.exec(create);
    for (const auto& r : kRenumbered) {
      c.prepare("UPDATE schema_migrations SET version = ?1 WHERE version = ?2 AND name = ?3")
          .bind(1, r.to)
          .bind(2, r.from)
          .bind(3, r.name)
          .run();
    }
    return Status::Ok();
  });
  if (!st.ok()) return st;
  for (const auto& m : list) {
    st = db.write([&](Connection& c) -> Status {
      c.prepare(kMigrationLock).run();
      auto q = c.prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
      if (q.bind(1, m.version).step()) return Status::Ok();
      const std::string text = migration_text(m, d);
      if (!text.empty()) c.exec(text);
      c.prepare(Dialects{"INSERT INTO schema_migrations(version, name, applied_at)"
                         " VALUES(?, ?, strftime('%s','now'))",
                         "INSERT INTO schema_migrations(version, name, applied_at)"
                         " VALUES(?, ?, EXTRACT(EPOCH FROM now())::bigint)"})
          .bind(1, m.version)
          .bind(2, m.name)
          .run();
      return Status::Ok();
    });
    if (!st.ok())
      return Status(st.code(),
                    "migration " + std::to_string(m.version) + " (" + m.name + "): " + st.message());
  }
  return Status::Ok();
}

Result<std::vector<AppliedMigration>> applied_migrations(Database& db) {
  return db.read([&](Connection& c) -> Result<std::vector<AppliedMigration>> {
    std::vector<AppliedMigration> out;
    auto exists = c.prepare(
        Dialects{"SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
                 "SELECT COUNT(*) FROM pg_class WHERE oid = to_regclass('schema_migrations')"});
    if (!exists.step() || exists.col_int(0) == 0) return out;
    auto q = c.prepare("SELECT version, name, applied_at FROM schema_migrations ORDER BY version");
    while (q.step()) out.push_back({static_cast<int>(q.col_int(0)), q.col_text(1), q.col_int(2)});
    return out;
  });
}

}  // namespace imago::sql

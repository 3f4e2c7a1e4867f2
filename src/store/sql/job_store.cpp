// The durable job queue, on either backend. Claiming is where the two differ most, so each
// dialect has its own claim (kSqliteClaim*, kPgClaim*); everything else is one text.
#include "store/sql/sql_stores.h"
#include "util/random.h"

namespace imago {

std::string_view lane_of(std::string_view kind) {
  if (kind == kJobAgentGenerate || kind == kJobDynamicsGenerate || kind == kJobVideoRender)
    return kLaneGenerate;
  if (kind == kJobDynamicsMovements) return kLaneBackground;
  return kLaneLight;
}

namespace sql {

namespace {

#define JOB_COLUMNS                                                                                    \
  "id, kind, lane, account_id, subject, payload, state, attempts, max_attempts, run_at, lease_owner, " \
  "lease_until, last_error, created_at, updated_at"

// A NULL lease_until reads as 0.
Job read_job(const Stmt& s) {
  Job j;
  s.read(j.id, j.kind, j.lane, j.account_id, j.subject, j.payload, j.state, j.attempts, j.max_attempts,
         j.run_at_us, j.lease_owner, j.lease_until_us, j.last_error, j.created_at_us, j.updated_at_us);
  return j;
}

std::optional<Job> load_job(Connection& c, const std::string& id) {
  return c.first(read_job, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?", id);
}

// --- SQLite's claim ---

// The claim's cost must not grow with the depth of the queue: candidates are bounded by
// accounts, not jobs. A loose index scan (recursive CTE over jobs_fair_claim) finds the accounts
// with queued work in the lane; each contributes its oldest due job whose kind has a free
// per-account slot; accounts go by fewest running jobs in the lane, then least recently served
// (claim_seq), so a flood of one account's jobs delays another account's job by at most the jobs
// already running. PostgreSQL runs the same plan in one locking statement (kPgClaimFairSql; docs/jobs.md).
constexpr const char* kSqliteClaimFairSql = R"sql(
WITH RECURSIVE accts(account_id) AS (
  SELECT (SELECT account_id FROM jobs WHERE lane = ?1 AND state = 'queued' ORDER BY account_id LIMIT 1)
  UNION ALL
  SELECT (SELECT j.account_id FROM jobs AS j
          WHERE j.lane = ?1 AND j.state = 'queued' AND j.account_id > a.account_id
          ORDER BY j.account_id LIMIT 1)
  FROM accts AS a WHERE a.account_id IS NOT NULL),
stats AS (
  SELECT a.account_id,
    (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = a.account_id AND r.lane = ?1
       AND r.state = 'running' AND r.lease_until >= ?2) AS running,
    (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = a.account_id AND r.lane = ?1
       AND r.kind = 'agent_generate' AND r.state = 'running' AND r.lease_until >= ?2) AS gen,
    (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = a.account_id AND r.lane = ?1
       AND r.kind = 'dynamics_generate' AND r.state = 'running' AND r.lease_until >= ?2) AS dyn,
    (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = a.account_id AND r.lane = ?1
       AND r.kind = 'dynamics_movements' AND r.state = 'running' AND r.lease_until >= ?2) AS mov,
    COALESCE((SELECT MAX(r.claim_seq) FROM jobs AS r
              WHERE r.account_id = a.account_id AND r.lane = ?1), 0) AS last_seq
  FROM accts AS a WHERE a.account_id IS NOT NULL),
cand AS (
  SELECT s.running, s.last_seq,
    (SELECT j.id FROM jobs AS j
     WHERE j.lane = ?1 AND j.state = 'queued' AND j.account_id = s.account_id AND j.run_at <= ?2
       AND NOT (j.kind = 'agent_generate' AND s.gen >= ?3)
       AND NOT (j.kind = 'dynamics_generate' AND s.dyn >= ?4)
       AND NOT (j.kind = 'dynamics_movements' AND s.mov >= ?4)
     ORDER BY j.run_at, j.created_at LIMIT 1) AS id
  FROM stats AS s)
SELECT c.id FROM cand AS c JOIN jobs AS j ON j.id = c.id
ORDER BY c.running, c.last_seq, j.run_at, j.created_at LIMIT 1)sql";

// A running job whose lease expired (its worker died), if its kind still has a free slot: it
// was admitted once already, so it goes before new work.
constexpr const char* kSqliteClaimExpiredSql = R"sql(
SELECT j.id FROM jobs AS j
WHERE j.lane = ?1 AND j.state = 'running' AND j.lease_until < ?2
  AND (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = j.account_id AND r.lane = ?1
         AND r.kind = j.kind AND r.state = 'running' AND r.lease_until >= ?2)
      < CASE j.kind WHEN 'agent_generate' THEN ?3 WHEN 'dynamics_generate' THEN ?4
                    WHEN 'dynamics_movements' THEN ?4 ELSE 1000000000 END
ORDER BY j.lease_until LIMIT 1)sql";

std::optional<std::string> pick(Connection& c, const char* sql, std::string_view lane, int64_t now) {
  auto q = c.query(sql, lane, now, kMaxRunningAgentJobsPerAccount, kMaxRunningDynamicsJobsPerAccount);
  if (!q.step()) return std::nullopt;
  std::string id = q.col_text(0);
  q.run();  // finish the statement before writing
  return id;
}

// SQLite: one writer at a time, so pick then take. The take is conditional on the job still
// being runnable, so two claimers that picked the same job cannot both take it.
std::optional<Job> claim_on_sqlite(Connection& c, std::string_view lane, const std::string& owner,
                                   int64_t now, int64_t lease_us) {
  // Runnable: a running job whose lease expired (its worker died) first, then the fair pick
  // among queued, due jobs (kSqliteClaimFairSql).
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto picked = pick(c, kSqliteClaimExpiredSql, lane, now);
    if (!picked) picked = pick(c, kSqliteClaimFairSql, lane, now);
    if (!picked) return std::nullopt;
    const std::string& id = *picked;
    if (c.run("UPDATE jobs SET state = 'running', lease_owner = ?, lease_until = ?, attempts = attempts + 1,"
              " updated_at = ?, claim_seq = (SELECT COALESCE(MAX(claim_seq), 0) + 1 FROM jobs) WHERE id = ?"
              " AND ((state = 'queued' AND run_at <= ?) OR (state = 'running' AND lease_until < ?))",
              owner, now + lease_us, now, id, now, now) == 1)
      return load_job(c, id);
  }
  return std::nullopt;
}

// --- PostgreSQL's claim ---

// The claim's cost must not grow with the depth of the queue (100k queued jobs of one account
// must not slow every claim). So candidates are bounded by accounts, not jobs: a loose index scan
// (recursive CTE over jobs_fair_claim) finds the accounts with queued work in the lane, each
// contributes its oldest due jobs whose kind has a free per-account slot (up to the window ?7, so
// that concurrent claimers passing over each other's locked rows still find work when one account
// has all of it), and the accounts are ordered by fewest running jobs in the lane, then least
// recently served (claim_seq). The running counts come from the small partial index of running
// jobs. Cost: O(accounts with queued work x window ?7), whatever the depth of the queue. The
// per-account caps are read from the statement's snapshot, so claimers racing on other nodes can
// exceed a cap by the number of claims in flight at that instant (docs/jobs.md).
constexpr const char* kPgClaimFairSql = R"sql(
WITH RECURSIVE accts(account_id) AS (
  (SELECT account_id FROM jobs WHERE lane = ?4 AND state = 'queued'
   ORDER BY lane, state, account_id LIMIT 1)
  UNION ALL
  SELECT (SELECT j.account_id FROM jobs AS j
          WHERE j.lane = ?4 AND j.state = 'queued' AND j.account_id > a.account_id
          ORDER BY j.lane, j.state, j.account_id LIMIT 1)
  FROM accts AS a WHERE a.account_id IS NOT NULL),
stats AS MATERIALIZED (
  SELECT a.account_id,
    (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = a.account_id AND r.lane = ?4
       AND r.state = 'running' AND r.lease_until >= ?2::bigint) AS running,
    (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = a.account_id AND r.lane = ?4
       AND r.kind = 'agent_generate'
       AND r.state = 'running' AND r.lease_until >= ?2::bigint) AS gen,
    (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = a.account_id AND r.lane = ?4
       AND r.kind = 'dynamics_generate'
       AND r.state = 'running' AND r.lease_until >= ?2::bigint) AS dyn,
    (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = a.account_id AND r.lane = ?4
       AND r.kind = 'dynamics_movements'
       AND r.state = 'running' AND r.lease_until >= ?2::bigint) AS mov,
    COALESCE((SELECT MAX(r.claim_seq) FROM jobs AS r
              WHERE r.account_id = a.account_id AND r.lane = ?4), 0) AS last_seq
  FROM accts AS a WHERE a.account_id IS NOT NULL),
cand AS (
  SELECT c.id, s.running, s.last_seq, c.run_at, c.created_at
  FROM stats AS s CROSS JOIN LATERAL (
    SELECT j.id, j.run_at, j.created_at FROM jobs AS j
    WHERE j.lane = ?4 AND j.state = 'queued' AND j.account_id = s.account_id AND j.run_at <= ?2::bigint
      AND NOT (j.kind = 'agent_generate' AND s.gen >= ?5::bigint)
      AND NOT (j.kind = 'dynamics_generate' AND s.dyn >= ?6::bigint)
      AND NOT (j.kind = 'dynamics_movements' AND s.mov >= ?6::bigint)
    ORDER BY j.run_at, j.created_at LIMIT ?7::bigint) AS c),
-- The best few candidates first, so that the locking join below is a handful of primary-key
-- probes rather than a join against the whole table.
best AS (
  SELECT id, row_number() OVER (ORDER BY running, last_seq, run_at, created_at) AS rank
  FROM cand ORDER BY rank LIMIT 2 * ?7::bigint)
UPDATE jobs SET state = 'running', lease_owner = ?1, lease_until = ?2::bigint + ?3::bigint,
  attempts = attempts + 1, updated_at = ?2::bigint, claim_seq = nextval('job_claim_seq')
WHERE id = (
  SELECT j.id FROM best JOIN jobs AS j ON j.id = best.id
  WHERE j.state = 'queued'  -- rechecked on the locked row: one claimed meanwhile is passed over
  ORDER BY best.rank
  LIMIT 1 FOR UPDATE OF j SKIP LOCKED)
  AND state = 'queued'
RETURNING id, kind, lane, account_id, subject, payload, state, attempts, max_attempts, run_at,
  lease_owner, lease_until, last_error, created_at, updated_at)sql";

// A running job whose lease expired, if its kind still has a free per-account slot.
constexpr const char* kPgClaimExpiredSql = R"sql(
UPDATE jobs SET state = 'running', lease_owner = ?1, lease_until = ?2::bigint + ?3::bigint,
  attempts = attempts + 1, updated_at = ?2::bigint, claim_seq = nextval('job_claim_seq')
WHERE id = (
  SELECT j.id FROM jobs AS j
  WHERE j.lane = ?4 AND j.state = 'running' AND j.lease_until < ?2::bigint
    AND (SELECT COUNT(*) FROM jobs AS r WHERE r.account_id = j.account_id AND r.lane = ?4 AND r.kind = j.kind
           AND r.state = 'running' AND r.lease_until >= ?2::bigint)
        < CASE j.kind WHEN 'agent_generate' THEN ?5::bigint WHEN 'dynamics_generate' THEN ?6::bigint
                      WHEN 'dynamics_movements' THEN ?6::bigint ELSE 1000000000 END
  ORDER BY j.lease_until LIMIT 1 FOR UPDATE SKIP LOCKED)
  AND state = 'running' AND lease_until < ?2::bigint
RETURNING id, kind, lane, account_id, subject, payload, state, attempts, max_attempts, run_at,
  lease_owner, lease_until, last_error, created_at, updated_at)sql";

// `window`: the fair claim's candidates per account (nullopt for the expired-lease claim, which
// has no such parameter).
std::optional<Job> take(Connection& c, const char* sql, std::string_view lane, const std::string& owner,
                        int64_t now, int64_t lease_us, std::optional<int64_t> window = std::nullopt) {
  auto q = c.query(sql, owner, now, lease_us, lane, kMaxRunningAgentJobsPerAccount,
                   kMaxRunningDynamicsJobsPerAccount);
  if (window) q.bind(7, *window);
  if (!q.step()) return std::nullopt;
  return read_job(q);
}

// Candidates per account in the first fair pick, and in the second look when the first found
// nothing. Every claimer sees the same oldest jobs, so the window must exceed what the other
// claimers take while one statement runs: 16 covers a few claimers on a quick statement; with 16
// claimers on one account's 100k queued jobs, or whenever a claim is slow (it took ~20 ms before
// PostgreSQL migration 540), other claimers can take all 16 first (job_claim_benchmark).
constexpr int64_t kFairWindow = 16;
constexpr int64_t kWideFairWindow = 256;

// --- the store ---

#define RELEASE_SQL(greatest)                                                             \
  "UPDATE jobs SET state = 'queued', run_at = ?, lease_owner = NULL, lease_until = NULL," \
  " attempts = " greatest                                                                 \
  "(attempts - 1, 0), updated_at = ? WHERE id = ? AND lease_owner = ?"                    \
  " AND state = 'running'"

class SqlJobStore final : public JobStore, TableStore {
 public:
  using TableStore::TableStore;

  Result<std::string> enqueue(const NewJob& job) override {
    int64_t now = clock_.now_us();
    return db_.write([&](Connection& c) { return insert_job(c, job, now); });
  }

  Result<std::optional<Job>> claim(std::string_view lane, const std::string& owner,
                                   int64_t lease_us) override {
    int64_t now = clock_.now_us();
    if (db_.dialect() == Dialect::kPostgres) {
      return db_.once([&](Connection& c) -> std::optional<Job> {
        // Two single statements, each taking its row with FOR UPDATE SKIP LOCKED so workers on
        // every node claim side by side. First a running job whose lease expired (its worker
        // died): it was admitted once already, so it goes before new work. Then the fair pick.
        if (auto j = take(c, kPgClaimExpiredSql, lane, owner, now, lease_us)) return j;
        if (auto j = take(c, kPgClaimFairSql, lane, owner, now, lease_us, kFairWindow)) return j;
        // Racing claimers can take every candidate of the first pick while work remains, and an
        // empty answer idles a worker for its poll interval: look once more, on a fresh snapshot
        // and with a wide window. On a really empty queue the second look is one index probe.
        return take(c, kPgClaimFairSql, lane, owner, now, lease_us, kWideFairWindow);
      });
    }
    return db_.write([&](Connection& c) { return claim_on_sqlite(c, lane, owner, now, lease_us); });
  }

  Result<bool> heartbeat(const std::string& id, const std::string& owner, int64_t lease_us) override {
    int64_t now = clock_.now_us();
    return db_.write([&](Connection& c) -> bool {
      return c.run(
                 "UPDATE jobs SET lease_until = ?, updated_at = ?"
                 " WHERE id = ? AND lease_owner = ? AND state = 'running'",
                 now + lease_us, now, id, owner) == 1;
    });
  }

  Result<bool> complete(const std::string& id, const std::string& owner) override {
    int64_t now = clock_.now_us();
    return db_.write([&](Connection& c) { return finish_job(c, id, owner, "succeeded", std::nullopt, now); });
  }

  Result<bool> fail(const std::string& id, const std::string& owner, const std::string& error) override {
    int64_t now = clock_.now_us();
    return db_.write([&](Connection& c) { return finish_job(c, id, owner, "failed", error, now); });
  }

  Result<bool> retry(const std::string& id, const std::string& owner, const std::string& error,
                     int64_t run_at_us) override {
    int64_t now = clock_.now_us();
    return db_.write([&](Connection& c) -> bool {
      return c.run(
                 "UPDATE jobs SET state = 'queued', run_at = ?, lease_owner = NULL, lease_until = NULL,"
                 " last_error = ?, updated_at = ? WHERE id = ? AND lease_owner = ? AND state = 'running'",
                 run_at_us, error, now, id, owner) == 1;
    });
  }

  Result<bool> release(const std::string& id, const std::string& owner, int64_t run_at_us) override {
    int64_t now = clock_.now_us();
    return db_.write([&](Connection& c) -> bool {
      return c.run(IMAGO_SQL_GREATEST(RELEASE_SQL), std::max(run_at_us, now), now, id, owner) == 1;
    });
  }

  Result<Job> get(const std::string& id) override {
    return db_.read([&](Connection& c) { return found(load_job(c, id), Status::NotFound("job not found")); });
  }

  Result<int> cancel_subject(const std::string& subject) override {
    int64_t now = clock_.now_us();
    return db_.write([&](Connection& c) { return cancel_jobs_for_subject(c, subject, now); });
  }

  Result<std::vector<Job>> list_by_subject(const std::string& subject) override {
    return db_.read_all(read_job, "SELECT " JOB_COLUMNS " FROM jobs WHERE subject = ? ORDER BY created_at",
                        subject);
  }

  Result<std::vector<Job>> list_by_kind(const std::string& account_id, std::string_view kind,
                                        int max) override {
    return db_.read_all(
        read_job,
        "SELECT " JOB_COLUMNS
        " FROM jobs WHERE account_id = ? AND kind = ? ORDER BY created_at DESC, id DESC LIMIT ?",
        account_id, kind, max);
  }
};

}  // namespace

std::string insert_job(Connection& c, const NewJob& job, int64_t now_us) {
  std::string id = job.id.empty() ? new_id("job") : job.id;
  c.run(
      "INSERT INTO jobs(id, kind, lane, account_id, subject, payload, state, attempts, max_attempts, run_at,"
      " created_at, updated_at) VALUES(?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?)",
      id, job.kind, lane_of(job.kind), job.account_id, job.subject, job.payload,
      std::max(1, job.max_attempts), job.run_at_us > 0 ? job.run_at_us : now_us, now_us, now_us);
  // PostgreSQL: wakes idle workers on every node when this transaction commits (dropped if it
  // rolls back; channel pg::kJobsChannel). SQLite's workers share one process and poll.
  if (c.dialect() == Dialect::kPostgres) c.run("SELECT pg_notify('imago_jobs', ?)", lane_of(job.kind));
  return id;
}

bool job_lease_held(Connection& c, const std::string& id, const std::string& owner) {
  return c.exists(
      IMAGO_SQL_FOR_UPDATE("SELECT 1 FROM jobs WHERE id = ? AND lease_owner = ? AND state = 'running'"), id,
      owner);
}

bool finish_job(Connection& c, const std::string& id, const std::string& owner, std::string_view state,
                const std::optional<std::string>& error, int64_t now_us) {
  return c.run(
             "UPDATE jobs SET state = ?, last_error = COALESCE(?, last_error), lease_until = NULL,"
             " updated_at = ?, finished_at = ? WHERE id = ? AND lease_owner = ? AND state = 'running'",
             state, error, now_us, now_us, id, owner) == 1;
}

int cancel_jobs_for_subject(Connection& c, const std::string& subject, int64_t now_us) {
  return static_cast<int>(
      c.run("UPDATE jobs SET state = 'cancelled', lease_until = NULL, updated_at = ?,"
            " finished_at = ? WHERE subject = ? AND state IN ('queued', 'running')",
            now_us, now_us, subject));
}

int cancel_agent_jobs(Connection& c, const std::string& account_id, const std::string& code, int64_t now_us) {
  return static_cast<int>(
      c.run("UPDATE jobs SET state = 'cancelled', lease_until = NULL, updated_at = ?, finished_at = ?"
            " WHERE subject = ? AND account_id = ? AND state IN ('queued', 'running')",
            now_us, now_us, code, account_id));
}

std::unique_ptr<JobStore> make_job_store(Database& db, Clock& clock) {
  return std::make_unique<SqlJobStore>(db, clock);
}

}  // namespace sql
}  // namespace imago

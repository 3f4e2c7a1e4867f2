// Agents, files and jobs on SQLite: the schema (migrations 200-299) and the shared agent store
// (store/sql/).
#include "store/sqlite/sqlite_agent_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"
#include "store/sqlite/migrations.h"

namespace imago::sqlite {

// Every column of the agents table (migrations 200, 201, 204), for copying rows between versions.
#define AGENT_TABLE_COLUMNS                                                                              \
  "code, account_id, name, status, progress, progress_msg, current_step, error_message, system_prompt, " \
  "model, aspect_ratio, video_aspect_ratio, duration, image_source, video_source, audio_source, "        \
  "image_file, video_file, audio_file, model_file, dynamics_config, dynamics_status, dynamics_file, "    \
  "dynamics_gestures, dynamics_error, movements_file, created_at, updated_at, idempotency_key, voice"

std::vector<Migration> agent_migrations() {
  return {
      {200, "agents_files_jobs",
       "CREATE TABLE agents ("
       " code TEXT PRIMARY KEY,"
       " account_id TEXT NOT NULL,"
       " name TEXT NOT NULL,"
       " status TEXT NOT NULL,"
       " progress REAL NOT NULL DEFAULT 0,"
       " progress_msg TEXT NOT NULL DEFAULT '',"
       " current_step TEXT NOT NULL DEFAULT '',"
       " error_message TEXT,"
       " system_prompt TEXT NOT NULL,"
       " model TEXT NOT NULL,"
       " aspect_ratio TEXT NOT NULL,"
       " video_aspect_ratio TEXT NOT NULL,"
       " duration REAL NOT NULL,"
       " image_source TEXT, video_source TEXT, audio_source TEXT,"
       " image_file TEXT, video_file TEXT, audio_file TEXT, model_file TEXT,"
       " dynamics_config TEXT NOT NULL DEFAULT '{}',"
       " dynamics_status TEXT,"
       " dynamics_file TEXT,"
       " dynamics_gestures TEXT NOT NULL DEFAULT '{}',"
       " dynamics_error TEXT,"
       " movements_file TEXT,"
       " created_at INTEGER NOT NULL,"
       " updated_at INTEGER NOT NULL);"
       "CREATE INDEX agents_by_account ON agents(account_id, created_at);"
       "CREATE TABLE files ("
       " id TEXT PRIMARY KEY,"
       " account_id TEXT NOT NULL,"
       " agent_code TEXT,"
       " purpose TEXT NOT NULL,"
       " blob_key TEXT NOT NULL,"
       " kind TEXT NOT NULL,"
       " mime TEXT NOT NULL,"
       " ext TEXT NOT NULL,"
       " size INTEGER NOT NULL,"
       " original_name TEXT,"
       " source_url TEXT,"
       " created_at INTEGER NOT NULL);"
       "CREATE INDEX files_by_agent ON files(agent_code);"
       "CREATE TABLE jobs ("
       " id TEXT PRIMARY KEY,"
       " kind TEXT NOT NULL,"
       " lane TEXT NOT NULL,"
       " account_id TEXT NOT NULL,"
       " subject TEXT NOT NULL DEFAULT '',"
       " payload TEXT NOT NULL DEFAULT '{}',"
       " state TEXT NOT NULL,"
       " attempts INTEGER NOT NULL DEFAULT 0,"
       " max_attempts INTEGER NOT NULL,"
       " run_at INTEGER NOT NULL,"
       " lease_owner TEXT,"
       " lease_until INTEGER,"
       " last_error TEXT,"
       " created_at INTEGER NOT NULL,"
       " updated_at INTEGER NOT NULL,"
       " finished_at INTEGER);"
       "CREATE INDEX jobs_claimable ON jobs(lane, state, run_at);"
       "CREATE INDEX jobs_by_subject ON jobs(subject);"
       "CREATE INDEX jobs_by_account ON jobs(account_id, kind, state);"},
      {201, "agent_idempotency_keys",
       "ALTER TABLE agents ADD COLUMN idempotency_key TEXT;"
       "CREATE UNIQUE INDEX agents_by_idempotency_key ON agents(account_id, idempotency_key)"
       " WHERE idempotency_key IS NOT NULL;"},
      {202, "job_claim_order",
       // When each job was last claimed, as a sequence number: the claim serves the account that
       // was served least recently first (fair share between accounts).
       "ALTER TABLE jobs ADD COLUMN claim_seq INTEGER;"
       "CREATE INDEX jobs_by_claim_seq ON jobs(claim_seq);"
       "CREATE INDEX jobs_account_claims ON jobs(account_id, lane, claim_seq);"},
      {203, "files_by_account",
       // Storage quotas sum an account's file sizes.
       "CREATE INDEX files_by_account ON files(account_id);"},
      {204, "agent_voice", "ALTER TABLE agents ADD COLUMN voice TEXT NOT NULL DEFAULT '{}';"},
      {205, "agent_codes_per_account",
       // Agent codes become a namespace per account: the key is (account_id, code), so two accounts
       // may each have `my-bot`. SQLite cannot change a primary key in place, so the table is
       // rebuilt (rowids kept: listings order by them); every existing row keeps its code.
       "CREATE TABLE agents_by_account_code ("
       " code TEXT NOT NULL,"
       " account_id TEXT NOT NULL,"
       " name TEXT NOT NULL,"
       " status TEXT NOT NULL,"
       " progress REAL NOT NULL DEFAULT 0,"
       " progress_msg TEXT NOT NULL DEFAULT '',"
       " current_step TEXT NOT NULL DEFAULT '',"
       " error_message TEXT,"
       " system_prompt TEXT NOT NULL,"
       " model TEXT NOT NULL,"
       " aspect_ratio TEXT NOT NULL,"
       " video_aspect_ratio TEXT NOT NULL,"
       " duration REAL NOT NULL,"
       " image_source TEXT, video_source TEXT, audio_source TEXT,"
       " image_file TEXT, video_file TEXT, audio_file TEXT, model_file TEXT,"
       " dynamics_config TEXT NOT NULL DEFAULT '{}',"
       " dynamics_status TEXT,"
       " dynamics_file TEXT,"
       " dynamics_gestures TEXT NOT NULL DEFAULT '{}',"
       " dynamics_error TEXT,"
       " movements_file TEXT,"
       " created_at INTEGER NOT NULL,"
       " updated_at INTEGER NOT NULL,"
       " idempotency_key TEXT,"
       " voice TEXT NOT NULL DEFAULT '{}',"
       " PRIMARY KEY (account_id, code));"
       "INSERT INTO agents_by_account_code(rowid, " AGENT_TABLE_COLUMNS ")"
       " SELECT rowid, " AGENT_TABLE_COLUMNS " FROM agents;"
       "DROP TABLE agents;"
       "ALTER TABLE agents_by_account_code RENAME TO agents;"
       "CREATE INDEX agents_by_account ON agents(account_id, created_at);"
       "CREATE UNIQUE INDEX agents_by_idempotency_key ON agents(account_id, idempotency_key)"
       " WHERE idempotency_key IS NOT NULL;"
       // An agent's files and jobs are found by (account_id, code) from now on.
       "CREATE INDEX files_by_account_agent ON files(account_id, agent_code);"},
      {210, "job_fair_claim_indexes",
       // The claim walks accounts with queued work (a loose scan of jobs_fair_claim) and counts
       // running jobs through the small partial index, so its cost does not grow with the queue.
       "CREATE INDEX jobs_fair_claim ON jobs(lane, state, account_id, run_at, created_at);"
       "CREATE INDEX jobs_running ON jobs(account_id, lane, kind, lease_until) WHERE state = 'running';"
       "CREATE INDEX jobs_leases ON jobs(lane, lease_until) WHERE state = 'running';"},
      // Free movement regenerations get their own lane and workers (docs/jobs.md), queued and
      // running ones included: a running one keeps its lease and finishes where it is.
      {220, "job_background_lane", "UPDATE jobs SET lane = 'background' WHERE kind = 'dynamics_movements';"},
  };
}

std::unique_ptr<AgentStore> make_agent_store(Db& db, Clock& clock) {
  return sql::make_agent_store(sql::wrap(db), clock);
}

}  // namespace imago::sqlite

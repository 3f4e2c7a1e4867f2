// Self-hosted session meters and cloud session records on SQLite: the schema (live sessions'
// range, 400-499) and the shared store (store/sql/).
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
      {420, "live sessions, transcripts, recordings", R"sql(
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
  started_us            INTEGER NOT NULL,
  ended_us              INTEGER,
  minutes_charged       INTEGER NOT NULL DEFAULT 0,
  end_reason            TEXT,
  viewers_peak          INTEGER NOT NULL DEFAULT 0,
  recording_status      TEXT,
  recording_file_id     TEXT,
  recording_bytes       INTEGER,
  recording_duration_ms INTEGER,
  recording_video_codec TEXT,
  recording_audio_codec TEXT
);
CREATE INDEX live_sessions_by_account ON live_sessions(account_id, started_us DESC, session_id DESC);
CREATE TABLE session_transcripts (
  session_id TEXT NOT NULL REFERENCES live_sessions(session_id) ON DELETE CASCADE,
  seq        INTEGER NOT NULL,
  role       TEXT NOT NULL,
  source     TEXT NOT NULL,
  text       TEXT NOT NULL,
  start_ms   INTEGER NOT NULL,
  end_ms     INTEGER NOT NULL,
  PRIMARY KEY (session_id, seq)
);
)sql"},
  };
}

std::unique_ptr<LiveMeterStore> make_live_meter_store(Db& db, Clock& clock) {
  return sql::make_live_meter_store(sql::wrap(db), clock);
}

}  // namespace imago::sqlite

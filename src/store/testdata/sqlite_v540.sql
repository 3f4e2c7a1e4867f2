PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_migrations ( version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
INSERT INTO schema_migrations VALUES(1,'accounts, api keys, ledger',1795794907);
INSERT INTO schema_migrations VALUES(2,'account storage quota',1795794907);
INSERT INTO schema_migrations VALUES(3,'live spend cap',1795794907);
INSERT INTO schema_migrations VALUES(100,'designed voices',1795794907);
INSERT INTO schema_migrations VALUES(200,'agents_files_jobs',1795794907);
INSERT INTO schema_migrations VALUES(201,'agent_idempotency_keys',1795794907);
INSERT INTO schema_migrations VALUES(202,'job_claim_order',1795794907);
INSERT INTO schema_migrations VALUES(203,'files_by_account',1795794907);
INSERT INTO schema_migrations VALUES(204,'agent_voice',1795794907);
INSERT INTO schema_migrations VALUES(205,'agent_codes_per_account',1795794907);
INSERT INTO schema_migrations VALUES(210,'job_fair_claim_indexes',1795794907);
INSERT INTO schema_migrations VALUES(220,'job_background_lane',1795794907);
INSERT INTO schema_migrations VALUES(300,'webhooks',1795794907);
INSERT INTO schema_migrations VALUES(410,'self-hosted live meters',1795794907);
INSERT INTO schema_migrations VALUES(420,'live sessions, transcripts, recordings',1795794907);
INSERT INTO schema_migrations VALUES(500,'members, dashboard sessions, device grants',1795794907);
CREATE TABLE accounts (
  id             TEXT PRIMARY KEY,
  name           TEXT NOT NULL,
  plan           TEXT NOT NULL,
  limit_generate INTEGER,
  limit_write    INTEGER,
  limit_read     INTEGER,
  plan_credits   INTEGER NOT NULL DEFAULT 0 CHECK (plan_credits >= 0),
  topup_credits  INTEGER NOT NULL DEFAULT 0 CHECK (topup_credits >= 0),
  created_at     INTEGER NOT NULL
, limit_storage INTEGER, live_spend_cap INTEGER, operator_live_spend_cap INTEGER);
INSERT INTO accounts VALUES('usr_FTgagypECYuQ0wZ90wOy','Old Co','pro',NULL,NULL,NULL,0,742,1700000000,NULL,NULL,NULL);
CREATE TABLE api_keys (
  id           TEXT PRIMARY KEY,
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  alias        TEXT NOT NULL,
  secret_hash  TEXT NOT NULL UNIQUE,
  prefix       TEXT NOT NULL,
  last4        TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at   INTEGER
);
INSERT INTO api_keys VALUES('key_LSz4KJ9O7IFPf7dMiwGf','usr_FTgagypECYuQ0wZ90wOy','default','hash-old','imago_sk_old','ab12',1700000000,NULL,NULL);
CREATE TABLE ledger (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  account_id    TEXT NOT NULL REFERENCES accounts(id),
  kind          TEXT NOT NULL,
  amount        INTEGER NOT NULL,
  balance_after INTEGER NOT NULL CHECK (balance_after >= 0),
  reason        TEXT NOT NULL,
  operation_key TEXT NOT NULL,
  reference     TEXT,
  created_at    INTEGER NOT NULL,
  UNIQUE (account_id, operation_key)
);
INSERT INTO ledger VALUES(1,'led_HAORDjS99EHwsNlovpeM','usr_FTgagypECYuQ0wZ90wOy','topup',1000,1000,'initial credits','account-created',NULL,1700000000);
INSERT INTO ledger VALUES(2,'led_sYiaJB6LYVrWma6AiMf6','usr_FTgagypECYuQ0wZ90wOy','charge',-7,993,'test','op-old-1',NULL,1700000000);
INSERT INTO ledger VALUES(3,'led_rZZsZ25IjIu0L7VoqQTb','usr_FTgagypECYuQ0wZ90wOy','charge',-250,743,'agent_generation','agent_generation:job_old','old-bot',1700000000);
INSERT INTO ledger VALUES(4,'led_qyoGtuzRBM0V7U2E8gsh','usr_FTgagypECYuQ0wZ90wOy','charge',-1,742,'live_minute:essence_self_hosted','live_minute:meter_old:0','meter_old',1700000000);
CREATE TABLE voices (  code TEXT PRIMARY KEY,  account_id TEXT NOT NULL,  name TEXT NOT NULL,  base_voice TEXT NOT NULL,  description TEXT NOT NULL DEFAULT '',  gender REAL NOT NULL DEFAULT 0,  pitch REAL NOT NULL DEFAULT 0,  rate REAL NOT NULL DEFAULT 0,  brightness REAL NOT NULL DEFAULT 0,  created_at INTEGER NOT NULL,  updated_at INTEGER NOT NULL,  revoked_at INTEGER);
INSERT INTO voices VALUES('11111111-2222-3333-4444-555555555555','usr_FTgagypECYuQ0wZ90wOy','Old voice','F1','',0.0,0.25,0.0,0.0,1700000000,1700000000,NULL);
CREATE TABLE files ( id TEXT PRIMARY KEY, account_id TEXT NOT NULL, agent_code TEXT, purpose TEXT NOT NULL, blob_key TEXT NOT NULL, kind TEXT NOT NULL, mime TEXT NOT NULL, ext TEXT NOT NULL, size INTEGER NOT NULL, original_name TEXT, source_url TEXT, created_at INTEGER NOT NULL);
INSERT INTO files VALUES('file_old','usr_FTgagypECYuQ0wZ90wOy','old-bot','input','agents/old-bot/file_old.png','image','image/png','png',3,NULL,NULL,1700000000);
CREATE TABLE jobs ( id TEXT PRIMARY KEY, kind TEXT NOT NULL, lane TEXT NOT NULL, account_id TEXT NOT NULL, subject TEXT NOT NULL DEFAULT '', payload TEXT NOT NULL DEFAULT '{}', state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL, run_at INTEGER NOT NULL, lease_owner TEXT, lease_until INTEGER, last_error TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER, claim_seq INTEGER);
INSERT INTO jobs VALUES('job_old','agent_generate','generate','usr_FTgagypECYuQ0wZ90wOy','old-bot','{}','queued',0,3,1700000000000000,NULL,NULL,NULL,1700000000000000,1700000000000000,NULL,NULL);
CREATE TABLE IF NOT EXISTS "agents" ( code TEXT NOT NULL, account_id TEXT NOT NULL, name TEXT NOT NULL, status TEXT NOT NULL, progress REAL NOT NULL DEFAULT 0, progress_msg TEXT NOT NULL DEFAULT '', current_step TEXT NOT NULL DEFAULT '', error_message TEXT, system_prompt TEXT NOT NULL, model TEXT NOT NULL, aspect_ratio TEXT NOT NULL, video_aspect_ratio TEXT NOT NULL, duration REAL NOT NULL, image_source TEXT, video_source TEXT, audio_source TEXT, image_file TEXT, video_file TEXT, audio_file TEXT, model_file TEXT, dynamics_config TEXT NOT NULL DEFAULT '{}', dynamics_status TEXT, dynamics_file TEXT, dynamics_gestures TEXT NOT NULL DEFAULT '{}', dynamics_error TEXT, movements_file TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, idempotency_key TEXT, voice TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (account_id, code));
INSERT INTO agents VALUES('old-bot','usr_FTgagypECYuQ0wZ90wOy','Old bot','processing',0.0,'','',NULL,'hi','essence','16:9','16:9',10.0,NULL,NULL,NULL,NULL,NULL,NULL,NULL,'{}',NULL,NULL,'{}',NULL,NULL,1700000000,1700000000,NULL,'{}');
CREATE TABLE webhooks ( id TEXT PRIMARY KEY, account_id TEXT NOT NULL, url TEXT NOT NULL, events TEXT NOT NULL DEFAULT '[]', description TEXT, secret TEXT NOT NULL, active INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
INSERT INTO webhooks VALUES('wh_old','usr_FTgagypECYuQ0wZ90wOy','https://example.com/hook','["agent.ready"]',NULL,'whsec_x',1,1700000000,1700000000);
CREATE TABLE webhook_deliveries ( id TEXT PRIMARY KEY, webhook_id TEXT NOT NULL, account_id TEXT NOT NULL, event_type TEXT NOT NULL, payload TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_status_code INTEGER, last_error TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, delivered_at INTEGER);
CREATE TABLE webhook_attempts ( delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL, status_code INTEGER, error TEXT, duration_ms INTEGER NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY(delivery_id, attempt));
CREATE TABLE live_meters (
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  meter_id     TEXT NOT NULL,
  billing_type TEXT NOT NULL,
  started_us   INTEGER NOT NULL,
  last_seen_us INTEGER NOT NULL,
  next_minute  INTEGER NOT NULL,
  PRIMARY KEY (account_id, meter_id)
);
INSERT INTO live_meters VALUES('usr_FTgagypECYuQ0wZ90wOy','meter_old','essence_self_hosted',1700000000000000,1700000000000000,1);
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
INSERT INTO live_sessions VALUES('ses_old','usr_FTgagypECYuQ0wZ90wOy','old-bot','room1','cloud','active',1700000000000000,NULL,0,NULL,0,NULL,NULL,NULL,NULL,NULL,NULL);
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
INSERT INTO session_transcripts VALUES('ses_old',1,'user','text','hello',0,10);
CREATE TABLE members (
  id                  TEXT PRIMARY KEY,
  account_id          TEXT NOT NULL REFERENCES accounts(id),
  email               TEXT NOT NULL UNIQUE,
  password_hash       TEXT NOT NULL,
  created_at          INTEGER NOT NULL,
  password_changed_at INTEGER NOT NULL
);
INSERT INTO members VALUES('mem_NzkMsh9Gr2Z69tBBKoU9','usr_FTgagypECYuQ0wZ90wOy','old@example.com','pwhash',1700000000,1700000000);
CREATE TABLE dashboard_sessions (
  id           TEXT PRIMARY KEY,
  token_hash   TEXT NOT NULL UNIQUE,
  member_id    TEXT NOT NULL REFERENCES members(id),
  account_id   TEXT NOT NULL REFERENCES accounts(id),
  csrf_token   TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  revoked_at   INTEGER
);
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
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  interval_s   INTEGER NOT NULL,
  last_poll_at INTEGER NOT NULL DEFAULT 0,
  key_id       TEXT
);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('ledger',4);
CREATE INDEX api_keys_by_account ON api_keys(account_id);
CREATE INDEX ledger_by_account ON ledger(account_id, seq DESC);
CREATE INDEX ledger_by_account_time ON ledger(account_id, created_at);
CREATE INDEX voices_by_account ON voices(account_id, created_at);
CREATE INDEX files_by_agent ON files(agent_code);
CREATE INDEX jobs_claimable ON jobs(lane, state, run_at);
CREATE INDEX jobs_by_subject ON jobs(subject);
CREATE INDEX jobs_by_account ON jobs(account_id, kind, state);
CREATE INDEX jobs_by_claim_seq ON jobs(claim_seq);
CREATE INDEX jobs_account_claims ON jobs(account_id, lane, claim_seq);
CREATE INDEX files_by_account ON files(account_id);
CREATE INDEX agents_by_account ON agents(account_id, created_at);
CREATE UNIQUE INDEX agents_by_idempotency_key ON agents(account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX files_by_account_agent ON files(account_id, agent_code);
CREATE INDEX jobs_fair_claim ON jobs(lane, state, account_id, run_at, created_at);
CREATE INDEX jobs_running ON jobs(account_id, lane, kind, lease_until) WHERE state = 'running';
CREATE INDEX jobs_leases ON jobs(lane, lease_until) WHERE state = 'running';
CREATE INDEX webhooks_by_account ON webhooks(account_id, created_at);
CREATE INDEX deliveries_by_webhook ON webhook_deliveries(webhook_id, created_at);
CREATE INDEX live_sessions_by_account ON live_sessions(account_id, started_us DESC, session_id DESC);
CREATE INDEX members_by_account ON members(account_id);
CREATE INDEX dashboard_sessions_by_member ON dashboard_sessions(member_id);
CREATE INDEX device_grants_by_user_code ON device_grants(user_code);
CREATE INDEX device_grants_by_account ON device_grants(account_id);
COMMIT;

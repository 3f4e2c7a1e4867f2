
SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

CREATE TABLE public.accounts (
    id text NOT NULL,
    name text NOT NULL,
    plan text NOT NULL,
    limit_generate integer,
    limit_write integer,
    limit_read integer,
    plan_credits bigint DEFAULT 0 NOT NULL,
    topup_credits bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    limit_storage bigint,
    live_spend_cap bigint,
    operator_live_spend_cap bigint,
    CONSTRAINT accounts_plan_credits_check CHECK ((plan_credits >= 0)),
    CONSTRAINT accounts_topup_credits_check CHECK ((topup_credits >= 0))
);

CREATE TABLE public.agents (
    seq bigint NOT NULL,
    code text NOT NULL,
    account_id text NOT NULL,
    name text NOT NULL,
    status text NOT NULL,
    progress double precision DEFAULT 0 NOT NULL,
    progress_msg text DEFAULT ''::text NOT NULL,
    current_step text DEFAULT ''::text NOT NULL,
    error_message text,
    system_prompt text NOT NULL,
    model text NOT NULL,
    aspect_ratio text NOT NULL,
    video_aspect_ratio text NOT NULL,
    duration double precision NOT NULL,
    image_source text,
    video_source text,
    audio_source text,
    image_file text,
    video_file text,
    audio_file text,
    model_file text,
    dynamics_config text DEFAULT '{}'::text NOT NULL,
    dynamics_status text,
    dynamics_file text,
    dynamics_gestures text DEFAULT '{}'::text NOT NULL,
    dynamics_error text,
    movements_file text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    idempotency_key text,
    voice text DEFAULT '{}'::text NOT NULL
);

CREATE SEQUENCE public.agents_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.agents_seq_seq OWNED BY public.agents.seq;

CREATE TABLE public.api_keys (
    id text NOT NULL,
    account_id text NOT NULL,
    alias text NOT NULL,
    secret_hash text NOT NULL,
    prefix text NOT NULL,
    last4 text NOT NULL,
    created_at bigint NOT NULL,
    last_used_at bigint,
    revoked_at bigint
);

CREATE TABLE public.blob_chunks (
    key text NOT NULL,
    version bigint NOT NULL,
    n integer NOT NULL,
    data bytea NOT NULL
);
ALTER TABLE ONLY public.blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE SEQUENCE public.blob_versions
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

CREATE TABLE public.blob_writes (
    version bigint NOT NULL,
    key text NOT NULL,
    started_at bigint NOT NULL
);

CREATE TABLE public.blobs (
    key text NOT NULL,
    size bigint NOT NULL,
    chunks integer NOT NULL,
    version bigint NOT NULL,
    created_at bigint NOT NULL
);

CREATE TABLE public.cluster_secrets (
    name text NOT NULL,
    value text NOT NULL,
    created_at bigint NOT NULL
);

CREATE TABLE public.dashboard_sessions (
    id text NOT NULL,
    token_hash text NOT NULL,
    member_id text NOT NULL,
    account_id text NOT NULL,
    csrf_token text NOT NULL,
    created_at bigint NOT NULL,
    last_seen_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    revoked_at bigint
);

CREATE TABLE public.device_grants (
    id text NOT NULL,
    kind text NOT NULL,
    secret_hash text NOT NULL,
    hostname text NOT NULL,
    user_code text,
    challenge text,
    state text NOT NULL,
    account_id text,
    member_id text,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    interval_s bigint NOT NULL,
    last_poll_at bigint DEFAULT 0 NOT NULL,
    key_id text
);

CREATE TABLE public.files (
    id text NOT NULL,
    account_id text NOT NULL,
    agent_code text,
    purpose text NOT NULL,
    blob_key text NOT NULL,
    kind text NOT NULL,
    mime text NOT NULL,
    ext text NOT NULL,
    size bigint NOT NULL,
    original_name text,
    source_url text,
    created_at bigint NOT NULL
);

CREATE SEQUENCE public.job_claim_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

CREATE TABLE public.jobs (
    id text NOT NULL,
    kind text NOT NULL,
    lane text NOT NULL,
    account_id text NOT NULL,
    subject text DEFAULT ''::text NOT NULL,
    payload text DEFAULT '{}'::text NOT NULL,
    state text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer NOT NULL,
    run_at bigint NOT NULL,
    lease_owner text,
    lease_until bigint,
    last_error text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    finished_at bigint,
    claim_seq bigint
);

CREATE TABLE public.ledger (
    seq bigint NOT NULL,
    id text NOT NULL,
    account_id text NOT NULL,
    kind text NOT NULL,
    amount bigint NOT NULL,
    balance_after bigint NOT NULL,
    reason text NOT NULL,
    operation_key text NOT NULL,
    reference text,
    created_at bigint NOT NULL,
    CONSTRAINT ledger_balance_after_check CHECK ((balance_after >= 0))
);

CREATE SEQUENCE public.ledger_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.ledger_seq_seq OWNED BY public.ledger.seq;

CREATE TABLE public.live_meters (
    account_id text NOT NULL,
    meter_id text NOT NULL,
    billing_type text NOT NULL,
    started_us bigint NOT NULL,
    last_seen_us bigint NOT NULL,
    next_minute bigint NOT NULL
);

CREATE TABLE public.live_sessions (
    session_id text NOT NULL,
    account_id text NOT NULL,
    agent_code text NOT NULL,
    room_id text NOT NULL,
    billing_type text NOT NULL,
    status text NOT NULL,
    started_us bigint NOT NULL,
    ended_us bigint,
    minutes_charged bigint DEFAULT 0 NOT NULL,
    end_reason text,
    viewers_peak bigint DEFAULT 0 NOT NULL,
    recording_status text,
    recording_file_id text,
    recording_bytes bigint,
    recording_duration_ms bigint,
    recording_video_codec text,
    recording_audio_codec text,
    CONSTRAINT live_sessions_status_check CHECK ((status = ANY (ARRAY['active'::text, 'ended'::text])))
);

CREATE TABLE public.members (
    id text NOT NULL,
    account_id text NOT NULL,
    email text NOT NULL,
    password_hash text NOT NULL,
    created_at bigint NOT NULL,
    password_changed_at bigint NOT NULL
);

CREATE UNLOGGED TABLE public.rate_buckets (
    key text NOT NULL,
    tokens double precision NOT NULL,
    updated_at double precision NOT NULL,
    allowed boolean NOT NULL
);

CREATE UNLOGGED TABLE public.rate_windows (
    key text NOT NULL,
    count integer NOT NULL,
    opened_at double precision NOT NULL
);

CREATE TABLE public.room_commands (
    id bigint NOT NULL,
    node_id text NOT NULL,
    session_id text NOT NULL,
    kind text NOT NULL,
    text text NOT NULL,
    created_at bigint NOT NULL
);

CREATE SEQUENCE public.room_commands_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.room_commands_id_seq OWNED BY public.room_commands.id;

CREATE TABLE public.room_leases (
    account_id text NOT NULL,
    room_id text NOT NULL,
    agent_code text NOT NULL,
    session_id text NOT NULL,
    node_id text NOT NULL,
    node_url text NOT NULL,
    lease_until bigint NOT NULL,
    details text DEFAULT '{}'::text NOT NULL,
    details_at bigint DEFAULT 0 NOT NULL
);

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at bigint NOT NULL
);

CREATE TABLE public.session_transcripts (
    session_id text NOT NULL,
    seq bigint NOT NULL,
    role text NOT NULL,
    source text NOT NULL,
    text text NOT NULL,
    start_ms bigint NOT NULL,
    end_ms bigint NOT NULL
);

CREATE TABLE public.voices (
    seq bigint NOT NULL,
    code text NOT NULL,
    account_id text NOT NULL,
    name text NOT NULL,
    base_voice text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    gender double precision DEFAULT 0 NOT NULL,
    pitch double precision DEFAULT 0 NOT NULL,
    rate double precision DEFAULT 0 NOT NULL,
    brightness double precision DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    revoked_at bigint
);

CREATE SEQUENCE public.voices_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.voices_seq_seq OWNED BY public.voices.seq;

CREATE TABLE public.webhook_attempts (
    delivery_id text NOT NULL,
    attempt integer NOT NULL,
    status_code integer,
    error text,
    duration_ms bigint NOT NULL,
    created_at bigint NOT NULL
);

CREATE TABLE public.webhook_deliveries (
    seq bigint NOT NULL,
    id text NOT NULL,
    webhook_id text NOT NULL,
    account_id text NOT NULL,
    event_type text NOT NULL,
    payload text NOT NULL,
    state text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_status_code integer,
    last_error text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    delivered_at bigint
);

CREATE SEQUENCE public.webhook_deliveries_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.webhook_deliveries_seq_seq OWNED BY public.webhook_deliveries.seq;

CREATE TABLE public.webhooks (
    seq bigint NOT NULL,
    id text NOT NULL,
    account_id text NOT NULL,
    url text NOT NULL,
    events text DEFAULT '[]'::text NOT NULL,
    description text,
    secret text NOT NULL,
    active integer DEFAULT 1 NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);

CREATE SEQUENCE public.webhooks_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE public.webhooks_seq_seq OWNED BY public.webhooks.seq;

ALTER TABLE ONLY public.agents ALTER COLUMN seq SET DEFAULT nextval('public.agents_seq_seq'::regclass);

ALTER TABLE ONLY public.ledger ALTER COLUMN seq SET DEFAULT nextval('public.ledger_seq_seq'::regclass);

ALTER TABLE ONLY public.room_commands ALTER COLUMN id SET DEFAULT nextval('public.room_commands_id_seq'::regclass);

ALTER TABLE ONLY public.voices ALTER COLUMN seq SET DEFAULT nextval('public.voices_seq_seq'::regclass);

ALTER TABLE ONLY public.webhook_deliveries ALTER COLUMN seq SET DEFAULT nextval('public.webhook_deliveries_seq_seq'::regclass);

ALTER TABLE ONLY public.webhooks ALTER COLUMN seq SET DEFAULT nextval('public.webhooks_seq_seq'::regclass);

INSERT INTO public.accounts VALUES ('usr_VwOfGdZjXLDjfIohaJsM', 'Old Co', 'pro', NULL, NULL, NULL, 0, 742, 1700000000, NULL, NULL, NULL);

INSERT INTO public.agents VALUES (1, 'old-bot', 'usr_VwOfGdZjXLDjfIohaJsM', 'Old bot', 'processing', 0, '', '', NULL, 'hi', 'essence', '16:9', '16:9', 10, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '{}', NULL, NULL, '{}', NULL, NULL, 1700000000, 1700000000, NULL, '{}');

INSERT INTO public.api_keys VALUES ('key_qE6j6xOCoUJiKROpms7f', 'usr_VwOfGdZjXLDjfIohaJsM', 'default', 'hash-old', 'imago_sk_old', 'ab12', 1700000000, NULL, NULL);

INSERT INTO public.files VALUES ('file_old', 'usr_VwOfGdZjXLDjfIohaJsM', 'old-bot', 'input', 'agents/old-bot/file_old.png', 'image', 'image/png', 'png', 3, NULL, NULL, 1700000000);

INSERT INTO public.jobs VALUES ('job_old', 'agent_generate', 'generate', 'usr_VwOfGdZjXLDjfIohaJsM', 'old-bot', '{}', 'queued', 0, 3, 1700000000000000, NULL, NULL, NULL, 1700000000000000, 1700000000000000, NULL, NULL);

INSERT INTO public.ledger VALUES (1, 'led_WxJTAhshEZG38DBnmNaV', 'usr_VwOfGdZjXLDjfIohaJsM', 'topup', 1000, 1000, 'initial credits', 'account-created', NULL, 1700000000);
INSERT INTO public.ledger VALUES (2, 'led_KTf77O6Z6qQasQ68IYEU', 'usr_VwOfGdZjXLDjfIohaJsM', 'charge', -7, 993, 'test', 'op-old-1', NULL, 1700000000);
INSERT INTO public.ledger VALUES (3, 'led_NDUaGrRWWZB1hvpG9k9P', 'usr_VwOfGdZjXLDjfIohaJsM', 'charge', -250, 743, 'agent_generation', 'agent_generation:job_old', 'old-bot', 1700000000);
INSERT INTO public.ledger VALUES (4, 'led_q5ucpQDBATz5tCNBUPMU', 'usr_VwOfGdZjXLDjfIohaJsM', 'charge', -1, 742, 'live_minute:essence_self_hosted', 'live_minute:meter_old:0', 'meter_old', 1700000000);

INSERT INTO public.live_meters VALUES ('usr_VwOfGdZjXLDjfIohaJsM', 'meter_old', 'essence_self_hosted', 1700000000000000, 1700000000000000, 1);

INSERT INTO public.live_sessions VALUES ('ses_old', 'usr_VwOfGdZjXLDjfIohaJsM', 'old-bot', 'room1', 'cloud', 'active', 1700000000000000, NULL, 0, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL);

INSERT INTO public.members VALUES ('mem_xnxiDgk6KqUklqJ7zAmf', 'usr_VwOfGdZjXLDjfIohaJsM', 'old@example.com', 'pwhash', 1700000000, 1700000000);

INSERT INTO public.schema_migrations VALUES (1, 'accounts, api keys, ledger', 1795794922);
INSERT INTO public.schema_migrations VALUES (100, 'designed voices', 1795794922);
INSERT INTO public.schema_migrations VALUES (200, 'agents_files_jobs', 1795794922);
INSERT INTO public.schema_migrations VALUES (201, 'agent_idempotency_keys', 1795794922);
INSERT INTO public.schema_migrations VALUES (300, 'webhooks', 1795794922);
INSERT INTO public.schema_migrations VALUES (202, 'job_claim_order', 1795794922);
INSERT INTO public.schema_migrations VALUES (2, 'account storage quota', 1795794922);
INSERT INTO public.schema_migrations VALUES (3, 'live spend cap', 1795794922);
INSERT INTO public.schema_migrations VALUES (203, 'files_by_account', 1795794922);
INSERT INTO public.schema_migrations VALUES (204, 'agent_voice', 1795794922);
INSERT INTO public.schema_migrations VALUES (205, 'agent_codes_per_account', 1795794922);
INSERT INTO public.schema_migrations VALUES (210, 'job_fair_claim_indexes', 1795794922);
INSERT INTO public.schema_migrations VALUES (220, 'job_background_lane', 1795794922);
INSERT INTO public.schema_migrations VALUES (600, 'members, dashboard sessions, device grants', 1795794922);
INSERT INTO public.schema_migrations VALUES (500, 'cluster: rate limits, blobs, shared secrets', 1795794922);
INSERT INTO public.schema_migrations VALUES (510, 'cluster: room leases and room commands', 1795794922);
INSERT INTO public.schema_migrations VALUES (520, 'cluster: blob writes in progress', 1795794922);
INSERT INTO public.schema_migrations VALUES (530, 'cluster: room state in leases', 1795794922);
INSERT INTO public.schema_migrations VALUES (540, 'cluster: last-claim index serves only the last claim', 1795794922);
INSERT INTO public.schema_migrations VALUES (410, 'self-hosted live meters', 1795794922);
INSERT INTO public.schema_migrations VALUES (420, 'live sessions, transcripts, recordings', 1795794922);

INSERT INTO public.session_transcripts VALUES ('ses_old', 1, 'user', 'text', 'hello', 0, 10);

INSERT INTO public.voices VALUES (1, '11111111-2222-3333-4444-555555555555', 'usr_VwOfGdZjXLDjfIohaJsM', 'Old voice', 'F1', '', 0, 0.25, 0, 0, 1700000000, 1700000000, NULL);

INSERT INTO public.webhooks VALUES (1, 'wh_old', 'usr_VwOfGdZjXLDjfIohaJsM', 'https://example.com/hook', '["agent.ready"]', NULL, 'whsec_x', 1, 1700000000, 1700000000);

SELECT pg_catalog.setval('public.agents_seq_seq', 1, true);

SELECT pg_catalog.setval('public.blob_versions', 1, false);

SELECT pg_catalog.setval('public.job_claim_seq', 1, false);

SELECT pg_catalog.setval('public.ledger_seq_seq', 4, true);

SELECT pg_catalog.setval('public.room_commands_id_seq', 1, false);

SELECT pg_catalog.setval('public.voices_seq_seq', 1, true);

SELECT pg_catalog.setval('public.webhook_deliveries_seq_seq', 1, false);

SELECT pg_catalog.setval('public.webhooks_seq_seq', 1, true);

ALTER TABLE ONLY public.accounts
    ADD CONSTRAINT accounts_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.agents
    ADD CONSTRAINT agents_pkey PRIMARY KEY (account_id, code);

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_secret_hash_key UNIQUE (secret_hash);

ALTER TABLE ONLY public.blob_chunks
    ADD CONSTRAINT blob_chunks_pkey PRIMARY KEY (key, version, n);

ALTER TABLE ONLY public.blob_writes
    ADD CONSTRAINT blob_writes_pkey PRIMARY KEY (version);

ALTER TABLE ONLY public.blobs
    ADD CONSTRAINT blobs_pkey PRIMARY KEY (key);

ALTER TABLE ONLY public.cluster_secrets
    ADD CONSTRAINT cluster_secrets_pkey PRIMARY KEY (name);

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_token_hash_key UNIQUE (token_hash);

ALTER TABLE ONLY public.device_grants
    ADD CONSTRAINT device_grants_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.device_grants
    ADD CONSTRAINT device_grants_secret_hash_key UNIQUE (secret_hash);

ALTER TABLE ONLY public.files
    ADD CONSTRAINT files_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.ledger
    ADD CONSTRAINT ledger_account_id_operation_key_key UNIQUE (account_id, operation_key);

ALTER TABLE ONLY public.ledger
    ADD CONSTRAINT ledger_id_key UNIQUE (id);

ALTER TABLE ONLY public.ledger
    ADD CONSTRAINT ledger_pkey PRIMARY KEY (seq);

ALTER TABLE ONLY public.live_meters
    ADD CONSTRAINT live_meters_pkey PRIMARY KEY (account_id, meter_id);

ALTER TABLE ONLY public.live_sessions
    ADD CONSTRAINT live_sessions_pkey PRIMARY KEY (session_id);

ALTER TABLE ONLY public.members
    ADD CONSTRAINT members_email_key UNIQUE (email);

ALTER TABLE ONLY public.members
    ADD CONSTRAINT members_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.rate_buckets
    ADD CONSTRAINT rate_buckets_pkey PRIMARY KEY (key);

ALTER TABLE ONLY public.rate_windows
    ADD CONSTRAINT rate_windows_pkey PRIMARY KEY (key);

ALTER TABLE ONLY public.room_commands
    ADD CONSTRAINT room_commands_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.room_leases
    ADD CONSTRAINT room_leases_pkey PRIMARY KEY (account_id, room_id);

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

ALTER TABLE ONLY public.session_transcripts
    ADD CONSTRAINT session_transcripts_pkey PRIMARY KEY (session_id, seq);

ALTER TABLE ONLY public.voices
    ADD CONSTRAINT voices_pkey PRIMARY KEY (code);

ALTER TABLE ONLY public.webhook_attempts
    ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (delivery_id, attempt);

ALTER TABLE ONLY public.webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.webhooks
    ADD CONSTRAINT webhooks_pkey PRIMARY KEY (id);

CREATE INDEX agents_by_account ON public.agents USING btree (account_id, created_at);

CREATE UNIQUE INDEX agents_by_idempotency_key ON public.agents USING btree (account_id, idempotency_key) WHERE (idempotency_key IS NOT NULL);

CREATE INDEX api_keys_by_account ON public.api_keys USING btree (account_id);

CREATE INDEX blob_writes_by_start ON public.blob_writes USING btree (started_at);

CREATE INDEX dashboard_sessions_by_member ON public.dashboard_sessions USING btree (member_id);

CREATE INDEX deliveries_by_webhook ON public.webhook_deliveries USING btree (webhook_id, created_at);

CREATE INDEX device_grants_by_account ON public.device_grants USING btree (account_id);

CREATE INDEX device_grants_by_user_code ON public.device_grants USING btree (user_code);

CREATE INDEX files_by_account ON public.files USING btree (account_id);

CREATE INDEX files_by_account_agent ON public.files USING btree (account_id, agent_code);

CREATE INDEX files_by_agent ON public.files USING btree (agent_code);

CREATE INDEX jobs_account_claims ON public.jobs USING btree (account_id, lane, claim_seq) WHERE (claim_seq IS NOT NULL);

CREATE INDEX jobs_by_account ON public.jobs USING btree (account_id, kind, state);

CREATE INDEX jobs_by_claim_seq ON public.jobs USING btree (claim_seq);

CREATE INDEX jobs_by_subject ON public.jobs USING btree (subject);

CREATE INDEX jobs_claimable ON public.jobs USING btree (lane, state, run_at);

CREATE INDEX jobs_fair_claim ON public.jobs USING btree (lane, state, account_id, run_at, created_at) INCLUDE (kind);

CREATE INDEX jobs_leases ON public.jobs USING btree (lane, lease_until) WHERE (state = 'running'::text);

CREATE INDEX jobs_running ON public.jobs USING btree (account_id, lane, kind, lease_until) WHERE (state = 'running'::text);

CREATE INDEX ledger_by_account ON public.ledger USING btree (account_id, seq DESC);

CREATE INDEX ledger_by_account_time ON public.ledger USING btree (account_id, created_at);

CREATE INDEX live_sessions_by_account ON public.live_sessions USING btree (account_id, started_us DESC, session_id DESC);

CREATE INDEX members_by_account ON public.members USING btree (account_id);

CREATE INDEX room_commands_by_node ON public.room_commands USING btree (node_id, id);

CREATE INDEX room_leases_by_node ON public.room_leases USING btree (node_id);

CREATE INDEX voices_by_account ON public.voices USING btree (account_id, created_at);

CREATE INDEX webhooks_by_account ON public.webhooks USING btree (account_id, created_at);

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

ALTER TABLE ONLY public.dashboard_sessions
    ADD CONSTRAINT dashboard_sessions_member_id_fkey FOREIGN KEY (member_id) REFERENCES public.members(id);

ALTER TABLE ONLY public.ledger
    ADD CONSTRAINT ledger_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

ALTER TABLE ONLY public.live_meters
    ADD CONSTRAINT live_meters_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

ALTER TABLE ONLY public.live_sessions
    ADD CONSTRAINT live_sessions_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

ALTER TABLE ONLY public.members
    ADD CONSTRAINT members_account_id_fkey FOREIGN KEY (account_id) REFERENCES public.accounts(id);

ALTER TABLE ONLY public.session_transcripts
    ADD CONSTRAINT session_transcripts_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.live_sessions(session_id) ON DELETE CASCADE;


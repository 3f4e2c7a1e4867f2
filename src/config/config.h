// Server configuration: every option is a flag and an IMAGO_* environment variable
// (flag wins). `imagod serve --help` prints the table in config.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace imago {

struct Config {
  // --- server ---
  std::string listen_host = "127.0.0.1";
  int listen_port = 8080;
  std::string data_dir = "var";
  std::string public_url;     // default: http://<listen>; base of absolute URLs handed out
  std::string node_url;       // cluster: where other nodes reach this one (--node-url)
  std::string node_ca_file;   // cluster: CAs for https:// node URLs (--node-ca); empty: system trust
  std::string tls_cert_file;  // PEM chain; with tls_key_file the port speaks HTTPS/WSS only
  std::string tls_key_file;
  int tls_handshake_timeout_s = 10;
  int io_threads = 0;                        // 0: one per core
  int worker_threads = 16;                   // blocking handler pool (database, synthesis waits)
  std::string database_url;                  // default: sqlite:<data_dir>/imago.db
  std::vector<std::string> trusted_proxies;  // peers whose X-Forwarded-For is believed
  std::string admin_token;                   // IMAGO_ADMIN_TOKEN, else <data_dir>/admin.token (created 0600)
  int read_timeout_s = 30;                   // whole request (headers + body)
  int write_timeout_s = 60;
  int idle_timeout_s = 60;  // keep-alive idle
  int header_limit_bytes = 16 * 1024;
  int max_connections = 10000;       // client connections; also kept below the descriptor limit
  int max_connections_per_ip = 256;  // per peer address (trusted proxies are exempt)
  int fd_reserve = 256;              // descriptors kept for the database, blobs and fetches
  int stream_threads = 4;            // calls the sources of streamed responses (TTS, SSE)
  int cpu_threads = 8;               // handlers that wait for synthesis
  int cpu_queue = 32;                // ... queued beyond this: 503 with Retry-After
  int outbound_threads = 8;          // handlers that wait for other hosts (URL uploads, webhook tests)
  int outbound_queue = 64;
  int outbound_per_account = 0;  // outbound requests of one account at once; 0: a quarter of the threads
  int shutdown_grace_s = 20;
  bool bootstrap_account = true;     // create and print a first account on an empty database
  int failed_auth_limit = 30;        // SPEC 8.3: failed authentications per minute per client IP
  int anon_ip_limit = 120;           // SPEC 8.3: requests per minute per IP on anonymous endpoints
  bool allow_private_fetch = false;  // let user URLs reach private/loopback addresses (tests)
  std::string log_level = "info";

  // --- dashboard ---
  std::string web_dir;        // static pages; default: the source tree's web/ (IMAGO_DEFAULT_WEB_DIR)
  bool allow_signup = false;  // anyone may create an account and member at /sign-up

  // --- speech ---
  int tts_workers = 0;        // 0: one per core
  int tts_queue = 64;         // pending synthesis requests before 503
  int tts_account_queue = 8;  // synthesis requests one account may have in progress before 429
  int tts_max_chars = 20000;  // longest accepted text
  int tts_max_audio_s = 600;  // longest audio one request may produce

  // --- jobs ---
  bool run_workers = true;         // serve also runs job workers
  int job_workers = 2;             // concurrent jobs per node
  int background_job_workers = 1;  // free movement regenerations per node, apart from job_workers
  // Per-plan storage quotas over the defaults, "PLAN=MB,..." (parsed by limits/storage_quota.h).
  std::string storage_quota;
  int job_lease_ms = 15000;  // a claimed job is re-claimable this long after its last heartbeat

  // --- live sessions (docs/live-protocol.md) ---
  int runtime_token_ttl_s = 300;   // runtime token lifetime (SPEC 8.7: about 5 minutes)
  int live_grace_s = 300;          // a session pauses this long after its last token renewal
  int live_billing_period_s = 60;  // one billed "minute" (shorter only for tests)
  int live_absent_s = 300;         // ends a session nobody ever joined
  int live_left_s = 60;            // ends a session after its last viewer left
  int live_idle_s = 120;           // ends a session without speech or keep-alive
  int live_max_duration_s = 3600;  // longest session
  // Cluster mode: a session whose node stopped renewing its room lease this long ago (and whose
  // lease expired) is ended by another node (docs/sessions.md, "When a node dies").
  int session_sweep_grace_s = 60;
  int max_live_sessions = 0;  // 0: kLiveSessionsPerCore x cores (measured, live_ws_bench)
  // Live sessions one account may run at once (across the cluster in cluster mode).
  // 0: half of max_live_sessions (at least 1), so one account never holds a whole node.
  int live_sessions_per_account = 0;
  int live_frame_side = 512;  // longest side of rendered live frames, px
  int live_jpeg_quality = 75;
  // Encoded live media (media=h264+opus viewers) at a room's standard quality: low halves the
  // video rate, high doubles it (docs/live-protocol.md, "Encoded media").
  int live_video_kbps = 400;
  int live_audio_kbps = 32;
  int live_keyframe_s = 2;
  int live_video_max_side = 512;

  // --- conversation (docs/conversation.md) ---
  std::string llm_base_url;        // OpenAI-compatible endpoint ".../v1"; empty: built-in responder
  std::string llm_model;           // the model name sent with each request
  std::string llm_api_key;         // IMAGO_LLM_API_KEY only (never a flag: argv is visible in ps)
  bool llm_allow_private = false;  // the endpoint may be on a private or loopback address
  bool llm_vision = false;         // the model accepts images: camera_chat sessions are offered
};

// Concurrent 25 fps sessions per core at 512x512 with JPEG encoding and WebSocket sending, from
// `live_ws_bench capacity` (bench/live_ws_bench.cpp): about 0.105 cores per session, so 9-10 per
// idle core; 8 keeps some headroom for synthesis bursts (figures: docs/live-protocol.md "Performance").
inline constexpr int kLiveSessionsPerCore = 8;

// Parses argv (after the subcommand) and IMAGO_* variables into `cfg`. Returns kInvalidArgument
// with a message for bad input; sets `*help` when --help was given.
Status parse_config(int argc, char** argv, Config& cfg, bool* help);
std::string config_help();
// Fills defaults that depend on other fields (public_url, database_url, io_threads).
void finalize_config(Config& cfg);

}  // namespace imago

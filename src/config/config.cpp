#include "config/config.h"

#include <cstdlib>
#include <functional>
#include <sstream>

#include "util/cpu_cores.h"
#include "util/strings.h"

namespace imago {

namespace {

struct Option {
  const char* flag;  // without leading dashes
  const char* env;
  const char* arg;  // placeholder; nullptr for boolean switches
  const char* help;
  std::function<Status(Config&, const std::string&)> set;
};

Status set_int(int& out, const std::string& v, const char* flag, int lo, int hi) {
  auto n = parse_int(v);
  if (!n || *n < lo || *n > hi) {
    return Status::Invalid(std::string("--") + flag + " expects an integer in [" + std::to_string(lo) + ", " +
                           std::to_string(hi) + "], got '" + v + "'");
  }
  out = static_cast<int>(*n);
  return Status::Ok();
}

Status set_bool(bool& out, const std::string& v, const char* flag) {
  if (v == "" || v == "1" || v == "true" || v == "yes")
    out = true;
  else if (v == "0" || v == "false" || v == "no")
    out = false;
  else
    return Status::Invalid(std::string("--") + flag + " expects true or false");
  return Status::Ok();
}

const std::vector<Option>& options() {
  static const std::vector<Option> opts = {
      {"listen", "IMAGO_LISTEN", "HOST:PORT",
       "address to listen on (default 127.0.0.1:8080; port 0 picks one)",
       [](Config& c, const std::string& v) -> Status {
         auto pos = v.rfind(':');
         if (pos == std::string::npos) return Status::Invalid("--listen expects HOST:PORT");
         std::string host = v.substr(0, pos);
         if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
           host = host.substr(1, host.size() - 2);
         if (host.empty()) return Status::Invalid("--listen expects HOST:PORT");
         c.listen_host = host;
         return set_int(c.listen_port, v.substr(pos + 1), "listen", 0, 65535);
       }},
      {"data-dir", "IMAGO_DATA_DIR", "DIR", "data directory: SQLite database and blob files (default var)",
       [](Config& c, const std::string& v) {
         c.data_dir = v;
         return Status::Ok();
       }},
      {"public-url", "IMAGO_PUBLIC_URL", "URL",
       "base of absolute URLs the server hands out (default http://LISTEN, https:// with TLS)",
       [](Config& c, const std::string& v) -> Status {
         if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) {
           return Status::Invalid("--public-url must start with http:// or https://");
         }
         c.public_url = v;
         while (!c.public_url.empty() && c.public_url.back() == '/') c.public_url.pop_back();
         return Status::Ok();
       }},
      {"node-url", "IMAGO_NODE_URL", "URL",
       "cluster: http(s)://HOST:PORT where other nodes reach this one to relay live viewers (default "
       "http://LISTEN, https://LISTEN with TLS, unless LISTEN is a wildcard address)",
       [](Config& c, const std::string& v) -> Status {
         if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0)
           return Status::Invalid("--node-url must be http://HOST:PORT or https://HOST:PORT");
         c.node_url = v;
         while (!c.node_url.empty() && c.node_url.back() == '/') c.node_url.pop_back();
         return Status::Ok();
       }},
      {"node-ca", "IMAGO_NODE_CA", "FILE",
       "cluster: PEM CA certificates that https:// node URLs are verified against when relaying "
       "(default: the system's trusted CAs)",
       [](Config& c, const std::string& v) -> Status {
         if (v.empty()) return Status::Invalid("--node-ca needs a file");
         c.node_ca_file = v;
         return Status::Ok();
       }},
      {"tls-cert", "IMAGO_TLS_CERT", "FILE",
       "PEM certificate chain: serve HTTPS and WSS on the listen port (with --tls-key)",
       [](Config& c, const std::string& v) -> Status {
         if (v.empty()) return Status::Invalid("--tls-cert needs a file");
         c.tls_cert_file = v;
         return Status::Ok();
       }},
      {"tls-key", "IMAGO_TLS_KEY", "FILE", "PEM private key (unencrypted) of --tls-cert",
       [](Config& c, const std::string& v) -> Status {
         if (v.empty()) return Status::Invalid("--tls-key needs a file");
         c.tls_key_file = v;
         return Status::Ok();
       }},
      {"tls-handshake-timeout", "IMAGO_TLS_HANDSHAKE_TIMEOUT", "SECONDS",
       "time from accept to a finished TLS handshake (default 10)",
       [](Config& c, const std::string& v) {
         return set_int(c.tls_handshake_timeout_s, v, "tls-handshake-timeout", 1, 600);
       }},
      {"threads", "IMAGO_THREADS", "N",
       "I/O threads (default: one per usable core: the affinity mask and cgroup CPU quota count)",
       [](Config& c, const std::string& v) { return set_int(c.io_threads, v, "threads", 1, 256); }},
      {"worker-threads", "IMAGO_WORKER_THREADS", "N", "threads running request handlers (default 16)",
       [](Config& c, const std::string& v) {
         return set_int(c.worker_threads, v, "worker-threads", 1, 1024);
       }},
      {"database", "IMAGO_DATABASE_URL", "URL",
       "sqlite:PATH, or postgres://... for cluster mode (default sqlite:DATA_DIR/imago.db)",
       [](Config& c, const std::string& v) {
         c.database_url = v;
         return Status::Ok();
       }},
      {"trusted-proxy", "IMAGO_TRUSTED_PROXIES", "IP[,IP]", "peers whose X-Forwarded-For is trusted",
       [](Config& c, const std::string& v) {
         for (auto part : split(v, ',')) {
           auto t = trim(part);
           if (!t.empty()) c.trusted_proxies.emplace_back(t);
         }
         return Status::Ok();
       }},
      {"admin-token", "IMAGO_ADMIN_TOKEN", "TOKEN",
       "admin API bearer token (default: DATA_DIR/admin.token, created 0600)",
       [](Config& c, const std::string& v) -> Status {
         if (v.size() < 16) return Status::Invalid("--admin-token must be at least 16 characters");
         c.admin_token = v;
         return Status::Ok();
       }},
      {"read-timeout", "IMAGO_READ_TIMEOUT", "SECONDS", "time allowed to receive a request (default 30)",
       [](Config& c, const std::string& v) { return set_int(c.read_timeout_s, v, "read-timeout", 1, 3600); }},
      {"write-timeout", "IMAGO_WRITE_TIMEOUT", "SECONDS", "time allowed to send a response (default 60)",
       [](Config& c, const std::string& v) {
         return set_int(c.write_timeout_s, v, "write-timeout", 1, 3600);
       }},
      {"idle-timeout", "IMAGO_IDLE_TIMEOUT", "SECONDS", "keep-alive idle time before closing (default 60)",
       [](Config& c, const std::string& v) { return set_int(c.idle_timeout_s, v, "idle-timeout", 1, 3600); }},
      {"max-connections", "IMAGO_MAX_CONNECTIONS", "N",
       "client connections before new ones get 503 (default 10000; kept below the descriptor limit)",
       [](Config& c, const std::string& v) {
         return set_int(c.max_connections, v, "max-connections", 1, 10000000);
       }},
      {"max-connections-per-ip", "IMAGO_MAX_CONNECTIONS_PER_IP", "N",
       "client connections from one address before new ones get 503 (default 256; trusted proxies exempt)",
       [](Config& c, const std::string& v) {
         return set_int(c.max_connections_per_ip, v, "max-connections-per-ip", 1, 10000000);
       }},
      {"fd-reserve", "IMAGO_FD_RESERVE", "N",
       "file descriptors kept free of client connections (default 256)",
       [](Config& c, const std::string& v) { return set_int(c.fd_reserve, v, "fd-reserve", 0, 1000000); }},
      {"stream-threads", "IMAGO_STREAM_THREADS", "N", "threads producing streamed responses (default 4)",
       [](Config& c, const std::string& v) {
         return set_int(c.stream_threads, v, "stream-threads", 1, 1024);
       }},
      {"cpu-threads", "IMAGO_CPU_THREADS", "N", "threads for handlers that wait on synthesis (default 8)",
       [](Config& c, const std::string& v) { return set_int(c.cpu_threads, v, "cpu-threads", 1, 1024); }},
      {"cpu-queue", "IMAGO_CPU_QUEUE", "N", "such requests that may wait before 503 (default 32)",
       [](Config& c, const std::string& v) { return set_int(c.cpu_queue, v, "cpu-queue", 0, 100000); }},
      {"outbound-threads", "IMAGO_OUTBOUND_THREADS", "N",
       "threads for handlers that wait on other hosts: URL uploads, webhook tests (default 8)",
       [](Config& c, const std::string& v) {
         return set_int(c.outbound_threads, v, "outbound-threads", 1, 1024);
       }},
      {"outbound-per-account", "IMAGO_OUTBOUND_PER_ACCOUNT", "N",
       "outbound requests one account may have in progress; more get 503 (default: a quarter of "
       "--outbound-threads, at least 1)",
       [](Config& c, const std::string& v) {
         return set_int(c.outbound_per_account, v, "outbound-per-account", 1, 1024);
       }},
      {"outbound-queue", "IMAGO_OUTBOUND_QUEUE", "N", "such requests that may wait before 503 (default 64)",
       [](Config& c, const std::string& v) {
         return set_int(c.outbound_queue, v, "outbound-queue", 0, 100000);
       }},
      {"shutdown-grace", "IMAGO_SHUTDOWN_GRACE", "SECONDS",
       "time in-flight requests get on SIGTERM (default 20)",
       [](Config& c, const std::string& v) {
         return set_int(c.shutdown_grace_s, v, "shutdown-grace", 0, 3600);
       }},
      {"no-bootstrap", "IMAGO_NO_BOOTSTRAP", nullptr, "do not create a first account on an empty database",
       [](Config& c, const std::string& v) {
         bool b = true;
         auto s = set_bool(b, v, "no-bootstrap");
         c.bootstrap_account = !b;
         return s;
       }},
      {"failed-auth-limit", "IMAGO_FAILED_AUTH_LIMIT", "N",
       "failed authentications per minute per client IP before 429 (default 30)",
       [](Config& c, const std::string& v) {
         return set_int(c.failed_auth_limit, v, "failed-auth-limit", 1, 100000000);
       }},
      {"anon-ip-limit", "IMAGO_ANON_IP_LIMIT", "N",
       "requests per minute per client IP on anonymous self-authenticating endpoints (default 120)",
       [](Config& c, const std::string& v) {
         return set_int(c.anon_ip_limit, v, "anon-ip-limit", 1, 100000000);
       }},
      {"allow-private-fetch", "IMAGO_ALLOW_PRIVATE_FETCH", nullptr,
       "let user-supplied URLs reach private, loopback and link-local addresses",
       [](Config& c, const std::string& v) {
         return set_bool(c.allow_private_fetch, v, "allow-private-fetch");
       }},
      {"log-level", "IMAGO_LOG_LEVEL", "LEVEL", "debug, info, warn or error (default info)",
       [](Config& c, const std::string& v) -> Status {
         if (v != "debug" && v != "info" && v != "warn" && v != "error") {
           return Status::Invalid("--log-level must be debug, info, warn or error");
         }
         c.log_level = v;
         return Status::Ok();
       }},
      {"web-dir", "IMAGO_WEB_DIR", "DIR",
       "static pages served at / (default: the web/ folder of the source tree)",
       [](Config& c, const std::string& v) {
         c.web_dir = v;
         return Status::Ok();
       }},
      {"allow-signup", "IMAGO_ALLOW_SIGNUP", nullptr,
       "let anyone create an account and dashboard member at /sign-up (default: operator creates members)",
       [](Config& c, const std::string& v) { return set_bool(c.allow_signup, v, "allow-signup"); }},
      {"tts-workers", "IMAGO_TTS_WORKERS", "N", "speech synthesis workers (default: one per core)",
       [](Config& c, const std::string& v) { return set_int(c.tts_workers, v, "tts-workers", 1, 64); }},
      {"tts-queue", "IMAGO_TTS_QUEUE", "N", "synthesis requests that may wait before 503 (default 64)",
       [](Config& c, const std::string& v) { return set_int(c.tts_queue, v, "tts-queue", 0, 100000); }},
      {"tts-account-queue", "IMAGO_TTS_ACCOUNT_QUEUE", "N",
       "synthesis requests one account may have in progress before 429 (live rooms excepted; default 8)",
       [](Config& c, const std::string& v) {
         return set_int(c.tts_account_queue, v, "tts-account-queue", 1, 100000);
       }},
      {"tts-max-chars", "IMAGO_TTS_MAX_CHARS", "N", "longest accepted TTS text in characters (default 20000)",
       [](Config& c, const std::string& v) {
         return set_int(c.tts_max_chars, v, "tts-max-chars", 1, 1000000);
       }},
      {"tts-max-audio", "IMAGO_TTS_MAX_AUDIO", "SECONDS",
       "longest audio one TTS request may produce (default 600)",
       [](Config& c, const std::string& v) {
         return set_int(c.tts_max_audio_s, v, "tts-max-audio", 1, 36000);
       }},
      {"no-workers", "IMAGO_NO_WORKERS", nullptr,
       "serve HTTP only; run jobs in separate 'imagod worker' processes",
       [](Config& c, const std::string& v) {
         bool b = true;
         auto s = set_bool(b, v, "no-workers");
         c.run_workers = !b;
         return s;
       }},
      {"job-lease-ms", "IMAGO_JOB_LEASE_MS", "MS",
       "job lease: a crashed worker's job is taken again this long after its last heartbeat (default 15000)",
       [](Config& c, const std::string& v) {
         return set_int(c.job_lease_ms, v, "job-lease-ms", 200, 3600000);
       }},
      {"storage-quota", "IMAGO_STORAGE_QUOTA", "PLAN=MB,...",
       "storage quota per plan in megabytes, 0 = unlimited (defaults: free=500,creator=5000,pro=25000,"
       "business=100000,enterprise=500000)",
       [](Config& c, const std::string& v) -> Status {
         c.storage_quota = v;
         return Status::Ok();
       }},
      {"job-workers", "IMAGO_JOB_WORKERS", "N", "generation jobs run at once on this node (default 2)",
       [](Config& c, const std::string& v) { return set_int(c.job_workers, v, "job-workers", 1, 256); }},
      {"background-job-workers", "IMAGO_BACKGROUND_JOB_WORKERS", "N",
       "free movement regenerations run at once on this node, apart from --job-workers (default 1)",
       [](Config& c, const std::string& v) {
         return set_int(c.background_job_workers, v, "background-job-workers", 1, 256);
       }},
      {"runtime-token-ttl-s", "IMAGO_RUNTIME_TOKEN_TTL_S", "SECONDS", "runtime token lifetime (default 300)",
       [](Config& c, const std::string& v) {
         return set_int(c.runtime_token_ttl_s, v, "runtime-token-ttl-s", 10, 86400);
       }},
      {"live-grace-s", "IMAGO_LIVE_GRACE_S", "SECONDS",
       "a live session pauses this long after its last token renewal (default 300)",
       [](Config& c, const std::string& v) { return set_int(c.live_grace_s, v, "live-grace-s", 1, 86400); }},
      {"live-billing-period-s", "IMAGO_LIVE_BILLING_PERIOD_S", "SECONDS",
       "length of one billed live-session minute; only tests shorten it (default 60)",
       [](Config& c, const std::string& v) {
         return set_int(c.live_billing_period_s, v, "live-billing-period-s", 1, 3600);
       }},
      {"live-absent-s", "IMAGO_LIVE_ABSENT_S", "SECONDS",
       "end a session nobody joined after this long (default 300)",
       [](Config& c,
          const std::string& v) { return set_int(c.live_absent_s, v, "live-absent-s", 1, 86400); }},
      {"live-left-s", "IMAGO_LIVE_LEFT_S", "SECONDS",
       "end a session this long after its last viewer left (default 60)",
       [](Config& c, const std::string& v) { return set_int(c.live_left_s, v, "live-left-s", 1, 86400); }},
      {"live-idle-s", "IMAGO_LIVE_IDLE_S", "SECONDS",
       "end a session without speech or keep-alive for this long (default 120)",
       [](Config& c, const std::string& v) { return set_int(c.live_idle_s, v, "live-idle-s", 1, 86400); }},
      {"live-max-duration-s", "IMAGO_LIVE_MAX_DURATION_S", "SECONDS", "longest live session (default 3600)",
       [](Config& c, const std::string& v) {
         return set_int(c.live_max_duration_s, v, "live-max-duration-s", 1, 604800);
       }},
      {"session-sweep-grace-s", "IMAGO_SESSION_SWEEP_GRACE_S", "SECONDS",
       "cluster mode: end the sessions of a node whose room leases lapsed this long ago, as its "
       "node died (default 60, 4x the lease)",
       [](Config& c, const std::string& v) {
         return set_int(c.session_sweep_grace_s, v, "session-sweep-grace-s", 1, 86400);
       }},
      {"max-live-sessions", "IMAGO_MAX_LIVE_SESSIONS", "N",
       "live sessions this node renders at once; beyond it joins get 503 (default 8 per core)",
       [](Config& c, const std::string& v) {
         return set_int(c.max_live_sessions, v, "max-live-sessions", 1, 100000);
       }},
      {"live-sessions-per-account", "IMAGO_LIVE_SESSIONS_PER_ACCOUNT", "N",
       "live sessions one account may run at once (across the cluster in cluster mode); beyond it "
       "joins get 429 RATE_LIMITED (default half of --max-live-sessions)",
       [](Config& c, const std::string& v) {
         return set_int(c.live_sessions_per_account, v, "live-sessions-per-account", 1, 100000);
       }},
      {"live-frame-side", "IMAGO_LIVE_FRAME_SIDE", "PX", "longest side of live video frames (default 512)",
       [](Config& c, const std::string& v) {
         return set_int(c.live_frame_side, v, "live-frame-side", 64, 1920);
       }},
      {"live-jpeg-quality", "IMAGO_LIVE_JPEG_QUALITY", "Q",
       "JPEG quality of live video frames, 1-100 (default 75)",
       [](Config& c,
          const std::string& v) { return set_int(c.live_jpeg_quality, v, "live-jpeg-quality", 1, 100); }},
      {"live-video-kbps", "IMAGO_LIVE_VIDEO_KBPS", "KBPS",
       "peak H.264 rate of a live room at standard quality; low halves it, high doubles it (default 400)",
       [](Config& c, const std::string& v) {
         return set_int(c.live_video_kbps, v, "live-video-kbps", 50, 20000);
       }},
      {"live-audio-kbps", "IMAGO_LIVE_AUDIO_KBPS", "KBPS",
       "Opus rate of a live room at standard quality; low takes 3/4 of it, at least 24 (default 32)",
       [](Config& c, const std::string& v) {
         return set_int(c.live_audio_kbps, v, "live-audio-kbps", 16, 128);
       }},
      {"live-keyframe-s", "IMAGO_LIVE_KEYFRAME_S", "SECONDS",
       "longest time between two H.264 key frames of a live room (default 2)",
       [](Config& c, const std::string& v) {
         return set_int(c.live_keyframe_s, v, "live-keyframe-s", 1, 10);
       }},
      {"live-video-max-side", "IMAGO_LIVE_VIDEO_MAX_SIDE", "PX",
       "longest side of encoded live pictures; larger frames are scaled down (default 512)",
       [](Config& c, const std::string& v) {
         return set_int(c.live_video_max_side, v, "live-video-max-side", 64, 1920);
       }},
      {"llm-base-url", "IMAGO_LLM_BASE_URL", "URL",
       "OpenAI-compatible chat endpoint, e.g. http://127.0.0.1:11434/v1 (default: built-in responder)",
       [](Config& c, const std::string& v) -> Status {
         if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) {
           return Status::Invalid("--llm-base-url must be an http:// or https:// URL");
         }
         c.llm_base_url = v;
         return Status::Ok();
       }},
      {"llm-model", "IMAGO_LLM_MODEL", "NAME", "model name sent to the chat endpoint",
       [](Config& c, const std::string& v) {
         c.llm_model = v;
         return Status::Ok();
       }},
      {"llm-allow-private", "IMAGO_LLM_ALLOW_PRIVATE", nullptr,
       "let the chat endpoint be on a private or loopback address (local models)",
       [](Config& c, const std::string& v) { return set_bool(c.llm_allow_private, v, "llm-allow-private"); }},
      {"llm-vision", "IMAGO_LLM_VISION", nullptr,
       "the chat model accepts images: offer camera_chat sessions (viewer camera frames go to the model)",
       [](Config& c, const std::string& v) { return set_bool(c.llm_vision, v, "llm-vision"); }},
  };
  return opts;
}

}  // namespace

Status parse_config(int argc, char** argv, Config& cfg, bool* help) {
  if (help) *help = false;
  // Environment first, flags override.
  for (const auto& o : options()) {
    if (const char* v = std::getenv(o.env); v && *v) {
      if (Status s = o.set(cfg, v); !s.ok()) return Status::Invalid(std::string(o.env) + ": " + s.message());
    }
  }
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      if (help) *help = true;
      return Status::Ok();
    }
    if (a.rfind("--", 0) != 0) return Status::Invalid("unexpected argument '" + a + "'");
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Option* opt = nullptr;
    for (const auto& o : options()) {
      if (name == o.flag) opt = &o;
    }
    if (!opt) return Status::Invalid("unknown option '--" + name + "' (see --help)");
    if (opt->arg && !has_value) {
      if (i + 1 >= argc) return Status::Invalid("--" + name + " needs a value");
      value = argv[++i];
    }
    if (Status s = opt->set(cfg, value); !s.ok()) return s;
  }
  return Status::Ok();
}

std::string config_help() {
  std::ostringstream out;
  out << "Options (each also settable by its environment variable):\n";
  for (const auto& o : options()) {
    std::string left = std::string("  --") + o.flag + (o.arg ? std::string(" ") + o.arg : "");
    out << left;
    for (size_t i = left.size(); i < 36; ++i) out << ' ';
    out << ' ' << o.help << "  [" << o.env << "]\n";
  }
  return out.str();
}

void finalize_config(Config& cfg) {
  // The key is read from the environment only: a flag would show it in the process list.
  if (const char* k = std::getenv("IMAGO_LLM_API_KEY"); k && *k) cfg.llm_api_key = k;
  if (cfg.io_threads <= 0) cfg.io_threads = usable_cores();
  if (cfg.tts_workers <= 0) cfg.tts_workers = usable_cores();
  if (cfg.max_live_sessions <= 0) {
    cfg.max_live_sessions = kLiveSessionsPerCore * usable_cores();
  }
  if (cfg.live_sessions_per_account <= 0)
    cfg.live_sessions_per_account = std::max(1, cfg.max_live_sessions / 2);
  // IMAGO_DATABASE: the variable's earlier name, still honoured.
  if (const char* old = std::getenv("IMAGO_DATABASE"); cfg.database_url.empty() && old && *old)
    cfg.database_url = old;
#ifdef IMAGO_DEFAULT_WEB_DIR
  if (cfg.web_dir.empty()) cfg.web_dir = IMAGO_DEFAULT_WEB_DIR;
#endif
  if (cfg.database_url.empty()) cfg.database_url = "sqlite:" + cfg.data_dir + "/imago.db";
  if (cfg.public_url.empty()) {
    bool v6 = cfg.listen_host.find(':') != std::string::npos;
    cfg.public_url = std::string(cfg.tls_cert_file.empty() ? "http://" : "https://") +
                     (v6 ? "[" + cfg.listen_host + "]" : cfg.listen_host) + ":" +
                     std::to_string(cfg.listen_port);
  }
}

}  // namespace imago

#include "main/app.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "agents/agent_service.h"
#include "agents/video_service.h"
#include "api/routes.h"
#include "auth/account_admin.h"
#include "auth/authenticator.h"
#include "auth/device_login.h"
#include "auth/first_run.h"
#include "auth/members.h"
#include "auth/provisioning.h"
#include "auth/runtime_token.h"
#include "core/services.h"
#include "files/file_service.h"
#include "http/metrics.h"
#include "http/pipeline.h"
#include "http/router.h"
#include "http/server.h"
#include "jobs/runtime.h"
#include "limits/rate_limiter.h"
#include "limits/storage_quota.h"
#include "live/conversation_brain.h"
#include "live/rooms.h"
#include "live/self_hosted_meter.h"
#include "sessions/session_service.h"
#include "speech/speech_service.h"
#include "store/postgres/pg_rate_limiter.h"
#include "store/stores.h"
#include "util/log.h"
#include "util/random.h"
#include "webhooks/webhook_service.h"

namespace imago {

struct App::Parts {
  Config config;
  Clock* clock = &SystemClock::instance();
  Stores stores;
  // Declared after the stores (destroyed before them) and before the server (destroyed after it).
  std::unique_ptr<speech::SpeechService> speech;
  std::unique_ptr<jobs::Runtime> jobs_runtime;
  std::unique_ptr<agents::AgentService> agent_service;
  std::unique_ptr<agents::VideoService> video_service;
  std::unique_ptr<files::FileService> file_service;
  std::unique_ptr<webhooks::WebhookService> webhook_service;
  std::unique_ptr<AccountAdmin> account_admin;
  std::unique_ptr<TokenKeyring> token_keys;
  std::unique_ptr<sessions::SessionService> session_service;  // before the rooms: they write to it
  std::unique_ptr<live::Rooms> rooms;
  std::unique_ptr<live::SelfHostedMeter> self_hosted;
  std::unique_ptr<RateLimiter> limiter;
  StorageQuotas storage_quotas;
  std::unique_ptr<WindowCounter> windows;
  Metrics metrics;
  std::unique_ptr<Authenticator> authenticator;
  std::unique_ptr<MemberAuth> member_auth;
  std::unique_ptr<FirstRun> first_run;
  std::unique_ptr<DeviceLogin> device_login;
  Services services;
  http::Router router;
  std::unique_ptr<http::Pipeline> pipeline;
  std::unique_ptr<http::Server> server;
  std::string admin_token;
};

// Writes a secret to `path` readable by this user only: created 0600 (never briefly readable by
// others), written whole under a temporary name and renamed over `path`.
Status write_private_file(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("cannot write " + tmp);
  bool ok = ::fchmod(fd, 0600) == 0;  // an old temporary file keeps its mode otherwise
  for (size_t done = 0; ok && done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::Internal("cannot create " + path);
  }
  return Status::Ok();
}

Status resolve_admin_token(const Config& config, std::string* token) {
  if (!config.admin_token.empty()) {
    *token = config.admin_token;
    return Status::Ok();
  }
  const std::string path = config.data_dir + "/admin.token";
  std::ifstream in(path);
  if (in) {
    std::getline(in, *token);
    if (token->size() >= 16) return Status::Ok();
    return Status::Invalid("the admin token in " + path + " is shorter than 16 characters");
  }
  *token = "imago_admin_" + random_base62(43);
  return write_private_file(path, *token + "\n");
}

Result<std::unique_ptr<App>> App::create(Config config) {
  std::unique_ptr<App> app(new App());
  app->p_ = std::make_unique<Parts>();
  Parts& p = *app->p_;
  p.config = std::move(config);

  std::error_code ec;
  std::filesystem::create_directories(p.config.data_dir, ec);
  if (ec) return Status::Invalid("cannot create data directory " + p.config.data_dir + ": " + ec.message());
  ::chmod(p.config.data_dir.c_str(), 0700);

  auto stores = open_stores(p.config.database_url, *p.clock);
  if (!stores.ok()) return stores.status();
  p.stores = std::move(stores).value();

  if (p.stores.pg_db && p.config.admin_token.empty()) {
    // Cluster: every node accepts the same admin token, kept in the database (the first node to
    // start creates it; `imagod admin-token` prints it).
    auto shared = p.stores.shared_secret("admin_token", [] { return "imago_admin_" + random_base62(43); });
    if (!shared.ok()) return Status::Internal("admin token: " + shared.status().message());
    p.admin_token = **shared;
  } else if (Status st = resolve_admin_token(p.config, &p.admin_token); !st.ok()) {
    return st;
  }

  if (p.stores.pg_db) {
    // Cluster: one bucket per account (and one window per IP) shared by every node.
    p.limiter = make_pg_rate_limiter(*p.stores.pg_db);
    p.windows = make_pg_window_counter(*p.stores.pg_db);
  } else {
    p.limiter = make_memory_rate_limiter(*p.clock);
    p.windows = make_memory_window_counter(*p.clock);
  }
  p.authenticator = std::make_unique<Authenticator>(*p.stores.accounts, *p.clock);

  Services& s = p.services;
  s.config = &p.config;
  s.clock = p.clock;
  s.accounts = p.stores.accounts.get();
  s.ledger = p.stores.ledger.get();
  s.limiter = p.limiter.get();
  auto quotas = parse_storage_quotas(p.config.storage_quota);
  if (!quotas.ok()) return quotas.status();
  p.storage_quotas = *quotas;
  s.storage_quotas = &p.storage_quotas;
  s.metrics = &p.metrics;
  p.account_admin = std::make_unique<AccountAdmin>(*p.stores.accounts, *p.stores.ledger);
  s.account_admin = p.account_admin.get();

  s.voices = p.stores.voices.get();

  p.member_auth = std::make_unique<MemberAuth>(*p.stores.members, *p.stores.accounts, *p.windows, *p.clock);
  p.device_login = std::make_unique<DeviceLogin>(*p.stores.device_grants, *p.stores.accounts, *p.clock);
  s.members = p.stores.members.get();
  s.device_grants = p.stores.device_grants.get();
  s.member_auth = p.member_auth.get();
  s.device_login = p.device_login.get();

  auto speech = speech::make_speech_service(speech::speech_options_from_config(p.config));
  if (!speech.ok()) return Status::Internal("speech engine: " + speech.status().message());
  p.speech = std::move(speech).value();
  s.speech = p.speech.get();

  // Agents, dynamics, files, webhooks; the job workers start in run().
  auto rt = jobs::Runtime::create(p.config, p.stores, *p.clock);
  if (!rt.ok()) return Status::Internal("jobs: " + rt.status().message());
  p.jobs_runtime = std::move(rt).value();
  p.jobs_runtime->fill(s);
  p.file_service = std::make_unique<files::FileService>(
      files::FileServiceDeps{s.blobs, s.files, s.job_store, s.fetcher, s.clock});
  s.file_service = p.file_service.get();
  p.webhook_service = std::make_unique<webhooks::WebhookService>(*s.webhooks, *s.fetcher, *s.clock);
  s.webhook_service = p.webhook_service.get();
  agents::AgentServiceDeps ad;
  ad.agents = s.agents;
  ad.files = s.files;
  ad.blobs = s.blobs;
  ad.voices = s.voices;
  ad.clock = s.clock;
  ad.public_url = &p.config.public_url;
  ad.wake_workers = [queue = s.jobs] { queue->wake(); };
  p.agent_service = std::make_unique<agents::AgentService>(std::move(ad));
  s.agent_service = p.agent_service.get();
  agents::VideoServiceDeps vd;
  vd.agents = s.agents;
  vd.files = s.files;
  vd.blobs = s.blobs;
  vd.jobs = s.job_store;
  vd.ledger = s.ledger;
  vd.speech = s.speech;
  vd.fetcher = s.fetcher;
  vd.clock = s.clock;
  vd.public_url = &p.config.public_url;
  vd.wake_workers = [queue = s.jobs] { queue->wake(); };
  p.video_service = std::make_unique<agents::VideoService>(std::move(vd));
  s.video_service = p.video_service.get();

  // Live sessions: token keys (in the database in cluster mode, else in the data directory, 0600),
  // rooms, self-hosted metering.
  if (!p.stores.secrets) p.stores.secrets = make_file_secret_store(p.config.data_dir);
  auto keys = TokenKeyring::open(*p.stores.secrets, *p.clock);
  if (!keys.ok()) return Status::Internal("runtime token keys: " + keys.status().message());
  p.token_keys = std::move(keys).value();
  s.token_keys = p.token_keys.get();
  p.first_run = std::make_unique<FirstRun>(*p.token_keys, *p.stores.members, *p.member_auth, *p.clock);
  s.first_run = p.first_run.get();
  live::RoomsOptions lo;
  lo.timeouts.absent_us = int64_t{p.config.live_absent_s} * 1'000'000;
  lo.timeouts.left_us = int64_t{p.config.live_left_s} * 1'000'000;
  lo.timeouts.idle_us = int64_t{p.config.live_idle_s} * 1'000'000;
  lo.timeouts.max_duration_us = int64_t{p.config.live_max_duration_s} * 1'000'000;
  lo.timeouts.grace_us = int64_t{p.config.live_grace_s} * 1'000'000;
  lo.timeouts.billing_period_us = int64_t{p.config.live_billing_period_s} * 1'000'000;
  lo.max_sessions = p.config.max_live_sessions;
  lo.max_sessions_per_account = p.config.live_sessions_per_account;
  lo.model_side = p.config.live_frame_side;
  lo.jpeg_quality = p.config.live_jpeg_quality;
  // Session records, transcripts and recordings (docs/sessions.md): recordings are muxed under the
  // data directory, then written through the blob store.
  sessions::SessionServiceDeps sd{p.stores.sessions.get(), s.files, s.blobs, p.clock, &p.config.public_url};
  p.session_service = std::make_unique<sessions::SessionService>(sd);
  s.sessions = p.session_service.get();
  lo.recording_dir = p.config.data_dir + "/recordings";
  lo.journal_dir = p.config.data_dir + "/live-sessions";
  lo.sweep_grace_us = int64_t{p.config.session_sweep_grace_s} * 1'000'000;
  lo.encoded.video_kbps = p.config.live_video_kbps;
  lo.encoded.audio_kbps = p.config.live_audio_kbps;
  lo.encoded.keyframe_s = p.config.live_keyframe_s;
  lo.encoded.video_max_side = p.config.live_video_max_side;
  live::RoomsDeps ld{
      p.clock, s.agents, s.files, s.blobs, s.ledger, s.speech, p.stores.rooms.get(), p.session_service.get()};
  p.rooms = std::make_unique<live::Rooms>(ld, lo);
  // Sessions a crash of this node left running end now (docs/sessions.md, "When a node dies").
  if (int n = p.rooms->recover(); n > 0) log::info("live_sessions_recovered", {{"sessions", n}});
  // Every session converses: the operator's language model when configured, else the built-in
  // responder (docs/conversation.md).
  live::ConversationBrainOptions bo;
  bo.recognizers = std::make_shared<conversation::RecognizerPool>();
  if (!p.config.llm_base_url.empty()) {
    if (p.config.llm_model.empty()) return Status::Invalid("--llm-model is required with --llm-base-url");
    conversation::ChatClientOptions co;
    co.base_url = p.config.llm_base_url;
    co.model = p.config.llm_model;
    co.api_key = p.config.llm_api_key;
    co.allow_private = p.config.llm_allow_private;
    bo.llm = std::move(co);
    bo.vision = p.config.llm_vision;
  }
  // Each session starts knowing what the agent was given (docs/api/agents.md "Knowledge").
  p.rooms->set_brain_factory([bo, agents = p.agent_service.get()](live::Room& room,
                                                                  const AgentRecord& agent) {
    live::ConversationBrainOptions o = bo;
    auto known = agents->knowledge_texts(agent.account_id, agent.code);
    if (known.ok()) {
      o.agent_knowledge = std::move(known).value();
    } else {
      log::warn("agent_knowledge_unavailable", {{"agent", agent.code}, {"error", known.status().message()}});
    }
    return std::make_shared<live::ConversationBrain>(room, agent.system_prompt, o);
  });
  s.rooms = p.rooms.get();
  p.self_hosted = std::make_unique<live::SelfHostedMeter>(
      *p.stores.live_meters, *p.clock, lo.timeouts.billing_period_us, lo.timeouts.grace_us);
  s.self_hosted = p.self_hosted.get();

  api::register_all_routes(p.router, s);

  http::PipelineOptions po;
  po.admin_token = p.admin_token;
  po.trusted_proxies = p.config.trusted_proxies;
  po.failed_auth_per_minute = p.config.failed_auth_limit;
  po.anon_per_minute = p.config.anon_ip_limit;
  po.members = p.member_auth.get();
  po.network_backend = p.stores.pg_db != nullptr;  // keys and limits on a database server
  po.outbound_per_account = p.config.outbound_per_account > 0 ? p.config.outbound_per_account
                                                              : std::max(1, p.config.outbound_threads / 4);
  p.pipeline =
      std::make_unique<http::Pipeline>(p.router, *p.authenticator, *p.limiter, *p.windows, p.metrics, po);

  http::ServerOptions so;
  so.host = p.config.listen_host;
  so.port = p.config.listen_port;
  so.io_threads = p.config.io_threads;
  so.worker_threads = p.config.worker_threads;
  so.read_timeout_s = p.config.read_timeout_s;
  so.write_timeout_s = p.config.write_timeout_s;
  so.idle_timeout_s = p.config.idle_timeout_s;
  so.header_limit = static_cast<size_t>(p.config.header_limit_bytes);
  // Large upload bodies (RouteOptions::spool_body) are read into nameless files here.
  so.spool_dir = p.config.data_dir + "/spool";
  so.shutdown_grace_s = p.config.shutdown_grace_s;
  so.tls_cert_file = p.config.tls_cert_file;
  so.tls_key_file = p.config.tls_key_file;
  so.tls_handshake_timeout_s = p.config.tls_handshake_timeout_s;
  // Viewers hear session.ended {reason: shutdown} before their connections close.
  // Requests waiting for a video (wait: true) answer with its current state at once.
  so.before_shutdown = [rooms = p.rooms.get(), video = p.video_service.get()] {
    rooms->shutdown();
    video->shutdown();
  };
  so.max_connections = p.config.max_connections;
  so.max_connections_per_ip = p.config.max_connections_per_ip;
  so.fd_reserve = p.config.fd_reserve;
  so.per_ip_exempt = p.config.trusted_proxies;
  so.stream_threads = p.config.stream_threads;
  so.cpu_threads = p.config.cpu_threads;
  so.cpu_queue = p.config.cpu_queue;
  so.outbound_threads = p.config.outbound_threads;
  so.outbound_queue = p.config.outbound_queue;
  p.server = std::make_unique<http::Server>(so, *p.pipeline);
  return app;
}

App::~App() = default;

namespace {

// First start on an empty database: one account whose secret is handed over once, so `make run`
// ends with something a newcomer can paste. The secret never goes to the log, nor to a stderr
// that is not a terminal (service managers and containers collect both into the log): on a
// terminal it is printed there; otherwise it goes to a file only this user can read, and the log
// says where.
void bootstrap_first_account(AccountStore& accounts, const Config& config, const std::string& base_url) {
  auto n = accounts.count_accounts();
  if (!n.ok() || *n > 0) return;
  auto created = create_account_with_key(accounts, "owner", Plan::kPro, 5000);
  if (!created.ok()) {
    log::error("bootstrap_failed", {{"error", created.status().message()}});
    return;
  }
  const std::string& secret = created->first_key.secret;
  boost::json::object fields{{"account", created->account.id}, {"plan", "pro"}, {"credits", 5000}};
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  const std::string secret_file = config.data_dir + "/" + kBootstrapSecretFile;
  std::string where;
  if (terminal) {
    fields["api_secret_shown_on"] = "terminal";
  } else if (Status st = write_private_file(secret_file, secret + "\n"); st.ok()) {
    fields["api_secret_file"] = secret_file;
    where = secret_file;
  } else {
    // Nowhere safe to put it: the account stays, and the operator makes a key with `imagod admin`.
    fields["api_secret_file_error"] = st.message();
  }
  log::info("bootstrap_account_created", std::move(fields));
  std::cerr << "\n"
            << "  Imago created its first account (\"owner\", plan pro, 5000 credits).\n";
  if (terminal) {
    std::cerr << "  Its API secret is shown this once; keep it somewhere safe:\n\n"
              << "    export IMAGO_API_SECRET=" << secret << "\n\n";
  } else if (!where.empty()) {
    std::cerr << "  Its API secret is in " << where << " (readable by this user only):\n\n"
              << "    export IMAGO_API_SECRET=$(cat " << where << ")\n\n";
  } else {
    std::cerr
        << "  Its API secret could not be stored; make a key with `imagod admin key create ACCOUNT_ID`.\n\n";
  }
  std::cerr << "  Then try:\n\n"
            << "    curl -s -X POST " << base_url << "/v1/validate -H \"api-secret: $IMAGO_API_SECRET\"\n"
            << "    curl -s " << base_url << "/v1/me -H \"api-secret: $IMAGO_API_SECRET\"\n\n"
            << "  Operator admin token: "
            << (!config.admin_token.empty() ? std::string("as given by --admin-token / IMAGO_ADMIN_TOKEN")
                : config.database_url.rfind("sqlite:", 0) == 0
                    ? config.data_dir + "/admin.token"
                    : std::string("in the database (imagod migrate --show-admin-token)"))
            << "\n\n"
            << std::flush;
}

// While the server's only account has no dashboard member, every start hands over a fresh
// one-time link to the dashboard (docs/dashboard.md, "First run"): no CLI step and no account id
// are needed to reach it. Like the API secret, the link never goes to the log: on a terminal it is
// printed there, otherwise it goes to a 0600 file in the data directory whose name the log gives.
void offer_first_run_link(AccountStore& accounts, MemberStore& member_store, const TokenKeyring& keys,
                          const Clock& clock, const Config& config, const std::string& base_url) {
  auto page = accounts.list_accounts(2, 0);
  if (!page.ok() || page->accounts.size() != 1) return;
  const std::string account_id = page->accounts.front().id;
  auto members = member_store.list_members(account_id);
  if (!members.ok() || !members->empty()) return;
  const std::string link = base_url + "/welcome#" + mint_first_run_token(keys, account_id, clock.now_s());
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  const std::string file = config.data_dir + "/" + kFirstRunLinkFile;
  boost::json::object fields{{"account", account_id}, {"valid_hours", kFirstRunLinkLifetimeS / 3600}};
  std::string where;
  if (terminal) {
    fields["link_shown_on"] = "terminal";
  } else if (Status st = write_private_file(file, link + "\n"); st.ok()) {
    fields["link_file"] = file;
    where = file;
  } else {
    fields["link_file_error"] = st.message();
  }
  log::info("first_run_link_offered", std::move(fields));
  std::cerr << "  Dashboard: " << base_url << "/\n";
  if (terminal) {
    std::cerr << "  Open this one-time link to choose the owner's email and password (valid 24 hours):\n\n"
              << "    " << link << "\n\n";
  } else if (!where.empty()) {
    std::cerr << "  A one-time link to choose the owner's email and password is in " << where << "\n\n";
  }
  std::cerr << std::flush;
}

}  // namespace

int App::run() {
  Parts& p = *p_;
  Status st = p.server->listen();
  if (!st.ok()) {
    log::error("listen_failed", {{"error", st.message()}});
    std::cerr << "imagod serve: " << st.message() << "\n";
    return 1;
  }
  // With --listen HOST:0 the public URL follows the port actually bound.
  if (p.config.listen_port == 0) {
    p.config.listen_port = p.server->port();
    if (p.config.public_url.ends_with(":0")) {
      p.config.public_url =
          p.config.public_url.substr(0, p.config.public_url.size() - 1) + std::to_string(p.server->port());
    }
  }
  // Cluster: where other nodes relay viewers of this node's rooms (a wildcard address names no
  // node: then --node-url is needed for relaying).
  if (!p.config.node_url.empty()) {
    p.rooms->set_node_url(p.config.node_url);
  } else if (p.config.listen_host != "0.0.0.0" && p.config.listen_host != "::") {
    bool v6 = p.config.listen_host.find(':') != std::string::npos;
    const char* scheme = p.config.tls_cert_file.empty() ? "http://" : "https://";
    p.rooms->set_node_url(scheme + (v6 ? "[" + p.config.listen_host + "]" : p.config.listen_host) + ":" +
                          std::to_string(p.server->port()));
  }
  // Job workers start once public_url is final: it appears in webhook payloads.
  if (p.config.run_workers) p.jobs_runtime->start_workers();
  if (p.config.bootstrap_account) {
    bootstrap_first_account(*p.stores.accounts, p.config, p.config.public_url);
    offer_first_run_link(*p.stores.accounts, *p.stores.members, *p.token_keys, *p.clock, p.config,
                         p.config.public_url);
  }
  log::info("listening", {{"address", p.config.listen_host},
                          {"port", p.server->port()},
                          {"public_url", p.config.public_url},
                          {"tls", !p.config.tls_cert_file.empty()},
                          {"data_dir", p.config.data_dir},
                          {"io_threads", p.config.io_threads}});
  p.server->run();
  p.rooms->shutdown();  // already done by before_shutdown unless run() ended otherwise
  log::info("stopped", {});
  return 0;
}

int serve_main(int argc, char** argv) {
  Config cfg;
  bool help = false;
  Status st = parse_config(argc, argv, cfg, &help);
  if (help) {
    std::cout << "Usage: imagod serve [options]\n\n" << config_help();
    return 0;
  }
  if (!st.ok()) {
    std::cerr << "imagod serve: " << st.message() << "\n";
    return 2;
  }
  finalize_config(cfg);
  log::Level level;
  if (log::parse_level(cfg.log_level, &level)) log::set_level(level);
  auto app = App::create(cfg);
  if (!app.ok()) {
    std::cerr << "imagod serve: " << app.status().message() << "\n";
    return 1;
  }
  // From here on a request's access-log line waits about a millisecond to share one write with
  // its neighbours (util/log.h); warnings and errors are still written at once.
  log::set_buffered();
  return (*app)->run();
}

}  // namespace imago

// The one dependency bag: everything a request handler or a job handler may call, wired once in
// src/main (app.cpp for `imagod serve`, jobs::Runtime for the job machinery of serve and worker).
// Plain pointers to forward-declared types, so any floor may hold it without including upward
// (docs/architecture.md): the owner (App or Runtime) outlives every request and job.
#pragma once
#include "config/config.h"
#include "util/clock.h"

namespace imago {

class AccountStore;
class LedgerStore;
class RateLimiter;
struct StorageQuotas;
class Metrics;
class BlobStore;
class AgentStore;
class FileStore;
class JobStore;
class WebhookStore;
namespace fetch {
class Fetcher;
}
class VoiceStore;
class MemberStore;
class DeviceGrantStore;
class MemberAuth;
class FirstRun;
class DeviceLogin;
class AccountAdmin;

namespace speech {
class SpeechService;
}
namespace jobs {
class JobNotifier;
}
namespace agents {
class AgentService;
class VideoService;
}  // namespace agents
class TokenKeyring;
namespace sessions {
class SessionService;
}
namespace files {
class FileService;
}
namespace webhooks {
class WebhookService;
}
namespace live {
class Rooms;
class SelfHostedMeter;
}  // namespace live

struct Services {
  const Config* config = nullptr;
  Clock* clock = nullptr;
  AccountStore* accounts = nullptr;
  LedgerStore* ledger = nullptr;
  RateLimiter* limiter = nullptr;
  const StorageQuotas* storage_quotas = nullptr;  // per plan (--storage-quota)
  Metrics* metrics = nullptr;

  // Speech.
  speech::SpeechService* speech = nullptr;
  VoiceStore* voices = nullptr;  // designed voices (voice codes)
  // Agents, files, jobs, webhooks add their stores here.
  BlobStore* blobs = nullptr;
  jobs::JobNotifier* jobs = nullptr;
  AgentStore* agents = nullptr;
  FileStore* files = nullptr;
  JobStore* job_store = nullptr;
  WebhookStore* webhooks = nullptr;
  fetch::Fetcher* fetcher = nullptr;
  files::FileService* file_service = nullptr;           // uploads, downloads, deleting uploads
  webhooks::WebhookService* webhook_service = nullptr;  // subscriptions, test pings, delivery log
  AccountAdmin* account_admin = nullptr;                // the operator's admin API
  // The agent lifecycle (src/agents); request handlers go through it, never the stores directly.
  agents::AgentService* agent_service = nullptr;
  agents::VideoService* video_service = nullptr;  // talking videos (POST /v1/video/generate)

  // Live sessions: signing keys of runtime/embed tokens, the node's rooms, and the
  // per-minute meter of self-hosted sessions.
  TokenKeyring* token_keys = nullptr;
  live::Rooms* rooms = nullptr;
  live::SelfHostedMeter* self_hosted = nullptr;
  // Live sessions after the fact: records, transcripts, recordings (docs/sessions.md).
  sessions::SessionService* sessions = nullptr;
  // Dashboard members, sessions, the owner's first-run link and CLI sign-in.
  MemberStore* members = nullptr;
  DeviceGrantStore* device_grants = nullptr;
  MemberAuth* member_auth = nullptr;
  FirstRun* first_run = nullptr;
  DeviceLogin* device_login = nullptr;

  // Absolute URL for a path under the server's public base ("/v1/files/x" -> "http://host/v1/files/x").
  std::string absolute_url(std::string_view path) const { return config->public_url + std::string(path); }
};

}  // namespace imago

// Opens the configured database and builds every store on it. The one place that knows which
// backend is in use: "sqlite:PATH" today; "postgres://..." joins here for clusters.
#pragma once
#include <memory>
#include <string>

#include "store/account_store.h"
#include "store/agent_store.h"
#include "store/device_grant_store.h"
#include "store/file_store.h"
#include "store/job_store.h"
#include "store/ledger_store.h"
#include "store/member_store.h"
#include "store/voice_store.h"
#include "store/webhook_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {

namespace sqlite {
class Db;
}

struct Stores {
  Stores();
  ~Stores();
  Stores(Stores&&) noexcept;
  Stores& operator=(Stores&&) noexcept;

  std::unique_ptr<sqlite::Db> sqlite_db;  // set for the SQLite backend
  std::unique_ptr<AccountStore> accounts;
  std::unique_ptr<LedgerStore> ledger;
  std::unique_ptr<VoiceStore> voices;  // designed voices (voice codes)
  std::unique_ptr<AgentStore> agents;
  std::unique_ptr<FileStore> files;
  std::unique_ptr<JobStore> jobs;
  std::unique_ptr<WebhookStore> webhooks;
  std::unique_ptr<MemberStore> members;             // dashboard members and sessions
  std::unique_ptr<DeviceGrantStore> device_grants;  // CLI sign-ins in flight
};

// Opens the database named by `database_url` and applies pending migrations.
Result<Stores> open_stores(const std::string& database_url, Clock& clock);

}  // namespace imago

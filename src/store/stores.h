// Opens the configured database and builds every store on it. The one place that knows which
// backend is in use: "sqlite:PATH" (embedded default) or "postgres://..." / "postgresql://..."
// (cluster mode: every node on one database, docs/operations.md).
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/account_store.h"
#include "store/agent_store.h"
#include "store/device_grant_store.h"
#include "store/file_store.h"
#include "store/job_store.h"
#include "store/ledger_store.h"
#include "store/live_meter_store.h"
#include "store/member_store.h"
#include "store/room_directory.h"
#include "store/secret_store.h"
#include "store/session_store.h"
#include "store/voice_store.h"
#include "store/webhook_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {

namespace sqlite {
class Db;
}
namespace pg {
class Db;
class Listener;
}  // namespace pg

struct Stores {
  Stores();
  ~Stores();
  Stores(Stores&&) noexcept;
  Stores& operator=(Stores&&) noexcept;

  std::unique_ptr<sqlite::Db> sqlite_db;  // set for the SQLite backend
  std::unique_ptr<pg::Db> pg_db;          // set for the PostgreSQL backend (cluster mode)
  std::unique_ptr<AccountStore> accounts;
  std::unique_ptr<LedgerStore> ledger;
  std::unique_ptr<VoiceStore> voices;  // designed voices (voice codes)
  std::unique_ptr<AgentStore> agents;
  std::unique_ptr<FileStore> files;
  std::unique_ptr<JobStore> jobs;
  std::unique_ptr<WebhookStore> webhooks;
  std::unique_ptr<MemberStore> members;             // dashboard members and sessions
  std::unique_ptr<DeviceGrantStore> device_grants;  // CLI sign-ins in flight
  std::unique_ptr<LiveMeterStore> live_meters;      // self-hosted sessions' minutes
  std::unique_ptr<SessionStore> sessions;           // cloud live sessions: records, transcripts
  // Server secrets shared by every node (PostgreSQL); null on SQLite, where the node keeps its
  // own in the data directory (make_file_secret_store).
  std::unique_ptr<SecretStore> secrets;
  // Which node runs which live room (a single node owns them all on SQLite).
  std::unique_ptr<RoomDirectory> rooms;

  // Calls `wake` whenever a job is enqueued on any node (PostgreSQL LISTEN/NOTIFY, from a listener
  // thread). A wake-up only: workers still poll. No-op on SQLite, where one process owns the queue.
  void on_job_enqueued(std::function<void()> wake);
  // A secret every node must agree on (admin token, signing keys): on PostgreSQL the first node
  // stores `generate()`'s value and every node reads that one; on SQLite, nullopt (the node keeps
  // its own, in its data directory).
  Result<std::optional<std::string>> shared_secret(const std::string& name,
                                                   const std::function<std::string()>& generate);
  // "sqlite" or "postgres".
  std::string backend() const;

 private:
  std::unique_ptr<pg::Listener> job_listener_;
};

struct MigrationInfo {
  int version = 0;
  std::string name;
  bool applied = false;
  int64_t applied_at = 0;  // Unix seconds, when applied
};
// `imagod migrate`: every migration this build knows and whether the database has it. With
// `apply`, applies the pending ones first (under the same lock as a starting node).
Result<std::vector<MigrationInfo>> migrations_of(const std::string& database_url, bool apply);

// Opens the database named by `database_url` and applies pending migrations.
Result<Stores> open_stores(const std::string& database_url, Clock& clock);

}  // namespace imago

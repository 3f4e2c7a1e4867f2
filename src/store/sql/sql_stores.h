// The table stores, written once over the SQL interfaces (connection.h) and run on SQLite and
// PostgreSQL alike (docs/architecture.md, "One store, two databases"), on a database migrated to
// schema.h's history. Each store keeps a reference to `db`, which must outlive it.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/account_store.h"
#include "store/agent_store.h"
#include "store/device_grant_store.h"
#include "store/file_store.h"
#include "store/job_store.h"
#include "store/ledger_store.h"
#include "store/live_meter_store.h"
#include "store/member_store.h"
#include "store/session_store.h"
#include "store/sql/connection.h"
#include "store/voice_store.h"
#include "store/webhook_store.h"
#include "util/clock.h"

namespace imago::sql {

// What a table store holds: the database and the clock it stamps times with.
class TableStore {
 public:
  TableStore(Database& db, Clock& clock) : db_(db), clock_(clock) {}

 protected:
  Database& db_;
  Clock& clock_;
};

std::unique_ptr<AccountStore> make_account_store(Database& db, Clock& clock);
std::unique_ptr<AgentStore> make_agent_store(Database& db, Clock& clock);
std::unique_ptr<VoiceStore> make_voice_store(Database& db, Clock& clock);
std::unique_ptr<FileStore> make_file_store(Database& db, Clock& clock);
std::unique_ptr<LedgerStore> make_ledger_store(Database& db, Clock& clock);
std::unique_ptr<JobStore> make_job_store(Database& db, Clock& clock);
std::unique_ptr<WebhookStore> make_webhook_store(Database& db, Clock& clock);
std::unique_ptr<MemberStore> make_member_store(Database& db, Clock& clock);
std::unique_ptr<DeviceGrantStore> make_device_grant_store(Database& db);
std::unique_ptr<LiveMeterStore> make_live_meter_store(Database& db, Clock& clock);
std::unique_ptr<SessionStore> make_session_store(Database& db, Clock& clock);

// Webhook deliveries are retried up to this many attempts (docs/webhooks.md).
inline constexpr int kWebhookMaxAttempts = 8;

// --- inside a write transaction on `c` (a store's work that commits together with another's) ---

// Applies a credit movement (billing/) so that it commits with the work it pays for (SPEC 8.6).
// Locks the account row first on PostgreSQL, so operations on one account are serialized across
// nodes; then claims the operation key (a known one replays) and applies the movement with a
// conditional update. Idempotent by (account_id, operation_key).
Result<LedgerEntry> apply_ledger_op(Connection& c, const LedgerOp& op, int64_t now_s);
// The entry recorded under an operation key, if any.
std::optional<LedgerEntry> load_ledger_entry(Connection& c, const std::string& account_id,
                                             const std::string& key);

// Inserts the job (PostgreSQL: and wakes idle workers on every node at COMMIT). Returns its id.
std::string insert_job(Connection& c, const NewJob& job, int64_t now_us);
// True while `owner` holds the running job's lease (PostgreSQL: the row stays locked).
bool job_lease_held(Connection& c, const std::string& id, const std::string& owner);
// Moves a running job held by `owner` to `state` ("succeeded", "failed"); false if not held.
bool finish_job(Connection& c, const std::string& id, const std::string& owner, std::string_view state,
                const std::optional<std::string>& error, int64_t now_us);
int cancel_jobs_for_subject(Connection& c, const std::string& subject, int64_t now_us);
// The queued or running jobs of one account's agent (codes are per account, so the subject alone
// is not enough).
int cancel_agent_jobs(Connection& c, const std::string& account_id, const std::string& code, int64_t now_us);

// One delivery (and delivery job) per active subscription of the account that wants `event`.
// Returns the delivery ids.
std::vector<std::string> enqueue_webhook_event(Connection& c, const std::string& account_id,
                                               const std::string& event, const std::string& data_json,
                                               int64_t now_us);

// Agent artifacts are registered with the outcome that made them.
void insert_file(Connection& c, const FileRecord& f);
// Deletes the agent's file records and returns their blob keys.
std::vector<std::string> delete_agent_files(Connection& c, const std::string& account_id,
                                            const std::string& agent_code);
// Deletes the given file records (replaced artifacts) and returns their blob keys.
std::vector<std::string> delete_files(Connection& c, const std::vector<std::string>& ids);

}  // namespace imago::sql

// PostgreSQL implementations of the store interfaces (src/store/*_store.h), and the helpers they
// call inside each other's transactions (creating an agent charges the ledger and enqueues its job
// in one transaction), mirroring the SQLite stores one for one.
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
#include "store/member_store.h"
#include "store/postgres/db.h"
#include "store/room_directory.h"
#include "store/secret_store.h"
#include "store/voice_store.h"
#include "store/webhook_store.h"
#include "util/clock.h"

namespace imago::pg {

// NOTIFY channel that wakes idle job workers on every node (payload: the lane).
inline constexpr const char* kJobsChannel = "imago_jobs";

std::unique_ptr<AccountStore> make_account_store(Db& db, Clock& clock);
std::unique_ptr<LedgerStore> make_ledger_store(Db& db, Clock& clock);
std::unique_ptr<VoiceStore> make_voice_store(Db& db, Clock& clock);
std::unique_ptr<AgentStore> make_agent_store(Db& db, Clock& clock);
std::unique_ptr<FileStore> make_file_store(Db& db, Clock& clock);
std::unique_ptr<JobStore> make_job_store(Db& db, Clock& clock);
std::unique_ptr<WebhookStore> make_webhook_store(Db& db, Clock& clock);
std::unique_ptr<MemberStore> make_member_store(Db& db, Clock& clock);
std::unique_ptr<DeviceGrantStore> make_device_grant_store(Db& db);
std::unique_ptr<SecretStore> make_secret_store(Db& db);

// NOTIFY channel that wakes a node when a room command is written (payload: the command id).
inline constexpr const char* kRoomsChannel = "imago_rooms";
struct RoomDirectoryOptions {
  int64_t lease_us = 15'000'000;  // a room's lease lasts this long past its last renewal
  int64_t renew_us = 3'000'000;   // the owner renews its leases this often
  int64_t poll_us = 1'000'000;    // commands are read at least this often without a NOTIFY
};
std::unique_ptr<RoomDirectory> make_room_directory(Db& db, RoomDirectoryOptions options = {});

// --- inside a write transaction on `c` ---

// Locks the account row first, so operations on one account are serialized across nodes; then
// claims the operation key (a known one replays) and applies the movement with a conditional update.
Result<LedgerEntry> apply_ledger_op(Conn& c, const LedgerOp& op, int64_t now_s);
// The entry recorded under an operation key, if any.
std::optional<LedgerEntry> load_ledger_entry(Conn& c, const std::string& account_id, const std::string& key);
// Inserts the job and notifies idle workers (delivered at COMMIT). Returns the job id.
std::string insert_job(Conn& c, const NewJob& job, int64_t now_us);
bool job_lease_held(Conn& c, const std::string& id, const std::string& owner);
bool finish_job(Conn& c, const std::string& id, const std::string& owner, std::string_view state,
                const std::optional<std::string>& error, int64_t now_us);
int cancel_jobs_for_subject(Conn& c, const std::string& subject, int64_t now_us);
// The queued or running jobs of one account's agent (codes are per account, so the subject alone
// is not enough).
int cancel_agent_jobs(Conn& c, const std::string& account_id, const std::string& code, int64_t now_us);
void insert_file(Conn& c, const FileRecord& f);
std::vector<std::string> delete_agent_files(Conn& c, const std::string& account_id,
                                            const std::string& agent_code);
std::vector<std::string> delete_files(Conn& c, const std::vector<std::string>& ids);
std::vector<std::string> enqueue_webhook_event(Conn& c, const std::string& account_id,
                                               const std::string& event, const std::string& data_json,
                                               int64_t now_us);

}  // namespace imago::pg

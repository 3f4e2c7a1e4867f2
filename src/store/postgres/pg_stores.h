// The store interfaces (src/store/*_store.h) on PostgreSQL: the table stores are the shared SQL
// stores (store/sql/sql_stores.h) bound to a pg::Db; blobs, secrets, rate limits and the room
// directory are PostgreSQL's own.
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
std::unique_ptr<LiveMeterStore> make_live_meter_store(Db& db, Clock& clock);
std::unique_ptr<SecretStore> make_secret_store(Db& db);

// NOTIFY channel that wakes a node when a room command is written (payload: the command id).
inline constexpr const char* kRoomsChannel = "imago_rooms";
struct RoomDirectoryOptions {
  int64_t lease_us = 15'000'000;  // a room's lease lasts this long past its last renewal
  int64_t renew_us = 3'000'000;   // the owner renews its leases this often
  int64_t poll_us = 1'000'000;    // commands are read at least this often without a NOTIFY
};
std::unique_ptr<RoomDirectory> make_room_directory(Db& db, RoomDirectoryOptions options = {});

}  // namespace imago::pg

// The PostgreSQL factories of the shared SQL stores (store/sql/sql_stores.h).
#include "store/postgres/pg_stores.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago::pg {

std::unique_ptr<AccountStore> make_account_store(Db& db, Clock& clock) {
  return sql::make_account_store(sql::wrap(db), clock);
}

std::unique_ptr<AgentStore> make_agent_store(Db& db, Clock& clock) {
  return sql::make_agent_store(sql::wrap(db), clock);
}

std::unique_ptr<VoiceStore> make_voice_store(Db& db, Clock& clock) {
  return sql::make_voice_store(sql::wrap(db), clock);
}

std::unique_ptr<FileStore> make_file_store(Db& db, Clock& clock) {
  return sql::make_file_store(sql::wrap(db), clock);
}

std::unique_ptr<LedgerStore> make_ledger_store(Db& db, Clock& clock) {
  return sql::make_ledger_store(sql::wrap(db), clock);
}
std::unique_ptr<LiveMeterStore> make_live_meter_store(Db& db, Clock& clock) {
  return sql::make_live_meter_store(sql::wrap(db), clock);
}

std::unique_ptr<JobStore> make_job_store(Db& db, Clock& clock) {
  return sql::make_job_store(sql::wrap(db), clock);
}

std::unique_ptr<WebhookStore> make_webhook_store(Db& db, Clock& clock) {
  return sql::make_webhook_store(sql::wrap(db), clock);
}

std::unique_ptr<MemberStore> make_member_store(Db& db, Clock& clock) {
  return sql::make_member_store(sql::wrap(db), clock);
}

std::unique_ptr<DeviceGrantStore> make_device_grant_store(Db& db) {
  return sql::make_device_grant_store(sql::wrap(db));
}

}  // namespace imago::pg

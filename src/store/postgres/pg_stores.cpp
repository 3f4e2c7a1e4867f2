// The PostgreSQL factories of the shared SQL stores (store/sql/sql_stores.h).
#include "store/postgres/pg_stores.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago::pg {

std::unique_ptr<AccountStore> make_account_store(Db& db, Clock& clock) {
  return sql::make_account_store(sql::wrap(db), clock);
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

// In-transaction helpers for the PostgreSQL stores not on the shared stores yet.

Result<LedgerEntry> apply_ledger_op(Conn& c, const LedgerOp& op, int64_t now_s) {
  sql::PgConnection conn(c);
  return sql::apply_ledger_op(conn, op, now_s);
}

std::optional<LedgerEntry> load_ledger_entry(Conn& c, const std::string& account_id, const std::string& key) {
  sql::PgConnection conn(c);
  return sql::load_ledger_entry(conn, account_id, key);
}

void insert_file(Conn& c, const FileRecord& f) {
  sql::PgConnection conn(c);
  sql::insert_file(conn, f);
}

std::vector<std::string> delete_agent_files(Conn& c, const std::string& account_id,
                                            const std::string& agent_code) {
  sql::PgConnection conn(c);
  return sql::delete_agent_files(conn, account_id, agent_code);
}

std::vector<std::string> delete_files(Conn& c, const std::vector<std::string>& ids) {
  sql::PgConnection conn(c);
  return sql::delete_files(conn, ids);
}

std::string insert_job(Conn& c, const NewJob& job, int64_t now_us) {
  sql::PgConnection conn(c);
  return sql::insert_job(conn, job, now_us);
}

bool job_lease_held(Conn& c, const std::string& id, const std::string& owner) {
  sql::PgConnection conn(c);
  return sql::job_lease_held(conn, id, owner);
}

bool finish_job(Conn& c, const std::string& id, const std::string& owner, std::string_view state,
                const std::optional<std::string>& error, int64_t now_us) {
  sql::PgConnection conn(c);
  return sql::finish_job(conn, id, owner, state, error, now_us);
}

int cancel_jobs_for_subject(Conn& c, const std::string& subject, int64_t now_us) {
  sql::PgConnection conn(c);
  return sql::cancel_jobs_for_subject(conn, subject, now_us);
}

int cancel_agent_jobs(Conn& c, const std::string& account_id, const std::string& code, int64_t now_us) {
  sql::PgConnection conn(c);
  return sql::cancel_agent_jobs(conn, account_id, code, now_us);
}

std::vector<std::string> enqueue_webhook_event(Conn& c, const std::string& account_id,
                                               const std::string& event, const std::string& data_json,
                                               int64_t now_us) {
  sql::PgConnection conn(c);
  return sql::enqueue_webhook_event(conn, account_id, event, data_json, now_us);
}

}  // namespace imago::pg

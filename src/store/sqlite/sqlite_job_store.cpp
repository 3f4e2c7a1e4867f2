// The job queue on SQLite: the shared store (store/sql/), and its in-transaction helpers for the
// SQLite stores not on the shared stores yet.
#include "store/sqlite/sqlite_job_store.h"

#include "store/sql/backends.h"
#include "store/sql/sql_stores.h"

namespace imago::sqlite {

std::unique_ptr<JobStore> make_job_store(Db& db, Clock& clock) {
  return sql::make_job_store(sql::wrap(db), clock);
}

std::string insert_job(Conn& c, const NewJob& job, int64_t now_us) {
  sql::SqliteConnection conn(c);
  return sql::insert_job(conn, job, now_us);
}

bool job_lease_held(Conn& c, const std::string& id, const std::string& owner) {
  sql::SqliteConnection conn(c);
  return sql::job_lease_held(conn, id, owner);
}

bool finish_job(Conn& c, const std::string& id, const std::string& owner, std::string_view state,
                const std::optional<std::string>& error, int64_t now_us) {
  sql::SqliteConnection conn(c);
  return sql::finish_job(conn, id, owner, state, error, now_us);
}

int cancel_jobs_for_subject(Conn& c, const std::string& subject, int64_t now_us) {
  sql::SqliteConnection conn(c);
  return sql::cancel_jobs_for_subject(conn, subject, now_us);
}

int cancel_agent_jobs(Conn& c, const std::string& account_id, const std::string& code, int64_t now_us) {
  sql::SqliteConnection conn(c);
  return sql::cancel_agent_jobs(conn, account_id, code, now_us);
}

}  // namespace imago::sqlite

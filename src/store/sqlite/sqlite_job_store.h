// SQLite job queue, plus helpers other SQLite stores call inside their own write transactions
// (creating an agent enqueues its job; finishing a generation completes its job atomically).
#pragma once
#include <memory>

#include "store/job_store.h"
#include "store/sqlite/db.h"
#include "util/clock.h"

namespace imago::sqlite {

std::unique_ptr<JobStore> make_job_store(Db& db, Clock& clock);

// Inside a write transaction. Returns the job id.
std::string insert_job(Conn& c, const NewJob& job, int64_t now_us);
// True while `owner` holds the running job's lease.
bool job_lease_held(Conn& c, const std::string& id, const std::string& owner);
// Moves a running job held by `owner` to `state` ("succeeded", "failed"); false if not held.
bool finish_job(Conn& c, const std::string& id, const std::string& owner, std::string_view state,
                const std::optional<std::string>& error, int64_t now_us);
int cancel_jobs_for_subject(Conn& c, const std::string& subject, int64_t now_us);
// The queued or running jobs of one account's agent (codes are per account, so the subject alone
// is not enough).
int cancel_agent_jobs(Conn& c, const std::string& account_id, const std::string& code, int64_t now_us);

}  // namespace imago::sqlite

// What the job handlers share (private to src/jobs): writing an agent's artifacts, reading input
// files, undoing an attempt's writes, ending a job whose subject is gone.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/services.h"
#include "jobs/job_workers.h"
#include "store/agent_store.h"
#include "store/file_store.h"

namespace imago::jobs {

// Writes bytes as a new file of the agent; the record is registered later with the outcome.
Result<FileRecord> store_artifact(const Services& d, const AgentRecord& a, std::string purpose,
                                  std::string kind, std::string mime, std::string ext, std::string_view bytes,
                                  std::vector<std::string>& written);
Result<std::string> load_file_bytes(const Services& d, const std::string& account_id,
                                    const std::string& file_id);
// Removes the blobs this attempt wrote.
void delete_written(const Services& d, std::vector<std::string>& written);
std::string file_url(const Services& d, const FileRecord& f);
// The job's subject (agent, delivery) could not be loaded: when it is gone for good the job ends,
// any other failure (a busy database) is retried.
JobStep subject_unavailable(const Services& d, JobContext& ctx, const Status& st, const char* gone);

}  // namespace imago::jobs

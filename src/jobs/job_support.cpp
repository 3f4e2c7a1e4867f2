#include "jobs/job_support.h"

#include <boost/json.hpp>

#include "blobs/blob_store.h"
#include "jobs/job_handlers.h"
#include "store/job_store.h"
#include "util/random.h"

namespace imago::jobs {

namespace json = boost::json;

Result<FileRecord> store_artifact(const Services& d, const AgentRecord& a, std::string purpose,
                                  std::string kind, std::string mime, std::string ext, std::string_view bytes,
                                  std::vector<std::string>& written) {
  FileRecord f;
  f.id = new_id("file");
  f.account_id = a.account_id;
  f.agent_code = a.code;
  f.purpose = std::move(purpose);
  f.kind = std::move(kind);
  f.mime = std::move(mime);
  f.ext = std::move(ext);
  f.size = static_cast<int64_t>(bytes.size());
  f.blob_key = agent_blob_key(a.account_id, a.code, f.id, f.ext);
  f.created_at = d.clock->now_s();
  Status s = d.blobs->put(f.blob_key, bytes);
  if (!s.ok()) return s;
  written.push_back(f.blob_key);
  return f;
}

Result<std::string> load_file_bytes(const Services& d, const std::string& account_id,
                                    const std::string& file_id) {
  auto f = d.files->get(account_id, file_id);
  if (!f.ok()) return f.status();
  return d.blobs->get(f->blob_key);
}

void delete_written(const Services& d, std::vector<std::string>& written) {
  for (const auto& k : written) (void)d.blobs->remove(k);
  written.clear();
}

std::string file_url(const Services& d, const FileRecord& f) {
  return d.absolute_url(file_url_path(f.id, f.ext));
}

JobStep subject_unavailable(const Services& d, JobContext& ctx, const Status& st, const char* gone) {
  if (st.code() == Code::kNotFound) {
    (void)d.job_store->fail(ctx.job().id, ctx.owner(), gone);
    return JobStep::done();
  }
  return JobStep::retry(st.message());
}

std::string agent_event_data(const Services& d, const std::string& code, const std::string& status,
                             const std::optional<std::string>& model_url, const std::string& error) {
  json::object o{{"agent_id", code}, {"status", status}};
  if (status == "ready") {
    o["progress"] = 1.0;
    o["model_url"] = model_url.value_or("");
  } else {
    o["error_message"] = error;
  }
  (void)d;
  return json::serialize(o);
}

}  // namespace imago::jobs

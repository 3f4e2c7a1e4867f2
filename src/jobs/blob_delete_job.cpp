// blob_delete: removes blobs whose deletion failed when their records went.
#include "jobs/job_handlers.h"
#include "jobs/job_support.h"
#include "util/log.h"

namespace imago::jobs {

namespace json = boost::json;

JobStep BlobDeleteHandler::run(JobContext& ctx) {
  const Job& job = ctx.job();
  boost::system::error_code ec;
  json::value payload = json::parse(job.payload, ec);
  std::string first_error;
  if (!ec && payload.is_object()) {
    if (auto* keys = payload.as_object().if_contains("keys"); keys && keys->is_array()) {
      for (const auto& k : keys->as_array()) {
        if (!k.is_string()) continue;
        Status s = d_.blobs->remove(std::string(k.as_string()));
        if (!s.ok() && first_error.empty()) first_error = s.message();
      }
    }
  }
  if (!first_error.empty()) return JobStep::retry(first_error);
  (void)d_.job_store->complete(job.id, ctx.owner());
  return JobStep::done();
}

void BlobDeleteHandler::give_up(JobContext& ctx, const std::string& reason) {
  log::error("blob_delete_gave_up", {{"job", ctx.job().id}, {"error", reason}});
  (void)d_.job_store->fail(ctx.job().id, ctx.owner(), reason);
}

}  // namespace imago::jobs

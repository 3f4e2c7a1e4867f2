// webhook_delivery: one signed attempt per run, retried with backoff until delivered or given up.
#include "jobs/job_handlers.h"
#include "jobs/job_support.h"
#include "util/log.h"
#include "webhooks/delivery.h"

namespace imago::jobs {

namespace json = boost::json;

JobStep WebhookDeliveryHandler::run(JobContext& ctx) {
  const Job& job = ctx.job();
  auto d = d_.webhooks->get_delivery(job.subject);
  if (!d.ok()) return subject_unavailable(d_, ctx, d.status(), "delivery no longer exists");
  if (d->state != "pending") {
    (void)d_.job_store->complete(job.id, ctx.owner());
    return JobStep::done();
  }
  auto hook = d_.webhooks->get_by_id(d->webhook_id);
  if (!hook.ok() || !hook->active) {
    (void)d_.job_store->fail(job.id, ctx.owner(), "webhook was deleted or disabled");
    return JobStep::done();
  }
  auto res = webhooks::attempt_delivery(*d_.fetcher, *d_.clock, *hook, *d);
  bool last = job.attempts >= job.max_attempts;
  std::string state = res.delivered ? "delivered" : (!res.retryable || last) ? "failed" : "pending";
  auto n = d_.webhooks->record_attempt(d->id, res.status_code, res.error, res.duration_ms, state);
  log::info("webhook_attempt", {{"delivery", d->id},
                                {"event_type", d->event_type},
                                {"attempt", n.ok() ? *n : -1},
                                {"status_code", res.status_code ? *res.status_code : 0},
                                {"duration_ms", res.duration_ms},
                                {"state", state},
                                {"error", res.error.value_or("")}});
  if (res.delivered) {
    (void)d_.job_store->complete(job.id, ctx.owner());
    return JobStep::done();
  }
  if (state == "failed") {
    (void)d_.job_store->fail(job.id, ctx.owner(), res.error.value_or("delivery failed"));
    return JobStep::done();
  }
  return JobStep::retry(res.error.value_or("delivery failed"));
}

void WebhookDeliveryHandler::give_up(JobContext& ctx, const std::string& reason) {
  const Job& job = ctx.job();
  (void)d_.webhooks->record_attempt(job.subject, std::nullopt, "gave up: " + reason, 0, "failed");
  (void)d_.job_store->fail(job.id, ctx.owner(), reason);
}

}  // namespace imago::jobs

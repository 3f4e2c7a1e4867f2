// The job handlers: agent generation (fetch inputs, build the .imx, persist progress), dynamics
// (gesture clips and the dynamics model; background-movement regeneration), webhook delivery and
// blob cleanup. Each records its outcome through the stores, guarded by its lease. They read their
// dependencies (config, clock, stores, blobs, fetcher) from the one bag, core/services.h.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "blobs/blob_store.h"
#include "config/config.h"
#include "core/services.h"
#include "fetch/fetcher.h"
#include "jobs/job_workers.h"
#include "store/agent_store.h"
#include "store/file_store.h"
#include "store/job_store.h"
#include "store/webhook_store.h"
#include "util/clock.h"

namespace imago::jobs {

class AgentGenerationHandler final : public JobHandler {
 public:
  explicit AgentGenerationHandler(Services d) : d_(std::move(d)) {}
  JobStep run(JobContext& ctx) override;
  void give_up(JobContext& ctx, const std::string& reason) override;
  Backoff backoff() const override { return {3000, 3, 5 * 60 * 1000}; }

 private:
  // Records the failure (refund, agent.failed); deletes what this attempt wrote.
  void fail(JobContext& ctx, const AgentRecord* agent, const std::string& message,
            std::vector<std::string>& written);
  Services d_;
};

// Runs both dynamics_generate (every gesture, charged) and dynamics_movements (the idle
// background movement only, free, started by PUT /v1/dynamics/{agent_id}).
class DynamicsHandler final : public JobHandler {
 public:
  explicit DynamicsHandler(Services d) : d_(std::move(d)) {}
  JobStep run(JobContext& ctx) override;
  void give_up(JobContext& ctx, const std::string& reason) override;
  Backoff backoff() const override { return {3000, 3, 5 * 60 * 1000}; }

 private:
  void fail(JobContext& ctx, const std::string& message, std::vector<std::string>& written);
  Services d_;
};

class WebhookDeliveryHandler final : public JobHandler {
 public:
  explicit WebhookDeliveryHandler(Services d) : d_(std::move(d)) {}
  JobStep run(JobContext& ctx) override;
  void give_up(JobContext& ctx, const std::string& reason) override;
  // 1 s, 3 s, 9 s, 27 s ... (half of each randomised), eight attempts over about an hour.
  Backoff backoff() const override { return {1000, 3, 3600 * 1000}; }

 private:
  Services d_;
};

class BlobDeleteHandler final : public JobHandler {
 public:
  explicit BlobDeleteHandler(Services d) : d_(std::move(d)) {}
  JobStep run(JobContext& ctx) override;
  void give_up(JobContext& ctx, const std::string& reason) override;
  Backoff backoff() const override { return {30000, 2, 3600 * 1000}; }

 private:
  Services d_;
};

// Public JSON of the webhook payload data for agent events.
std::string agent_event_data(const Services& d, const std::string& code, const std::string& status,
                             const std::optional<std::string>& model_file, const std::string& error);

}  // namespace imago::jobs

// The generation machinery of a process, built in one place so `imagod serve` and `imagod worker`
// wire it identically: the blob store under <data_dir>/blobs, the SSRF-guarded fetcher, the job
// queue, the pipelines and the worker pools, on the stores opened by open_stores().
#pragma once
#include <memory>

#include "blobs/blob_store.h"
#include "config/config.h"
#include "core/services.h"
#include "fetch/fetcher.h"
#include "jobs/job_handlers.h"
#include "jobs/job_workers.h"
#include "jobs/video_render.h"
#include "store/agent_store.h"
#include "store/file_store.h"
#include "store/job_store.h"
#include "store/stores.h"
#include "store/webhook_store.h"
#include "util/clock.h"

namespace imago::jobs {

struct RuntimeOptions {
  int64_t lease_ms = 15000;  // Config::job_lease_ms (--job-lease-ms; tests shorten it)
  int64_t heartbeat_ms = 0;  // 0: a quarter of the lease
  int light_workers = 2;     // webhook deliveries and blob cleanup
  static RuntimeOptions from_config(const Config& config);
};

class Runtime {
 public:
  // `config` must outlive the runtime (its public_url may change after listen()).
  // `stores` must outlive the runtime.
  static Result<std::unique_ptr<Runtime>> create(const Config& config, Stores& stores, Clock& clock,
                                                 RuntimeOptions options);
  static Result<std::unique_ptr<Runtime>> create(const Config& config, Stores& stores, Clock& clock) {
    return create(config, stores, clock, RuntimeOptions::from_config(config));
  }
  ~Runtime();

  // Adds the stores, blob store, fetcher and queue to a dependency bag (the App's, for handlers).
  void fill(Services& s) const;
  // Starts config.job_workers generation workers and the light workers.
  void start_workers();
  void stop_workers();

  AgentStore& agents() { return *agents_; }
  FileStore& files() { return *files_; }
  WebhookStore& webhooks() { return *webhooks_; }
  JobStore& job_store() { return *jobs_; }
  BlobStore& blobs() { return *blobs_; }
  JobNotifier& queue() { return *queue_; }
  const fetch::Fetcher& fetcher() const { return *fetcher_; }

 private:
  Runtime() = default;
  const Config* config_ = nullptr;
  RuntimeOptions options_;
  AgentStore* agents_ = nullptr;
  FileStore* files_ = nullptr;
  WebhookStore* webhooks_ = nullptr;
  JobStore* jobs_ = nullptr;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<fetch::Fetcher> fetcher_;
  std::unique_ptr<JobNotifier> queue_;
  Services bag_;  // what the job handlers see
  std::unique_ptr<AgentGenerationHandler> agent_handler_;
  std::unique_ptr<DynamicsHandler> dynamics_handler_;
  std::unique_ptr<WebhookDeliveryHandler> webhook_handler_;
  std::unique_ptr<BlobDeleteHandler> blob_handler_;
  std::unique_ptr<VideoRenderHandler> video_handler_;
  std::unique_ptr<JobWorkerPool> generate_pool_;
  std::unique_ptr<JobWorkerPool> background_pool_;  // free work, so it never holds a generate worker
  std::unique_ptr<JobWorkerPool> light_pool_;
};

}  // namespace imago::jobs

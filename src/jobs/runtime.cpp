#include "jobs/runtime.h"

#include "store/postgres/pg_blob_store.h"
#include "util/log.h"
#include "util/strings.h"

namespace imago::jobs {

RuntimeOptions RuntimeOptions::from_config(const Config& config) {
  RuntimeOptions o;
  o.lease_ms = config.job_lease_ms;
  return o;
}

Result<std::unique_ptr<Runtime>> Runtime::create(const Config& config, Stores& stores, Clock& clock,
                                                 RuntimeOptions options) {
  std::unique_ptr<Runtime> rt(new Runtime());
  rt->config_ = &config;
  rt->options_ = options;
  if (rt->options_.heartbeat_ms <= 0)
    rt->options_.heartbeat_ms = std::max<int64_t>(100, options.lease_ms / 4);
  if (stores.pg_db) {
    // Cluster: blobs live in the database, so any node can serve what another one stored.
    rt->blobs_ = make_pg_blob_store(*stores.pg_db);
  } else {
    auto blobs = make_fs_blob_store(config.data_dir + "/blobs");
    if (!blobs.ok()) return blobs.status();
    rt->blobs_ = std::move(blobs).value();
  }
  rt->agents_ = stores.agents.get();
  rt->files_ = stores.files.get();
  rt->webhooks_ = stores.webhooks.get();
  rt->jobs_ = stores.jobs.get();
  rt->fetcher_ = std::make_unique<fetch::Fetcher>(config.allow_private_fetch);
  rt->queue_ = std::make_unique<JobNotifier>(*rt->jobs_, clock);
  // Jobs enqueued on other nodes wake this node's idle workers at once (PostgreSQL NOTIFY).
  stores.on_job_enqueued([q = rt->queue_.get()] { q->wake(); });

  Services& d = rt->bag_;
  d.config = &config;
  d.clock = &clock;
  d.accounts = stores.accounts.get();
  d.ledger = stores.ledger.get();
  d.voices = stores.voices.get();
  rt->fill(d);
  rt->agent_handler_ = std::make_unique<AgentGenerationHandler>(d);
  rt->dynamics_handler_ = std::make_unique<DynamicsHandler>(d);
  rt->webhook_handler_ = std::make_unique<WebhookDeliveryHandler>(d);
  rt->blob_handler_ = std::make_unique<BlobDeleteHandler>(d);
  rt->video_handler_ = std::make_unique<VideoRenderHandler>(d);
  return rt;
}

Runtime::~Runtime() {
  stop_workers();
}

void Runtime::fill(Services& s) const {
  s.agents = agents_;
  s.files = files_;
  s.webhooks = webhooks_;
  s.job_store = jobs_;
  s.blobs = blobs_.get();
  s.fetcher = fetcher_.get();
  s.jobs = queue_.get();
}

void Runtime::start_workers() {
  if (generate_pool_) return;
  std::string owner = process_owner_id();
  JobWorkerPoolOptions g;
  g.lane = std::string(kLaneGenerate);
  g.threads = std::max(1, config_->job_workers);
  g.lease_ms = options_.lease_ms;
  g.heartbeat_ms = options_.heartbeat_ms;
  g.owner_prefix = owner;
  generate_pool_ = std::make_unique<JobWorkerPool>(*queue_, g);
  generate_pool_->add_handler(std::string(kJobAgentGenerate), agent_handler_.get());
  generate_pool_->add_handler(std::string(kJobDynamicsGenerate), dynamics_handler_.get());
  generate_pool_->add_handler(std::string(kJobVideoRender), video_handler_.get());

  JobWorkerPoolOptions b = g;
  b.lane = std::string(kLaneBackground);
  b.threads = std::max(1, config_->background_job_workers);
  background_pool_ = std::make_unique<JobWorkerPool>(*queue_, b);
  background_pool_->add_handler(std::string(kJobDynamicsMovements), dynamics_handler_.get());

  JobWorkerPoolOptions l = g;
  l.lane = std::string(kLaneLight);
  l.threads = std::max(1, options_.light_workers);
  light_pool_ = std::make_unique<JobWorkerPool>(*queue_, l);
  light_pool_->add_handler(std::string(kJobWebhookDelivery), webhook_handler_.get());
  light_pool_->add_handler(std::string(kJobBlobDelete), blob_handler_.get());

  generate_pool_->start();
  background_pool_->start();
  light_pool_->start();
  log::info("job_workers_started", {{"owner", owner},
                                    {"generate_workers", g.threads},
                                    {"background_workers", b.threads},
                                    {"light_workers", l.threads},
                                    {"lease_ms", options_.lease_ms}});
}

void Runtime::stop_workers() {
  if (generate_pool_) generate_pool_->stop();
  if (background_pool_) background_pool_->stop();
  if (light_pool_) light_pool_->stop();
}

}  // namespace imago::jobs

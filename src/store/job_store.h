// The durable job queue (agent generation, dynamics, webhook deliveries, blob cleanup). Jobs are
// claimed with a lease that the worker extends while it runs; a job whose lease expired (worker
// crashed or was killed) is claimable again. Every state change after the claim names the lease
// owner, so a worker that lost its lease can never record an outcome: the outcome is recorded
// exactly once. SQLite claims inside one IMMEDIATE transaction; PostgreSQL will use
// SELECT ... FOR UPDATE SKIP LOCKED with the same predicate (docs/jobs.md).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace imago {

// Job kinds and lanes. Paid generation kinds share the "generate" lane (bounded by job_workers per
// node); free movement regenerations (PUT /v1/dynamics) have the "background" lane and its own
// workers, so paid generation never waits behind free work; short network jobs use the "light"
// lane so a long generation never delays a webhook.
inline constexpr std::string_view kJobAgentGenerate = "agent_generate";
inline constexpr std::string_view kJobDynamicsGenerate = "dynamics_generate";
inline constexpr std::string_view kJobDynamicsMovements = "dynamics_movements";
inline constexpr std::string_view kJobVideoRender = "video_render";  // POST /v1/video/generate
inline constexpr std::string_view kJobWebhookDelivery = "webhook_delivery";
inline constexpr std::string_view kJobBlobDelete = "blob_delete";
inline constexpr std::string_view kLaneGenerate = "generate";
inline constexpr std::string_view kLaneBackground = "background";
inline constexpr std::string_view kLaneLight = "light";

// Per-account concurrency (SPEC 8.5: generations queue and run as capacity frees up).
inline constexpr int kMaxRunningAgentJobsPerAccount = 3;
inline constexpr int kMaxRunningDynamicsJobsPerAccount = 2;

std::string_view lane_of(std::string_view kind);

struct NewJob {
  std::string id;  // "job_..." (new_id("job") when empty)
  std::string kind;
  std::string account_id;
  std::string subject;         // what it works on: agent code, delivery id
  std::string payload = "{}";  // JSON
  int max_attempts = 3;
  int64_t run_at_us = 0;  // 0: now
};

struct Job {
  std::string id, kind, lane, account_id, subject, payload, state;
  int attempts = 0;  // claims so far, including the current one
  int max_attempts = 0;
  int64_t run_at_us = 0;
  std::optional<std::string> lease_owner;
  int64_t lease_until_us = 0;
  std::optional<std::string> last_error;
  int64_t created_at_us = 0;
  int64_t updated_at_us = 0;
};

class JobStore {
 public:
  virtual ~JobStore() = default;
  virtual Result<std::string> enqueue(const NewJob& job) = 0;
  // The next runnable job of `lane` (queued and due, or running with an expired lease), within
  // the per-account limits; marks it running for `owner` until now + lease_us.
  virtual Result<std::optional<Job>> claim(std::string_view lane, const std::string& owner,
                                           int64_t lease_us) = 0;
  // Extends the lease; false when the lease was lost (expired and re-claimed, or cancelled).
  virtual Result<bool> heartbeat(const std::string& id, const std::string& owner, int64_t lease_us) = 0;
  // Final states; false when `owner` no longer holds the lease (nothing recorded).
  virtual Result<bool> complete(const std::string& id, const std::string& owner) = 0;
  virtual Result<bool> fail(const std::string& id, const std::string& owner, const std::string& error) = 0;
  // Back to the queue at run_at_us, keeping the error.
  virtual Result<bool> retry(const std::string& id, const std::string& owner, const std::string& error,
                             int64_t run_at_us) = 0;
  // Hands a running job back without counting the attempt (graceful shutdown, or a job waiting
  // for something else to finish), runnable again at run_at_us.
  virtual Result<bool> release(const std::string& id, const std::string& owner, int64_t run_at_us) = 0;
  virtual Result<Job> get(const std::string& id) = 0;
  // Cancels every queued or running job about `subject`; returns how many. Subjects are matched
  // in every account, so `subject` must be unique across accounts (a delivery or file id). Agent
  // codes are not (each account has its own namespace): their jobs are cancelled with the account,
  // by cancel_agent_jobs inside the agent store's delete.
  virtual Result<int> cancel_subject(const std::string& subject) = 0;
  // Every job about `subject`, oldest first (same matching as cancel_subject).
  virtual Result<std::vector<Job>> list_by_subject(const std::string& subject) = 0;
  // The account's jobs of one kind, newest first (ties by id), at most `max`.
  virtual Result<std::vector<Job>> list_by_kind(const std::string& account_id, std::string_view kind,
                                                int max) = 0;
};

}  // namespace imago

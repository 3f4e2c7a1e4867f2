// Agents (SPEC 2.1, 4.2-4.7) and their dynamics (SPEC 2.2, 4.10-4.12). Operations that pay for or
// finish work run in one transaction with the credit ledger and the job queue: creating an agent
// charges and enqueues together; finishing a generation records the outcome, completes the job
// (only while the worker still holds its lease), refunds on failure and queues webhooks together.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/file_store.h"
#include "store/job_store.h"
#include "store/ledger_store.h"
#include "util/status.h"

namespace imago {

// Agent codes are a namespace per account: two accounts may each have an agent `my-bot`. An agent
// is identified by (account_id, code) everywhere: its row, its jobs (account_id + subject), its
// files (account_id + agent_code), its blobs, rooms and tokens.
struct AgentRecord {
  std::string code;
  std::string account_id;
  std::string name;
  std::string status = "processing";  // processing, generating, completed, ready, failed
  double progress = 0;
  std::string progress_msg;
  std::string current_step;
  std::optional<std::string> error_message;
  std::string system_prompt;
  std::string model = "essence";
  std::string aspect_ratio = "16:9";
  std::string video_aspect_ratio = "16:9";
  double duration = 10;
  // Inputs still to fetch (external URLs); cleared once fetched into files.
  std::optional<std::string> image_source, video_source, audio_source;
  // File ids (files table) of what the agent has stored.
  std::optional<std::string> image_file, video_file, audio_file, model_file;
  // Dynamics: configuration (JSON object), state and results.
  std::string dynamics_config = "{}";
  std::optional<std::string> dynamics_status;  // null: never generated; generating, ready, failed
  std::optional<std::string> dynamics_file;    // dynamics model file id
  std::string dynamics_gestures = "{}";        // JSON: action name -> clip file id
  std::optional<std::string> dynamics_error;
  std::optional<std::string> movements_file;  // idle background-movement clip
  // Idempotency-Key of the generate request: a retry with the same key gets this agent back.
  std::optional<std::string> idempotency_key;
  // The voice the agent speaks with, as JSON text: its one shape, parse and form are
  // agents/agent_voice.h. At creation only what was asked for ("{}": nothing); the generation
  // records what the built model speaks with.
  std::string voice = "{}";
  int64_t created_at = 0;  // Unix seconds
  int64_t updated_at = 0;
};

struct AgentPage {
  std::vector<AgentRecord> agents;  // newest first
  int64_t total = 0;
};

struct AgentProgress {
  std::string status;
  double progress = 0;
  std::string progress_msg;
  std::string current_step;
};

// The lease under which a job reports: writes are refused once it is lost.
struct JobLease {
  std::string job_id;
  std::string owner;
};

struct GenerationOutcome {
  std::string account_id;
  std::string code;
  JobLease lease;
  bool success = false;
  std::vector<FileRecord> files;  // artifacts to register (model, fetched inputs)
  std::optional<std::string> image_file, video_file, audio_file, model_file;
  std::optional<std::string> voice;  // success: the voice JSON of the built model (AgentRecord::voice)
  std::string error;                 // failure: the agent's error_message
  std::optional<LedgerOp> refund;    // failure: credits back
  std::string event;                 // "agent.ready" / "agent.failed"
  std::string event_data;            // JSON object for the webhook payload's data
};

struct DynamicsOutcome {
  std::string account_id;
  std::string code;
  JobLease lease;
  bool success = false;
  bool movements_only = false;    // a background-movement regeneration (PUT), not a generation
  std::vector<FileRecord> files;  // clips and the dynamics model
  std::string gestures_json;      // success: action name -> clip file id
  std::optional<std::string> dynamics_file;
  std::optional<std::string> movements_file;
  std::string error;
  std::optional<LedgerOp> refund;
  std::string event;  // "dynamics.ready" / "dynamics.failed" (empty: none)
  std::string event_data;
};

class AgentStore {
 public:
  virtual ~AgentStore() = default;

  // Creates the agent with its inline input files, charges `charge` and enqueues `job`, all or
  // nothing, and returns its code. When the account already has an agent created with the same
  // idempotency key, nothing is written and that agent's code is returned with replayed = true
  // (also when the code is the same custom code). kConflict when the account already has an agent
  // with this code (also by a concurrent create: never an internal error); another account's agent
  // with the same code is no conflict. kInsufficientFunds when the balance is short.
  struct Created {
    std::string code;
    bool replayed = false;
  };
  virtual Result<Created> create(const AgentRecord& agent, const std::vector<FileRecord>& files,
                                 const LedgerOp& charge, const NewJob& job) = 0;
  // kNotFound for a missing agent and for another account's (indistinguishable).
  virtual Result<AgentRecord> get(const std::string& account_id, const std::string& code) = 0;
  // Whether the account has an agent with this code (other accounts' agents do not count).
  virtual Result<bool> code_taken(const std::string& account_id, const std::string& code) = 0;
  virtual Result<AgentPage> list(const std::string& account_id, const std::optional<std::string>& status,
                                 int limit, int offset) = 0;
  virtual Status update_prompt(const std::string& account_id, const std::string& code,
                               const std::string& prompt) = 0;
  // Deletes the agent and its file records, cancels its jobs and queues a job deleting its blobs.
  // Paid jobs that have not started (queued, never claimed) are refunded in the same transaction;
  // started or finished work keeps its charge, and the ledger history stays.
  virtual Status remove(const std::string& account_id, const std::string& code) = 0;

  // Written by the running generation job; false when its lease is gone (cancelled, re-claimed).
  virtual Result<bool> set_progress(const std::string& account_id, const std::string& code,
                                    const JobLease& lease, const AgentProgress& p) = 0;
  // Records the outcome exactly once: false (and nothing written) when the lease is gone.
  virtual Result<bool> finish_generation(const GenerationOutcome& o) = 0;

  // Charges, marks dynamics generating and enqueues the job, all or nothing.
  virtual Status start_dynamics(const std::string& account_id, const std::string& code,
                                const LedgerOp& charge, const NewJob& job) = 0;
  virtual Result<bool> finish_dynamics(const DynamicsOutcome& o) = 0;
  // Stores the merged configuration and, when given, enqueues the movements job, replacing a
  // movements job of the agent that is still queued (at most one pending regeneration per agent).
  virtual Status update_dynamics_config(const std::string& account_id, const std::string& code,
                                        const std::string& config_json, const std::optional<NewJob>& job) = 0;
};

}  // namespace imago

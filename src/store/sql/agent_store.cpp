// Agents (the registry, generation outcomes, dynamics) on either backend. Creating, finishing and
// deleting an agent move credits, jobs, files and webhooks in the same transaction through the
// helpers of sql_stores.h.
#include <boost/json.hpp>

#include "billing/operations.h"
#include "store/sql/sql_stores.h"

namespace imago::sql {

namespace {

#define AGENT_COLUMNS                                                                                    \
  "code, account_id, name, status, progress, progress_msg, current_step, error_message, system_prompt, " \
  "model, aspect_ratio, video_aspect_ratio, duration, image_source, video_source, audio_source, "        \
  "image_file, video_file, audio_file, model_file, dynamics_config, dynamics_status, dynamics_file, "    \
  "dynamics_gestures, dynamics_error, movements_file, created_at, updated_at, voice"

AgentRecord read_agent(const Stmt& s) {
  AgentRecord a;
  a.code = s.col_text(0);
  a.account_id = s.col_text(1);
  a.name = s.col_text(2);
  a.status = s.col_text(3);
  a.progress = s.col_double(4);
  a.progress_msg = s.col_text(5);
  a.current_step = s.col_text(6);
  a.error_message = s.col_opt_text(7);
  a.system_prompt = s.col_text(8);
  a.model = s.col_text(9);
  a.aspect_ratio = s.col_text(10);
  a.video_aspect_ratio = s.col_text(11);
  a.duration = s.col_double(12);
  a.image_source = s.col_opt_text(13);
  a.video_source = s.col_opt_text(14);
  a.audio_source = s.col_opt_text(15);
  a.image_file = s.col_opt_text(16);
  a.video_file = s.col_opt_text(17);
  a.audio_file = s.col_opt_text(18);
  a.model_file = s.col_opt_text(19);
  a.dynamics_config = s.col_text(20);
  a.dynamics_status = s.col_opt_text(21);
  a.dynamics_file = s.col_opt_text(22);
  a.dynamics_gestures = s.col_text(23);
  a.dynamics_error = s.col_opt_text(24);
  a.movements_file = s.col_opt_text(25);
  a.created_at = s.col_int(26);
  a.updated_at = s.col_int(27);
  a.voice = s.col_text(28);
  return a;
}

Status not_found(const std::string& code) {
  return Status::NotFound("Agent not found for code: " + code);
}

std::optional<AgentRecord> load(Connection& c, const std::string& account_id, const std::string& code) {
  auto q = c.prepare("SELECT " AGENT_COLUMNS " FROM agents WHERE code = ? AND account_id = ?");
  q.bind(1, code).bind(2, account_id);
  if (!q.step()) return std::nullopt;
  return read_agent(q);
}

// The common head of recording a job's outcome, in the caller's transaction: the agent must still
// exist and the worker must still hold the job's lease (otherwise the outcome was recorded already,
// or the job was cancelled); then the files the job produced are registered. Returns the agent when
// the caller should go on.
std::optional<AgentRecord> begin_outcome(Connection& c, const std::string& account_id,
                                         const std::string& code, const JobLease& lease, bool success,
                                         const std::string& error, const std::vector<FileRecord>& files,
                                         int64_t now_us) {
  auto a = load(c, account_id, code);
  if (!a) return std::nullopt;
  if (!finish_job(c, lease.job_id, lease.owner, success ? "succeeded" : "failed",
                  success ? std::nullopt : std::optional<std::string>(error), now_us)) {
    return std::nullopt;
  }
  for (const auto& f : files) insert_file(c, f);
  return a;
}

// A failed outcome's refund (if the work was paid for), in the caller's transaction.
Status refund_failure(Connection& c, const std::optional<LedgerOp>& refund, int64_t now_s) {
  if (!refund) return Status::Ok();
  return apply_ledger_op(c, *refund, now_s).status();
}

void queue_blob_deletes(Connection& c, const std::string& account_id, const std::string& subject,
                        const std::vector<std::string>& keys, int64_t now_us) {
  if (keys.empty()) return;
  boost::json::array arr;
  for (const auto& k : keys) arr.emplace_back(k);
  NewJob job;
  job.kind = std::string(kJobBlobDelete);
  job.account_id = account_id;
  job.subject = "blobs:" + subject;
  job.payload = boost::json::serialize(boost::json::object{{"keys", arr}});
  job.max_attempts = 10;
  insert_job(c, job, now_us);
}

std::vector<std::string> gesture_file_ids(const std::string& gestures_json) {
  std::vector<std::string> out;
  boost::system::error_code ec;
  auto v = boost::json::parse(gestures_json, ec);
  if (ec || !v.is_object()) return out;
  for (const auto& kv : v.as_object()) {
    if (kv.value().is_string()) out.emplace_back(kv.value().as_string());
  }
  return out;
}

class SqlAgentStore final : public AgentStore {
 public:
  SqlAgentStore(Database& db, Clock& clock) : db_(db), clock_(clock) {}

  Result<Created> create(const AgentRecord& a, const std::vector<FileRecord>& files, const LedgerOp& charge,
                         const NewJob& job) override {
    int64_t now_us = clock_.now_us();
    int64_t now = now_us / 1000000;
    return db_.write([&](Connection& c) -> Result<Created> {
      // The agent row is claimed first with ON CONFLICT DO NOTHING: a concurrent create of the same
      // code or idempotency key waits on the unique index and then sees the winner's row, so the
      // outcome is a replay or kConflict (never a constraint error), on any backend.
      c.prepare(
           "INSERT INTO agents(code, account_id, name, status, progress, progress_msg, current_step, "
           "system_prompt,"
           " model, aspect_ratio, video_aspect_ratio, duration, image_source, video_source, audio_source,"
           " image_file, video_file, audio_file, dynamics_config, created_at, updated_at, idempotency_key, "
           "voice)"
           " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO "
           "NOTHING")
          .bind(1, a.code)
          .bind(2, a.account_id)
          .bind(3, a.name)
          .bind(4, a.status)
          .bind(5, a.progress)
          .bind(6, a.progress_msg)
          .bind(7, a.current_step)
          .bind(8, a.system_prompt)
          .bind(9, a.model)
          .bind(10, a.aspect_ratio)
          .bind(11, a.video_aspect_ratio)
          .bind(12, a.duration)
          .bind(13, a.image_source)
          .bind(14, a.video_source)
          .bind(15, a.audio_source)
          .bind(16, a.image_file)
          .bind(17, a.video_file)
          .bind(18, a.audio_file)
          .bind(19, a.dynamics_config)
          .bind(20, now)
          .bind(21, now)
          .bind(22, a.idempotency_key)
          .bind(23, a.voice)
          .run();
      if (c.changes() == 0) {
        if (a.idempotency_key) {
          auto q = c.prepare("SELECT code FROM agents WHERE account_id = ? AND idempotency_key = ?");
          q.bind(1, a.account_id).bind(2, *a.idempotency_key);
          if (q.step()) return Created{q.col_text(0), true};  // a retry: the first request's agent
        }
        return Status::Conflict("Agent id '" + a.code + "' is already taken");
      }
      auto charged = apply_ledger_op(c, charge, now);
      if (!charged.ok()) return charged.status();  // rolls the agent row back
      for (const auto& f : files) insert_file(c, f);
      insert_job(c, job, now_us);
      return Created{a.code, false};
    });
  }

  Result<AgentRecord> get(const std::string& account_id, const std::string& code) override {
    return db_.read([&](Connection& c) -> Result<AgentRecord> {
      auto a = load(c, account_id, code);
      if (!a) return not_found(code);
      return *a;
    });
  }

  Result<bool> code_taken(const std::string& account_id, const std::string& code) override {
    return db_.read([&](Connection& c) { return load(c, account_id, code).has_value(); });
  }

  Result<AgentPage> list(const std::string& account_id, const std::optional<std::string>& status, int limit,
                         int offset) override {
    return db_.read([&](Connection& c) {
      AgentPage page;
      if (status) {
        auto n = c.prepare("SELECT COUNT(*) FROM agents WHERE account_id = ? AND status = ?");
        n.bind(1, account_id).bind(2, *status);
        if (n.step()) page.total = n.col_int(0);
        auto q = c.prepare(IMAGO_SQL_INSERTION_ORDER("SELECT " AGENT_COLUMNS
                                                     " FROM agents WHERE account_id = ? AND status = ?"
                                                     " ORDER BY created_at DESC, ",
                                                     " DESC LIMIT ? OFFSET ?"));
        q.bind(1, account_id).bind(2, *status).bind(3, limit).bind(4, offset);
        while (q.step()) page.agents.push_back(read_agent(q));
      } else {
        auto n = c.prepare("SELECT COUNT(*) FROM agents WHERE account_id = ?");
        n.bind(1, account_id);
        if (n.step()) page.total = n.col_int(0);
        auto q = c.prepare(IMAGO_SQL_INSERTION_ORDER(
            "SELECT " AGENT_COLUMNS " FROM agents WHERE account_id = ? ORDER BY created_at DESC, ",
            " DESC LIMIT ? OFFSET ?"));
        q.bind(1, account_id).bind(2, limit).bind(3, offset);
        while (q.step()) page.agents.push_back(read_agent(q));
      }
      return page;
    });
  }

  Status update_prompt(const std::string& account_id, const std::string& code,
                       const std::string& prompt) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Status {
      c.prepare("UPDATE agents SET system_prompt = ?, updated_at = ? WHERE code = ? AND account_id = ?")
          .bind(1, prompt)
          .bind(2, now)
          .bind(3, code)
          .bind(4, account_id)
          .run();
      return c.changes() == 1 ? Status::Ok() : not_found(code);
    });
  }

  Status remove(const std::string& account_id, const std::string& code) override {
    int64_t now_us = clock_.now_us();
    return db_.write([&](Connection& c) -> Status {
      auto a = load(c, account_id, code);
      if (!a) return not_found(code);
      // Paid work that never started is refunded (docs/api/agents.md); started or finished work keeps
      // its charge. The charges are rebuilt from the jobs, so the refund keys match them.
      auto unstarted = c.prepare(IMAGO_SQL_FOR_UPDATE(
          "SELECT id, kind FROM jobs WHERE subject = ? AND account_id = ? AND state = 'queued' AND attempts "
          "= 0"
          " AND kind IN ('agent_generate', 'dynamics_generate')"));
      unstarted.bind(1, code).bind(2, account_id);
      std::vector<std::pair<LedgerOp, const char*>> charges;
      while (unstarted.step()) {
        const std::string job_id = unstarted.col_text(0);
        if (unstarted.col_text(1) == kJobAgentGenerate) {
          charges.emplace_back(billing::agent_generation_charge(account_id, job_id, code),
                               "agent deleted before its generation started");
        } else {
          charges.emplace_back(billing::dynamics_generation_charge(account_id, job_id, code),
                               "agent deleted before its dynamics generation started");
        }
      }
      for (const auto& [charge, why] : charges) {
        if (!load_ledger_entry(c, account_id, charge.operation_key)) continue;  // nothing was charged
        auto refunded = apply_ledger_op(c, billing::refund_of(charge, why), now_us / 1000000);
        if (!refunded.ok()) return refunded.status();
      }
      cancel_agent_jobs(c, account_id, code, now_us);
      auto keys = delete_agent_files(c, account_id, code);
      c.prepare("DELETE FROM agents WHERE code = ? AND account_id = ?")
          .bind(1, code)
          .bind(2, account_id)
          .run();
      queue_blob_deletes(c, account_id, code, keys, now_us);
      return Status::Ok();
    });
  }

  Result<bool> set_progress(const std::string& account_id, const std::string& code, const JobLease& lease,
                            const AgentProgress& p) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> bool {
      if (!job_lease_held(c, lease.job_id, lease.owner)) return false;
      c.prepare(
           "UPDATE agents SET status = ?, progress = ?, progress_msg = ?, current_step = ?, updated_at = ?"
           " WHERE code = ? AND account_id = ?")
          .bind(1, p.status)
          .bind(2, p.progress)
          .bind(3, p.progress_msg)
          .bind(4, p.current_step)
          .bind(5, now)
          .bind(6, code)
          .bind(7, account_id)
          .run();
      return c.changes() == 1;
    });
  }

  Result<bool> finish_generation(const GenerationOutcome& o) override {
    int64_t now_us = clock_.now_us();
    int64_t now = now_us / 1000000;
    return db_.write([&](Connection& c) -> Result<bool> {
      auto a = begin_outcome(c, o.account_id, o.code, o.lease, o.success, o.error, o.files, now_us);
      if (!a) return false;
      if (o.success) {
        c.prepare(
             "UPDATE agents SET status = 'ready', progress = 1.0, progress_msg = 'Agent is ready',"
             " current_step = 'done', error_message = NULL, model_file = ?,"
             " image_file = COALESCE(?, image_file), video_file = COALESCE(?, video_file),"
             " audio_file = COALESCE(?, audio_file), image_source = NULL, video_source = NULL,"
             " audio_source = NULL, voice = COALESCE(?, voice), updated_at = ? WHERE code = ? AND account_id "
             "= ?")
            .bind(1, o.model_file)
            .bind(2, o.image_file)
            .bind(3, o.video_file)
            .bind(4, o.audio_file)
            .bind(5, o.voice)
            .bind(6, now)
            .bind(7, o.code)
            .bind(8, o.account_id)
            .run();
      } else {
        c.prepare(
             "UPDATE agents SET status = 'failed', error_message = ?, progress_msg = ?,"
             " image_file = COALESCE(?, image_file), video_file = COALESCE(?, video_file),"
             " audio_file = COALESCE(?, audio_file), updated_at = ? WHERE code = ? AND account_id = ?")
            .bind(1, o.error)
            .bind(2, "Generation failed")
            .bind(3, o.image_file)
            .bind(4, o.video_file)
            .bind(5, o.audio_file)
            .bind(6, now)
            .bind(7, o.code)
            .bind(8, o.account_id)
            .run();
        if (Status st = refund_failure(c, o.refund, now); !st.ok()) return st;
      }
      if (!o.event.empty()) enqueue_webhook_event(c, a->account_id, o.event, o.event_data, now_us);
      return true;
    });
  }

  Status start_dynamics(const std::string& account_id, const std::string& code, const LedgerOp& charge,
                        const NewJob& job) override {
    int64_t now_us = clock_.now_us();
    int64_t now = now_us / 1000000;
    return db_.write([&](Connection& c) -> Status {
      auto a = load(c, account_id, code);
      if (!a) return not_found(code);
      auto charged = apply_ledger_op(c, charge, now);
      if (!charged.ok()) return charged.status();
      c.prepare(
           "UPDATE agents SET dynamics_status = 'generating', dynamics_error = NULL, updated_at = ? WHERE "
           "code = ? AND account_id = ?")
          .bind(1, now)
          .bind(2, code)
          .bind(3, account_id)
          .run();
      insert_job(c, job, now_us);
      return Status::Ok();
    });
  }

  Result<bool> finish_dynamics(const DynamicsOutcome& o) override {
    int64_t now_us = clock_.now_us();
    int64_t now = now_us / 1000000;
    return db_.write([&](Connection& c) -> Result<bool> {
      auto a = begin_outcome(c, o.account_id, o.code, o.lease, o.success, o.error, o.files, now_us);
      if (!a) return false;
      if (o.success) {
        // The previous results are replaced: their files go, their blobs are deleted later.
        std::vector<std::string> old;
        if (!o.gestures_json.empty()) {
          old = gesture_file_ids(a->dynamics_gestures);
          if (a->dynamics_file) old.push_back(*a->dynamics_file);
        }
        if (o.movements_file && a->movements_file) old.push_back(*a->movements_file);
        // A clip can be both the old idle gesture and still referenced by the new map.
        std::vector<std::string> keep = gesture_file_ids(o.gestures_json);
        if (o.movements_file) keep.push_back(*o.movements_file);
        std::erase_if(old, [&](const std::string& id) {
          return std::find(keep.begin(), keep.end(), id) != keep.end();
        });
        queue_blob_deletes(c, a->account_id, o.code, delete_files(c, old), now_us);
        if (!o.gestures_json.empty()) {
          c.prepare(
               "UPDATE agents SET dynamics_status = 'ready', dynamics_file = ?, dynamics_gestures = ?,"
               " dynamics_error = NULL, updated_at = ? WHERE code = ? AND account_id = ?")
              .bind(1, o.dynamics_file)
              .bind(2, o.gestures_json)
              .bind(3, now)
              .bind(4, o.code)
              .bind(5, o.account_id)
              .run();
        }
        if (o.movements_file) {
          c.prepare("UPDATE agents SET movements_file = ?, updated_at = ? WHERE code = ? AND account_id = ?")
              .bind(1, *o.movements_file)
              .bind(2, now)
              .bind(3, o.code)
              .bind(4, o.account_id)
              .run();
        }
      } else if (!o.movements_only) {
        c.prepare(
             "UPDATE agents SET dynamics_status = 'failed', dynamics_error = ?, updated_at = ? WHERE code = "
             "? AND account_id = ?")
            .bind(1, o.error)
            .bind(2, now)
            .bind(3, o.code)
            .bind(4, o.account_id)
            .run();
        if (Status st = refund_failure(c, o.refund, now); !st.ok()) return st;
      }
      if (!o.event.empty()) enqueue_webhook_event(c, a->account_id, o.event, o.event_data, now_us);
      return true;
    });
  }

  Status update_dynamics_config(const std::string& account_id, const std::string& code,
                                const std::string& config_json, const std::optional<NewJob>& job) override {
    int64_t now_us = clock_.now_us();
    return db_.write([&](Connection& c) -> Status {
      c.prepare("UPDATE agents SET dynamics_config = ?, updated_at = ? WHERE code = ? AND account_id = ?")
          .bind(1, config_json)
          .bind(2, now_us / 1000000)
          .bind(3, code)
          .bind(4, account_id)
          .run();
      if (c.changes() != 1) return not_found(code);
      if (job) {
        // At most one pending regeneration per agent: a newer configuration replaces a queued one
        // (a running one finishes; its result is replaced by this one's).
        c.prepare(
             "UPDATE jobs SET state = 'cancelled', updated_at = ?, finished_at = ?"
             " WHERE subject = ? AND account_id = ? AND kind = 'dynamics_movements' AND state = 'queued'")
            .bind(1, now_us)
            .bind(2, now_us)
            .bind(3, code)
            .bind(4, account_id)
            .run();
        insert_job(c, *job, now_us);
      }
      return Status::Ok();
    });
  }

 private:
  Database& db_;
  Clock& clock_;
};

}  // namespace

std::unique_ptr<AgentStore> make_agent_store(Database& db, Clock& clock) {
  return std::make_unique<SqlAgentStore>(db, clock);
}

}  // namespace imago::sql

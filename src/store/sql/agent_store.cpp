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
  s.read(a.code, a.account_id, a.name, a.status, a.progress, a.progress_msg, a.current_step, a.error_message,
         a.system_prompt, a.model, a.aspect_ratio, a.video_aspect_ratio, a.duration, a.image_source,
         a.video_source, a.audio_source, a.image_file, a.video_file, a.audio_file, a.model_file,
         a.dynamics_config, a.dynamics_status, a.dynamics_file, a.dynamics_gestures, a.dynamics_error,
         a.movements_file, a.created_at, a.updated_at, a.voice);
  return a;
}

Status not_found(const std::string& code) {
  return Status::NotFound("Agent not found for code: " + code);
}

std::optional<AgentRecord> load(Connection& c, const std::string& account_id, const std::string& code) {
  return c.first(read_agent, "SELECT " AGENT_COLUMNS " FROM agents WHERE code = ? AND account_id = ?", code,
                 account_id);
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

class SqlAgentStore final : public AgentStore, TableStore {
 public:
  using TableStore::TableStore;

  Result<Created> create(const AgentRecord& a, const std::vector<FileRecord>& files, const LedgerOp& charge,
                         const NewJob& job) override {
    int64_t now_us = clock_.now_us();
    int64_t now = now_us / 1000000;
    return db_.write([&](Connection& c) -> Result<Created> {
      // The agent row is claimed first with ON CONFLICT DO NOTHING: a concurrent create of the same
      // code or idempotency key waits on the unique index and then sees the winner's row, so the
      // outcome is a replay or kConflict (never a constraint error), on any backend.
      const int64_t added = c.run(
          "INSERT INTO agents(code, account_id, name, status, progress, progress_msg, current_step,"
          " system_prompt, model, aspect_ratio, video_aspect_ratio, duration, image_source, video_source,"
          " audio_source, image_file, video_file, audio_file, dynamics_config, created_at, updated_at,"
          " idempotency_key, voice)"
          " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
          " ON CONFLICT DO NOTHING",
          a.code, a.account_id, a.name, a.status, a.progress, a.progress_msg, a.current_step, a.system_prompt,
          a.model, a.aspect_ratio, a.video_aspect_ratio, a.duration, a.image_source, a.video_source,
          a.audio_source, a.image_file, a.video_file, a.audio_file, a.dynamics_config, now, now,
          a.idempotency_key, a.voice);
      if (added == 0) {
        if (a.idempotency_key) {
          if (auto first =
                  c.first(text_col, "SELECT code FROM agents WHERE account_id = ? AND idempotency_key = ?",
                          a.account_id, a.idempotency_key))
            return Created{*first, true};  // a retry: the first request's agent
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
    return db_.read([&](Connection& c) { return found(load(c, account_id, code), not_found(code)); });
  }

  Result<bool> code_taken(const std::string& account_id, const std::string& code) override {
    return db_.read([&](Connection& c) { return load(c, account_id, code).has_value(); });
  }

  Result<AgentPage> list(const std::string& account_id, const std::optional<std::string>& status, int limit,
                         int offset) override {
    return db_.read([&](Connection& c) {
      AgentPage page;
      if (status) {
        page.total =
            c.number("SELECT COUNT(*) FROM agents WHERE account_id = ? AND status = ?", account_id, *status);
        page.agents = c.all(read_agent,
                            IMAGO_SQL_INSERTION_ORDER("SELECT " AGENT_COLUMNS
                                                      " FROM agents WHERE account_id = ? AND status = ?"
                                                      " ORDER BY created_at DESC, ",
                                                      " DESC LIMIT ? OFFSET ?"),
                            account_id, *status, limit, offset);
      } else {
        page.total = c.number("SELECT COUNT(*) FROM agents WHERE account_id = ?", account_id);
        page.agents =
            c.all(read_agent,
                  IMAGO_SQL_INSERTION_ORDER("SELECT " AGENT_COLUMNS
                                            " FROM agents WHERE account_id = ? ORDER BY created_at DESC, ",
                                            " DESC LIMIT ? OFFSET ?"),
                  account_id, limit, offset);
      }
      return page;
    });
  }

  Status update_prompt(const std::string& account_id, const std::string& code,
                       const std::string& prompt) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> Status {
      return c.run("UPDATE agents SET system_prompt = ?, updated_at = ? WHERE code = ? AND account_id = ?",
                   prompt, now, code, account_id) == 1
                 ? Status::Ok()
                 : not_found(code);
    });
  }

  Status remove(const std::string& account_id, const std::string& code) override {
    int64_t now_us = clock_.now_us();
    return db_.write([&](Connection& c) -> Status {
      auto a = load(c, account_id, code);
      if (!a) return not_found(code);
      // Paid work that never started is refunded (docs/api/agents.md); started or finished work keeps
      // its charge. The charges are rebuilt from the jobs, so the refund keys match them.
      const auto charges = c.all(
          [&](const Stmt& q) -> std::pair<LedgerOp, const char*> {
            const std::string job_id = q.col_text(0);
            if (q.col_text(1) == kJobAgentGenerate) {
              return {billing::agent_generation_charge(account_id, job_id, code),
                      "agent deleted before its generation started"};
            }
            return {billing::dynamics_generation_charge(account_id, job_id, code),
                    "agent deleted before its dynamics generation started"};
          },
          IMAGO_SQL_FOR_UPDATE(
              "SELECT id, kind FROM jobs WHERE subject = ? AND account_id = ? AND state = 'queued'"
              " AND attempts = 0 AND kind IN ('agent_generate', 'dynamics_generate')"),
          code, account_id);
      for (const auto& [charge, why] : charges) {
        if (!load_ledger_entry(c, account_id, charge.operation_key)) continue;  // nothing was charged
        auto refunded = apply_ledger_op(c, billing::refund_of(charge, why), now_us / 1000000);
        if (!refunded.ok()) return refunded.status();
      }
      cancel_agent_jobs(c, account_id, code, now_us);
      auto keys = delete_agent_files(c, account_id, code);
      c.run("DELETE FROM agents WHERE code = ? AND account_id = ?", code, account_id);
      queue_blob_deletes(c, account_id, code, keys, now_us);
      return Status::Ok();
    });
  }

  Result<bool> set_progress(const std::string& account_id, const std::string& code, const JobLease& lease,
                            const AgentProgress& p) override {
    int64_t now = clock_.now_s();
    return db_.write([&](Connection& c) -> bool {
      if (!job_lease_held(c, lease.job_id, lease.owner)) return false;
      return c.run(
                 "UPDATE agents SET status = ?, progress = ?, progress_msg = ?, current_step = ?,"
                 " updated_at = ? WHERE code = ? AND account_id = ?",
                 p.status, p.progress, p.progress_msg, p.current_step, now, code, account_id) == 1;
    });
  }

  Result<bool> finish_generation(const GenerationOutcome& o) override {
    int64_t now_us = clock_.now_us();
    int64_t now = now_us / 1000000;
    return record_outcome(o, now_us, [&](Connection& c, const AgentRecord&) -> Status {
      if (o.success) {
        c.run(
            "UPDATE agents SET status = 'ready', progress = 1.0, progress_msg = 'Agent is ready',"
            " current_step = 'done', error_message = NULL, model_file = ?,"
            " image_file = COALESCE(?, image_file), video_file = COALESCE(?, video_file),"
            " audio_file = COALESCE(?, audio_file), image_source = NULL, video_source = NULL,"
            " audio_source = NULL, voice = COALESCE(?, voice), updated_at = ?"
            " WHERE code = ? AND account_id = ?",
            o.model_file, o.image_file, o.video_file, o.audio_file, o.voice, now, o.code, o.account_id);
        return Status::Ok();
      }
      c.run(
          "UPDATE agents SET status = 'failed', error_message = ?, progress_msg = ?,"
          " image_file = COALESCE(?, image_file), video_file = COALESCE(?, video_file),"
          " audio_file = COALESCE(?, audio_file), updated_at = ? WHERE code = ? AND account_id = ?",
          o.error, "Generation failed", o.image_file, o.video_file, o.audio_file, now, o.code, o.account_id);
      return refund_failure(c, o.refund, now);
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
      c.run(
          "UPDATE agents SET dynamics_status = 'generating', dynamics_error = NULL, updated_at = ?"
          " WHERE code = ? AND account_id = ?",
          now, code, account_id);
      insert_job(c, job, now_us);
      return Status::Ok();
    });
  }

  Result<bool> finish_dynamics(const DynamicsOutcome& o) override {
    int64_t now_us = clock_.now_us();
    int64_t now = now_us / 1000000;
    return record_outcome(o, now_us, [&](Connection& c, const AgentRecord& a) -> Status {
      if (o.success) {
        // The previous results are replaced: their files go, their blobs are deleted later.
        std::vector<std::string> old;
        if (!o.gestures_json.empty()) {
          old = gesture_file_ids(a.dynamics_gestures);
          if (a.dynamics_file) old.push_back(*a.dynamics_file);
        }
        if (o.movements_file && a.movements_file) old.push_back(*a.movements_file);
        // A clip can be both the old idle gesture and still referenced by the new map.
        std::vector<std::string> keep = gesture_file_ids(o.gestures_json);
        if (o.movements_file) keep.push_back(*o.movements_file);
        std::erase_if(old, [&](const std::string& id) {
          return std::find(keep.begin(), keep.end(), id) != keep.end();
        });
        queue_blob_deletes(c, a.account_id, o.code, delete_files(c, old), now_us);
        if (!o.gestures_json.empty()) {
          c.run(
              "UPDATE agents SET dynamics_status = 'ready', dynamics_file = ?, dynamics_gestures = ?,"
              " dynamics_error = NULL, updated_at = ? WHERE code = ? AND account_id = ?",
              o.dynamics_file, o.gestures_json, now, o.code, o.account_id);
        }
        if (o.movements_file) {
          c.run("UPDATE agents SET movements_file = ?, updated_at = ? WHERE code = ? AND account_id = ?",
                *o.movements_file, now, o.code, o.account_id);
        }
        return Status::Ok();
      }
      if (o.movements_only) return Status::Ok();
      c.run(
          "UPDATE agents SET dynamics_status = 'failed', dynamics_error = ?, updated_at = ?"
          " WHERE code = ? AND account_id = ?",
          o.error, now, o.code, o.account_id);
      return refund_failure(c, o.refund, now);
    });
  }

  Status update_dynamics_config(const std::string& account_id, const std::string& code,
                                const std::string& config_json, const std::optional<NewJob>& job) override {
    int64_t now_us = clock_.now_us();
    return db_.write([&](Connection& c) -> Status {
      if (c.run("UPDATE agents SET dynamics_config = ?, updated_at = ? WHERE code = ? AND account_id = ?",
                config_json, now_us / 1000000, code, account_id) != 1)
        return not_found(code);
      if (job) {
        // At most one pending regeneration per agent: a newer configuration replaces a queued one
        // (a running one finishes; its result is replaced by this one's).
        c.run(
            "UPDATE jobs SET state = 'cancelled', updated_at = ?, finished_at = ?"
            " WHERE subject = ? AND account_id = ? AND kind = 'dynamics_movements' AND state = 'queued'",
            now_us, now_us, code, account_id);
        insert_job(c, *job, now_us);
      }
      return Status::Ok();
    });
  }

 private:
  // Records a job's outcome once: the agent must still exist and the worker must still hold the
  // job's lease (otherwise the outcome was recorded already, or the job was cancelled). Then the
  // files the job produced are registered, `write(c, agent)` records the rest (a failure rolls it
  // all back), and the webhook event is queued. False when nothing was recorded.
  template <typename Outcome, typename F>
  Result<bool> record_outcome(const Outcome& o, int64_t now_us, F&& write) {
    return db_.write([&](Connection& c) -> Result<bool> {
      auto a = load(c, o.account_id, o.code);
      if (!a || !finish_job(c, o.lease.job_id, o.lease.owner, o.success ? "succeeded" : "failed",
                            o.success ? std::nullopt : std::optional<std::string>(o.error), now_us))
        return false;
      for (const auto& f : o.files) insert_file(c, f);
      if (Status st = write(c, *a); !st.ok()) return st;
      if (!o.event.empty()) enqueue_webhook_event(c, a->account_id, o.event, o.event_data, now_us);
      return true;
    });
  }
};

}  // namespace

std::unique_ptr<AgentStore> make_agent_store(Database& db, Clock& clock) {
  return std::make_unique<SqlAgentStore>(db, clock);
}

}  // namespace imago::sql

// Self-hosted session meters on either backend (SQLite and PostgreSQL migration 700).
#include "billing/operations.h"
#include "store/sql/sql_stores.h"

namespace imago::sql {

namespace {

#define METER_SELECT                                                            \
  "SELECT billing_type, started_us, last_seen_us, next_minute FROM live_meters" \
  " WHERE account_id = ? AND meter_id = ?"

billing::HeartbeatMeter read_meter(const Stmt& q) {
  return billing::HeartbeatMeter{q.col_text(0), q.col_int(1), q.col_int(2), q.col_int(3)};
}

// The meter's row; locked on PostgreSQL, since the transaction goes on to write it.
std::optional<billing::HeartbeatMeter> load_meter(Connection& c, const std::string& account_id,
                                                  const std::string& meter_id) {
  return c.first(read_meter, IMAGO_SQL_FOR_UPDATE(METER_SELECT), account_id, meter_id);
}

class SqlLiveMeterStore final : public LiveMeterStore, TableStore {
 public:
  using TableStore::TableStore;

  Result<billing::HeartbeatMeter> heartbeat(const std::string& account_id, const std::string& meter_id,
                                            const std::string& billing_type, int64_t now_us,
                                            int64_t period_us, int64_t grace_us) override {
    if (!billing::parse_minute_rate(billing_type)) {
      return Status::Invalid("'" + billing_type + "' has no per-minute rate");
    }
    if (period_us <= 0) return Status::Invalid("the billing period must be positive");
    // The heartbeat first, in its own transaction: it stays recorded even when a minute is refused
    // below (the session was seen; a refused minute is not a pause).
    auto seen = db_.write([&](Connection& c) -> Result<billing::HeartbeatMeter> {
      if (!c.exists("SELECT 1 FROM accounts WHERE id = ?", account_id))
        return Status::NotFound("Account not found: " + account_id);
      const billing::HeartbeatMeter fresh =
          billing::observe_heartbeat(std::nullopt, billing_type, now_us, grace_us);
      // A concurrent first heartbeat (another thread or node) waits on the primary key, then
      // finds the row below.
      if (c.run("INSERT INTO live_meters(account_id, meter_id, billing_type, started_us, last_seen_us,"
                " next_minute) VALUES(?,?,?,?,?,0) ON CONFLICT(account_id, meter_id) DO NOTHING",
                account_id, meter_id, fresh.billing_type, fresh.started_us, fresh.last_seen_us) == 1)
        return fresh;
      auto before = load_meter(c, account_id, meter_id);
      if (!before) return Status::Internal("live meter '" + meter_id + "' vanished");
      const billing::HeartbeatMeter after =
          billing::observe_heartbeat(*before, billing_type, now_us, grace_us);
      c.run("UPDATE live_meters SET started_us = ?, last_seen_us = ? WHERE account_id = ? AND meter_id = ?",
            after.started_us, after.last_seen_us, account_id, meter_id);
      return after;
    });
    if (!seen.ok()) return seen.status();

    // Then one transaction per due minute: the charge and the meter's step past it commit
    // together. The row lock (PostgreSQL) or the single writer (SQLite) makes a concurrent
    // heartbeat wait and then see the advanced meter, so it charges the next minute, not this one.
    billing::HeartbeatMeter meter = *seen;
    for (;;) {
      struct Step {
        billing::HeartbeatMeter meter;
        bool charged = false;
      };
      auto step = db_.write([&](Connection& c) -> Result<Step> {
        auto m = load_meter(c, account_id, meter_id);
        if (!m) return Status::Internal("live meter '" + meter_id + "' vanished");
        if (!billing::minute_due(*m, now_us, period_us)) return Step{*m, false};
        auto rate = billing::parse_minute_rate(m->billing_type);
        if (!rate) return Status::Internal("live meter '" + meter_id + "' has no rate");
        auto entry = apply_ledger_op(
            c, billing::live_session_minute(account_id, meter_id, m->next_minute, *rate), clock_.now_s());
        if (!entry.ok()) return entry.status();  // rolls back: the minute stays due
        c.run("UPDATE live_meters SET next_minute = ? WHERE account_id = ? AND meter_id = ?",
              m->next_minute + 1, account_id, meter_id);
        ++m->next_minute;
        return Step{*m, true};
      });
      if (!step.ok()) return step.status();
      meter = step->meter;
      if (!step->charged) return meter;
    }
  }

  Result<billing::HeartbeatMeter> get(const std::string& account_id, const std::string& meter_id) override {
    return db_.read_one(Status::NotFound("No live meter " + meter_id), read_meter, METER_SELECT, account_id,
                        meter_id);
  }
};

}  // namespace

std::unique_ptr<LiveMeterStore> make_live_meter_store(Database& db, Clock& clock) {
  return std::make_unique<SqlLiveMeterStore>(db, clock);
}

}  // namespace imago::sql

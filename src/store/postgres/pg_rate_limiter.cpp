#include "store/postgres/pg_rate_limiter.h"

#include <atomic>
#include <cmath>

#include "store/postgres/db.h"
#include "util/log.h"

namespace imago {

namespace {

// Every this many decisions a node deletes rows that have not been touched for long enough that
// they would be full (buckets) or cleared (windows) anyway.
constexpr uint64_t kSweepEvery = 4096;

void sweep(pg::Db& db) {
  (void)db.once([](sql::Connection& c) -> Status {
    c.run("DELETE FROM rate_buckets WHERE updated_at < EXTRACT(EPOCH FROM now())::float8 - 120");
    c.run("DELETE FROM rate_windows WHERE opened_at < EXTRACT(EPOCH FROM now())::float8 - 3600");
    return Status::Ok();
  });
}

// A bucket's tokens refilled up to now, at most capacity (?2), at ?3 per second.
#define REFILLED "LEAST(?2::float8, b.tokens + GREATEST(0, EXCLUDED.updated_at - b.updated_at) * ?3::float8)"

class PgRateLimiter final : public RateLimiter {
 public:
  explicit PgRateLimiter(pg::Db& db) : db_(db) {}

  RateDecision take(const std::string& key, int per_minute) override {
    return take_impl(key, per_minute, std::nullopt);
  }
  RateDecision take_if_unchanged(const std::string& key, int per_minute, uint64_t key_changes) override {
    return take_impl(key, per_minute, key_changes);
  }

 private:
  RateDecision take_impl(const std::string& key, int per_minute, std::optional<uint64_t> expected) {
    const double capacity = per_minute;
    const double rate = per_minute / 60.0;
    if (++ops_ % kSweepEvery == 0) sweep(db_);
    struct Row {
      double tokens = 0;
      bool allowed = true;
      double now = 0;
      uint64_t key_changes = 0;
      bool taken = true;
    };
    auto r = db_.once([&](sql::Connection& c) -> Row {
      // EXCLUDED.updated_at is the database's now(); the refill is capped at the (current) plan
      // capacity, so a plan change applies from the next request on. The key-change counter comes
      // back in the same round trip, read in this statement's snapshot (taken after the request
      // arrived): the authenticator confirms a remembered key lookup with it.
      // With `expected`, the row is written only while the counter still equals it (a remembered
      // key lookup's tag): when a key changed, the bucket is left alone, one row still comes back
      // with the counter, and the caller takes again at the plan it then reads.
      auto q = c.query(
          "WITH kc AS (SELECT value FROM key_changes WHERE id = 1),"
          " ins AS (INSERT INTO rate_buckets AS b (key, tokens, updated_at, allowed)"
          " SELECT ?1, ?2::float8 - 1, EXTRACT(EPOCH FROM now())::float8, ?2::float8 >= 1"
          " WHERE ?4::bigint < 0 OR (SELECT value FROM kc) = ?4::bigint"
          " ON CONFLICT (key) DO UPDATE SET"
          "  tokens = " REFILLED " - CASE WHEN " REFILLED
          " >= 1 - 1e-9 THEN 1 ELSE 0 END,"
          "  allowed = " REFILLED
          " >= 1 - 1e-9,"
          "  updated_at = GREATEST(b.updated_at, EXCLUDED.updated_at)"
          " RETURNING tokens, allowed::int AS allowed, updated_at)"
          " SELECT tokens, allowed, updated_at, (SELECT value FROM kc), 1 FROM ins"
          " UNION ALL SELECT 0::float8, 1, EXTRACT(EPOCH FROM now())::float8, (SELECT value FROM kc), 0"
          " WHERE NOT EXISTS (SELECT 1 FROM ins)",
          key, capacity, rate, expected ? static_cast<int64_t>(*expected) : int64_t{-1});
      q.step();
      return Row{q.col_double(0), q.col_int(1) != 0, q.col_double(2), static_cast<uint64_t>(q.col_int(3)),
                 q.col_int(4) != 0};
    });
    RateDecision out;
    out.limit = per_minute;
    if (!r.ok()) {
      log::warn("rate_limit_unavailable", {{"error", r.status().message()}});
      out.allowed = true;
      out.remaining = 0;
      return out;
    }
    const double tokens = std::max(0.0, r->tokens);
    out.allowed = r->allowed;
    out.key_changes = r->key_changes;
    out.taken = r->taken;
    out.remaining = static_cast<int>(std::floor(tokens + 1e-9));
    const double full_in = rate > 0 ? (capacity - tokens) / rate : 0;
    out.reset_unix_s = static_cast<int64_t>(std::ceil(r->now + std::max(0.0, full_in)));
    if (!out.allowed) {
      const double wait = rate > 0 ? (1.0 - tokens) / rate : 60;
      out.retry_after_s = std::max(1, static_cast<int>(std::ceil(wait)));
    }
    return out;
  }

 private:
  pg::Db& db_;
  std::atomic<uint64_t> ops_{0};
};

// A window's count and the seconds until it clears.
struct Window {
  int count = 0;
  double left = 0;
};

Window read_window(const sql::Stmt& q) {
  return Window{static_cast<int>(q.col_int(0)), q.col_double(1)};
}

// The decision on an open window (nullopt: none), blocked from `blocked_from` events on. When the
// database cannot be reached the event is let through (and logged).
WindowDecision decide(const Result<std::optional<Window>>& w, int blocked_from) {
  WindowDecision d;
  if (!w.ok()) {
    log::warn("rate_limit_unavailable", {{"error", w.status().message()}});
    return d;
  }
  if (!*w) return d;
  d.count = (*w)->count;
  d.blocked = d.count >= blocked_from;
  if (d.blocked) d.retry_after_s = std::max(1, static_cast<int>(std::ceil((*w)->left)));
  return d;
}

class PgWindowCounter final : public WindowCounter {
 public:
  explicit PgWindowCounter(pg::Db& db) : db_(db) {}

  WindowDecision peek(const std::string& key, int limit, int window_s) override {
    auto w = db_.once([&](sql::Connection& c) {
      auto open = c.first(read_window,
                          "SELECT count, opened_at + ?2::float8 - EXTRACT(EPOCH FROM now())::float8"
                          " FROM rate_windows WHERE key = ?1",
                          key, static_cast<double>(window_s));
      return open && open->left > 0 ? open : std::nullopt;  // a window past its end is cleared
    });
    return decide(w, limit);
  }

  WindowDecision hit(const std::string& key, int limit, int window_s) override {
    if (++ops_ % kSweepEvery == 0) sweep(db_);
    auto w = db_.once([&](sql::Connection& c) {
      // A window opens at the first event and clears window_s later; the next event after that
      // opens a new one.
      return c.first(
          read_window,
          "INSERT INTO rate_windows AS w (key, count, opened_at)"
          " VALUES (?1, 1, EXTRACT(EPOCH FROM now())::float8)"
          " ON CONFLICT (key) DO UPDATE SET"
          "  count = CASE WHEN EXCLUDED.opened_at - w.opened_at >= ?2::float8 THEN 1 ELSE w.count + 1 END,"
          "  opened_at = CASE WHEN EXCLUDED.opened_at - w.opened_at >= ?2::float8 THEN EXCLUDED.opened_at"
          "                   ELSE w.opened_at END"
          " RETURNING count, opened_at + ?2::float8 - EXTRACT(EPOCH FROM now())::float8",
          key, static_cast<double>(window_s));
    });
    return decide(w, limit + 1);  // this event is counted already
  }

  void release(const std::string& key, int window_s) override {
    auto r = db_.once([&](sql::Connection& c) -> Status {
      c.run(
          "UPDATE rate_windows SET count = count - 1 WHERE key = ?1 AND count > 0"
          " AND opened_at + ?2::float8 > EXTRACT(EPOCH FROM now())::float8",
          key, static_cast<double>(window_s));
      return Status::Ok();
    });
    if (!r.ok()) log::warn("rate_limit_unavailable", {{"error", r.message()}});
  }

 private:
  pg::Db& db_;
  std::atomic<uint64_t> ops_{0};
};

}  // namespace

std::unique_ptr<RateLimiter> make_pg_rate_limiter(pg::Db& db) {
  return std::make_unique<PgRateLimiter>(db);
}
std::unique_ptr<WindowCounter> make_pg_window_counter(pg::Db& db) {
  return std::make_unique<PgWindowCounter>(db);
}

}  // namespace imago

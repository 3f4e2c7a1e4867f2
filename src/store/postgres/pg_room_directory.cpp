// The cluster's room directory (store/room_directory.h) on PostgreSQL: leases in `room_leases`,
// commands in `room_commands` (migration 510), wake-ups on the `imago_rooms` channel.
#include <atomic>
#include <boost/json.hpp>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "store/postgres/pg_stores.h"
#include "util/log.h"
#include "util/random.h"

namespace imago::pg {

namespace {

#define NOW_US "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::bigint"

class PgRoomDirectory final : public RoomDirectory {
 public:
  PgRoomDirectory(Db& db, RoomDirectoryOptions o) : db_(db), o_(o), node_("node_" + random_base62(16)) {}
  ~PgRoomDirectory() override { stop(); }

  void start(RoomDirectoryHandlers h) override {
    std::lock_guard lock(mu_);
    if (thread_.joinable()) return;
    h_ = std::move(h);
    listener_ = std::make_unique<Listener>(db_.url(), std::vector<std::string>{kRoomsChannel},
                                           [this](const std::string&, const std::string&) { wake(); });
    thread_ = std::thread([this] { run(); });
  }

  void stop() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    listener_.reset();
    if (thread_.joinable()) thread_.join();
  }

  Result<bool> claim(const RoomLease& l, int max_account_rooms) override {
    bool over_limit = false;
    auto owned = db_.write([&](sql::Connection& c) -> Result<bool> {
      over_limit = false;  // the transaction may be retried
      if (max_account_rooms > 0) {
        // One claim of the account at a time, on every node: the count below and the insert are
        // then one step (READ COMMITTED alone would let two claims both see room for one more).
        c.run("SELECT pg_advisory_xact_lock(hashtextextended('room_leases:' || ?, 0))", l.account_id);
        if (c.number("SELECT count(*) FROM room_leases WHERE account_id = ? AND room_id <> ?"
                     " AND lease_until > " NOW_US,
                     l.account_id, l.room_id) >= max_account_rooms) {
          over_limit = true;
          return false;
        }
      }
      // A session of another node whose expired lease this claim replaces: the lease row will no
      // longer name it, so the sweep finds it here (RoomDirectory::lapsed). Copied whether or not
      // the claim below wins: either way the lease is not that session's any more.
      c.run(
          "INSERT INTO lapsed_leases(session_id, account_id, room_id, node_id, renewed_at)"
          " SELECT session_id, account_id, room_id, node_id, renewed_at FROM room_leases"
          " WHERE account_id = ?1 AND room_id = ?2 AND node_id <> ?3 AND session_id <> ?4"
          " AND lease_until < " NOW_US " ON CONFLICT (session_id) DO NOTHING",
          l.account_id, l.room_id, node_, l.session_id);
      // A free room, an expired lease, or a lease of this node (a room it ended and restarts).
      return c.exists(
          "INSERT INTO room_leases(account_id, room_id, agent_code, session_id, node_id, node_url, "
          "lease_until, details, details_at, renewed_at)"
          " VALUES(?1, ?2, ?3, ?4, ?5, ?7, " NOW_US " + ?6, ?8, " NOW_US ", " NOW_US
          ")"
          " ON CONFLICT (account_id, room_id) DO UPDATE SET agent_code = EXCLUDED.agent_code,"
          " session_id = EXCLUDED.session_id, node_id = EXCLUDED.node_id, node_url = EXCLUDED.node_url,"
          " lease_until = EXCLUDED.lease_until, details = EXCLUDED.details, details_at = EXCLUDED.details_at,"
          " renewed_at = EXCLUDED.renewed_at"
          " WHERE room_leases.lease_until < " NOW_US
          " OR room_leases.node_id = EXCLUDED.node_id"
          " RETURNING session_id",
          l.account_id, l.room_id, l.agent_code, l.session_id, node_, o_.lease_us, l.node_url,
          l.details.empty() ? std::string("{}") : l.details);
    });
    if (!owned.ok()) return owned.status();
    if (over_limit) return account_limit_status(max_account_rooms);
    if (*owned) {
      std::lock_guard lock(mu_);
      held_.insert(l.session_id);
    }
    return *owned;
  }

  void release(const RoomLease& l) override {
    {
      std::lock_guard lock(mu_);
      held_.erase(l.session_id);
    }
    auto st = db_.once([&](sql::Connection& c) -> Status {
      c.run("DELETE FROM room_leases WHERE account_id = ? AND room_id = ? AND session_id = ? AND node_id = ?",
            l.account_id, l.room_id, l.session_id, node_);
      return Status::Ok();
    });
    // Not fatal: the lease expires by itself.
    if (!st.ok())
      log::warn("room_lease_release_failed", {{"session", l.session_id}, {"error", st.message()}});
  }

  Result<std::vector<RemoteRoom>> remote_rooms(const std::string& account_id,
                                               const std::optional<std::string>& agent_code,
                                               const std::optional<std::string>& room_id) override {
    return db_.once([&](sql::Connection& c) {
      return c.all(
          [](const sql::Stmt& q) {
            RemoteRoom r;
            q.read(r.node_id, r.session_id, r.room_id, r.node_url, r.agent_code, r.details, r.details_at_ms);
            return r;
          },
          "SELECT node_id, session_id, room_id, node_url, agent_code, details, details_at / 1000"
          " FROM room_leases WHERE account_id = ?1"
          " AND (?2::text IS NULL OR agent_code = ?2)"
          " AND (?3::text IS NULL OR room_id = ?3) AND node_id <> ?4 AND lease_until > " NOW_US
          " ORDER BY room_id",
          account_id, agent_code, room_id, node_);
    });
  }

  Status send(const std::vector<RemoteRoom>& to, const std::string& kind, const std::string& text) override {
    if (to.empty()) return Status::Ok();
    return db_.write([&](sql::Connection& c) -> Status {
      for (const auto& r : to) {
        const int64_t id = c.number(
            "INSERT INTO room_commands(node_id, session_id, kind, text, created_at)"
            " VALUES(?, ?, ?, ?, " NOW_US ") RETURNING id",
            r.node_id, r.session_id, kind, text);
        // Only the id travels; delivered at COMMIT, dropped on rollback.
        c.run("SELECT pg_notify('imago_rooms', ?)", std::to_string(id));
      }
      return Status::Ok();
    });
  }

  Result<std::vector<LapsedLease>> lapsed(int64_t grace_us, int limit) override {
    return db_.once([&](sql::Connection& c) {
      // Both ages on the database's clock, as the leases were stamped: a node's skew does not
      // make a live lease look old.
      return c.all(
          [](const sql::Stmt& q) {
            LapsedLease l;
            q.read(l.account_id, l.room_id, l.session_id, l.node_id, l.renewed_us);
            return l;
          },
          "SELECT account_id, room_id, session_id, node_id, renewed_at FROM room_leases"
          " WHERE node_id <> ?1 AND lease_until < " NOW_US " AND renewed_at < " NOW_US
          " - ?2"
          " UNION ALL"
          " SELECT account_id, room_id, session_id, node_id, renewed_at FROM lapsed_leases"
          " WHERE node_id <> ?1 AND renewed_at < " NOW_US
          " - ?2"
          " ORDER BY renewed_at LIMIT ?3",
          node_, grace_us, limit);
    });
  }

  void forget(const LapsedLease& l) override {
    auto st = db_.write([&](sql::Connection& c) -> Status {
      // Only a lease still as the sweep saw it: one renewed since belongs to a node that lives.
      c.run(
          "DELETE FROM room_leases WHERE account_id = ? AND room_id = ? AND session_id = ?"
          " AND renewed_at <= ? AND lease_until < " NOW_US,
          l.account_id, l.room_id, l.session_id, l.renewed_us);
      c.run("DELETE FROM lapsed_leases WHERE session_id = ?", l.session_id);
      return Status::Ok();
    });
    // Not fatal: the next sweep finds the lease again and finds its session ended.
    if (!st.ok()) log::warn("room_lease_forget_failed", {{"session", l.session_id}, {"error", st.message()}});
  }

  std::string node_id() const override { return node_; }

 private:
  void wake() {
    {
      std::lock_guard lock(mu_);
      woken_ = true;
    }
    cv_.notify_all();
  }

  void run() {
    auto last_renew = std::chrono::steady_clock::now() - std::chrono::hours(1);
    auto last_prune = last_renew;
    std::unique_lock lock(mu_);
    while (!stopping_) {
      // A wake-up from NOTIFY, else a bounded poll: a notification lost in a reconnect only
      // delays a command by this much.
      cv_.wait_for(lock, std::chrono::microseconds(o_.poll_us), [&] { return stopping_ || woken_; });
      if (stopping_) break;
      woken_ = false;
      lock.unlock();
      deliver_pending();
      auto now = std::chrono::steady_clock::now();
      if (now - last_renew >= std::chrono::microseconds(o_.renew_us)) {
        renew();
        last_renew = now;
      }
      if (now - last_prune >= std::chrono::minutes(1)) {
        prune();
        last_prune = now;
      }
      lock.lock();
    }
  }

  // Every command addressed to this node past the cursor, in id order.
  void deliver_pending() {
    auto cmds = db_.once([&](sql::Connection& c) {
      return c.all(
          [](const sql::Stmt& q) {
            return RoomCommand{q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3)};
          },
          "SELECT id, session_id, kind, text FROM room_commands WHERE node_id = ? AND id > ? ORDER BY id"
          " LIMIT 1000",
          node_, cursor_);
    });
    if (!cmds.ok()) return;
    for (const auto& cmd : *cmds) {
      cursor_ = cmd.id;
      if (h_.command) h_.command(cmd);
    }
    if (cmds->size() == 1000) wake();  // more to read
  }

  // Renews every lease of this node in one statement; a held session that is not renewed has
  // lost its room (its lease expired and another node took it).
  void renew() {
    auto renewed = db_.once([&](sql::Connection& c) {
      const auto sessions = c.all(sql::text_col,
                                  "UPDATE room_leases SET lease_until = " NOW_US " + ?, renewed_at = " NOW_US
                                  " WHERE node_id = ? RETURNING session_id",
                                  o_.lease_us, node_);
      return std::set<std::string>(sessions.begin(), sessions.end());
    });
    if (!renewed.ok()) return;  // the database is away: try again next time
    publish_details(*renewed);
    std::vector<std::string> lost;
    {
      std::lock_guard lock(mu_);
      for (auto it = held_.begin(); it != held_.end();) {
        if (renewed->count(*it)) {
          ++it;
        } else {
          lost.push_back(*it);
          it = held_.erase(it);
        }
      }
    }
    for (const auto& s : lost) {
      log::warn("room_lease_lost", {{"session", s}, {"node", node_}});
      if (h_.lease_lost) h_.lease_lost(s);
    }
  }

  // The state of the renewed rooms, in one statement: a JSON object of session id -> details.
  void publish_details(const std::set<std::string>& renewed) {
    if (!h_.details || renewed.empty()) return;
    std::string all = "{";
    for (const auto& [session, details] : h_.details()) {
      if (!renewed.count(session)) continue;
      if (all.size() > 1) all += ',';
      all += boost::json::serialize(boost::json::value(session)) + ":" +
             boost::json::serialize(boost::json::value(details));
    }
    all += '}';
    if (all == "{}") return;
    (void)db_.once([&](sql::Connection& c) -> Status {
      c.run("UPDATE room_leases l SET details = d.value, details_at = " NOW_US
            " FROM jsonb_each_text(?::jsonb) d WHERE l.node_id = ? AND l.session_id = d.key",
            all, node_);
      return Status::Ok();
    });
  }

  // Commands are delivered within seconds; old rows are history nobody reads.
  void prune() {
    (void)db_.once([&](sql::Connection& c) -> Status {
      c.run("DELETE FROM room_commands WHERE created_at < " NOW_US " - 600000000");
      return Status::Ok();
    });
  }

  Db& db_;
  RoomDirectoryOptions o_;
  const std::string node_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool woken_ = false;
  RoomDirectoryHandlers h_;
  std::set<std::string> held_;  // sessions this node claimed and has not released
  int64_t cursor_ = 0;          // the last command id delivered (this node's rows only)
  std::unique_ptr<Listener> listener_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<RoomDirectory> make_room_directory(Db& db, RoomDirectoryOptions options) {
  return std::make_unique<PgRoomDirectory>(db, options);
}

}  // namespace imago::pg

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
        c.prepare("SELECT pg_advisory_xact_lock(hashtextextended('room_leases:' || ?, 0))")
            .bind(1, l.account_id)
            .run();
        auto n = c.prepare(
            "SELECT count(*) FROM room_leases WHERE account_id = ? AND room_id <> ?"
            " AND lease_until > " NOW_US);
        n.bind(1, l.account_id).bind(2, l.room_id);
        n.step();
        if (n.col_int(0) >= max_account_rooms) {
          over_limit = true;
          return false;
        }
      }
      // A session of another node whose expired lease this claim replaces: the lease row will no
      // longer name it, so the sweep finds it here (RoomDirectory::lapsed). Copied whether or not
      // the claim below wins: either way the lease is not that session's any more.
      c.prepare(
           "INSERT INTO lapsed_leases(session_id, account_id, room_id, node_id, renewed_at)"
           " SELECT session_id, account_id, room_id, node_id, renewed_at FROM room_leases"
           " WHERE account_id = ?1 AND room_id = ?2 AND node_id <> ?3 AND session_id <> ?4"
           " AND lease_until < " NOW_US " ON CONFLICT (session_id) DO NOTHING")
          .bind(1, l.account_id)
          .bind(2, l.room_id)
          .bind(3, node_)
          .bind(4, l.session_id)
          .run();
      // A free room, an expired lease, or a lease of this node (a room it ended and restarts).
      auto q = c.prepare(
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
          " RETURNING session_id");
      q.bind(1, l.account_id).bind(2, l.room_id).bind(3, l.agent_code).bind(4, l.session_id).bind(5, node_);
      q.bind(6, o_.lease_us).bind(7, l.node_url).bind(8, l.details.empty() ? std::string("{}") : l.details);
      return q.step();
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
      c.prepare(
           "DELETE FROM room_leases WHERE account_id = ? AND room_id = ? AND session_id = ? AND node_id = ?")
          .bind(1, l.account_id)
          .bind(2, l.room_id)
          .bind(3, l.session_id)
          .bind(4, node_)
          .run();
      return Status::Ok();
    });
    // Not fatal: the lease expires by itself.
    if (!st.ok())
      log::warn("room_lease_release_failed", {{"session", l.session_id}, {"error", st.message()}});
  }

  Result<std::vector<RemoteRoom>> remote_rooms(const std::string& account_id,
                                               const std::optional<std::string>& agent_code,
                                               const std::optional<std::string>& room_id) override {
    return db_.once([&](sql::Connection& c) -> std::vector<RemoteRoom> {
      auto q = c.prepare(
          "SELECT node_id, session_id, room_id, node_url, agent_code, details, details_at / 1000"
          " FROM room_leases WHERE account_id = ?1"
          " AND (?2::text IS NULL OR agent_code = ?2)"
          " AND (?3::text IS NULL OR room_id = ?3) AND node_id <> ?4 AND lease_until > " NOW_US
          " ORDER BY room_id");
      q.bind(1, account_id).bind(2, agent_code).bind(3, room_id).bind(4, node_);
      std::vector<RemoteRoom> out;
      while (q.step())
        out.push_back({q.col_text(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4),
                       q.col_text(5), q.col_int(6)});
      return out;
    });
  }

  Status send(const std::vector<RemoteRoom>& to, const std::string& kind, const std::string& text) override {
    if (to.empty()) return Status::Ok();
    return db_.write([&](sql::Connection& c) -> Status {
      for (const auto& r : to) {
        auto q = c.prepare(
            "INSERT INTO room_commands(node_id, session_id, kind, text, created_at)"
            " VALUES(?, ?, ?, ?, " NOW_US ") RETURNING id");
        q.bind(1, r.node_id).bind(2, r.session_id).bind(3, kind).bind(4, text);
        q.step();
        // Only the id travels; delivered at COMMIT, dropped on rollback.
        c.prepare("SELECT pg_notify('imago_rooms', ?)").bind(1, std::to_string(q.col_int(0))).run();
      }
      return Status::Ok();
    });
  }

  Result<std::vector<LapsedLease>> lapsed(int64_t grace_us, int limit) override {
    return db_.once([&](sql::Connection& c) -> std::vector<LapsedLease> {
      // Both ages on the database's clock, as the leases were stamped: a node's skew does not
      // make a live lease look old.
      auto q = c.prepare(
          "SELECT account_id, room_id, session_id, node_id, renewed_at FROM room_leases"
          " WHERE node_id <> ?1 AND lease_until < " NOW_US " AND renewed_at < " NOW_US
          " - ?2"
          " UNION ALL"
          " SELECT account_id, room_id, session_id, node_id, renewed_at FROM lapsed_leases"
          " WHERE node_id <> ?1 AND renewed_at < " NOW_US
          " - ?2"
          " ORDER BY renewed_at LIMIT ?3");
      q.bind(1, node_).bind(2, grace_us).bind(3, limit);
      std::vector<LapsedLease> out;
      while (q.step())
        out.push_back({q.col_text(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_int(4)});
      return out;
    });
  }

  void forget(const LapsedLease& l) override {
    auto st = db_.write([&](sql::Connection& c) -> Status {
      // Only a lease still as the sweep saw it: one renewed since belongs to a node that lives.
      c.prepare(
           "DELETE FROM room_leases WHERE account_id = ? AND room_id = ? AND session_id = ?"
           " AND renewed_at <= ? AND lease_until < " NOW_US)
          .bind(1, l.account_id)
          .bind(2, l.room_id)
          .bind(3, l.session_id)
          .bind(4, l.renewed_us)
          .run();
      c.prepare("DELETE FROM lapsed_leases WHERE session_id = ?").bind(1, l.session_id).run();
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
    auto cmds = db_.once([&](sql::Connection& c) -> std::vector<RoomCommand> {
      auto q = c.prepare(
          "SELECT id, session_id, kind, text FROM room_commands WHERE node_id = ? AND id > ? ORDER BY id"
          " LIMIT 1000");
      q.bind(1, node_).bind(2, cursor_);
      std::vector<RoomCommand> out;
      while (q.step()) out.push_back({q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3)});
      return out;
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
    auto renewed = db_.once([&](sql::Connection& c) -> std::set<std::string> {
      auto q = c.prepare("UPDATE room_leases SET lease_until = " NOW_US " + ?, renewed_at = " NOW_US
                         " WHERE node_id = ? RETURNING session_id");
      q.bind(1, o_.lease_us).bind(2, node_);
      std::set<std::string> out;
      while (q.step()) out.insert(q.col_text(0));
      return out;
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
      c.prepare("UPDATE room_leases l SET details = d.value, details_at = " NOW_US
                " FROM jsonb_each_text(?::jsonb) d WHERE l.node_id = ? AND l.session_id = d.key")
          .bind(1, all)
          .bind(2, node_)
          .run();
      return Status::Ok();
    });
  }

  // Commands are delivered within seconds; old rows are history nobody reads.
  void prune() {
    (void)db_.once([&](sql::Connection& c) -> Status {
      c.prepare("DELETE FROM room_commands WHERE created_at < " NOW_US " - 600000000").run();
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

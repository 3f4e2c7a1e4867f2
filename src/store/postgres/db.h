// A thin, safe layer over libpq with the same shape as the SQLite one (store/sqlite/db.h), so a
// PostgreSQL store reads like its SQLite sibling: a pool of connections, statements prepared once
// per connection (by the address of their SQL literal), and transactions that roll back on a
// failed Status. SQL is written with `?` or `?N` placeholders and rewritten to `$N` once.
//
// Isolation: writes run at READ COMMITTED (the default); stores lock the rows they read-modify-write
// (SELECT ... FOR UPDATE) or write conditionally (UPDATE ... WHERE ... RETURNING). Reads run in a
// READ ONLY REPEATABLE READ transaction so that a count and its page come from one snapshot.
//
// Retries, only where safe: a transaction is run again when PostgreSQL reports a serialization
// failure or deadlock (it was rolled back), or when the connection broke before COMMIT was sent
// (the server rolls back an unfinished transaction). A connection lost during COMMIT leaves the
// outcome unknown: that is reported as an error, never retried.
#pragma once
#include <libpq-fe.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/status.h"

namespace imago::pg {

class Error : public std::runtime_error {
 public:
  Error(std::string sqlstate, const std::string& what, bool connection_lost)
      : std::runtime_error(what), sqlstate_(std::move(sqlstate)), connection_lost_(connection_lost) {}
  const std::string& sqlstate() const { return sqlstate_; }
  bool connection_lost() const { return connection_lost_; }
  bool unique_violation() const { return sqlstate_ == "23505"; }
  // Serialization failure or deadlock: PostgreSQL rolled the transaction back; running it again is safe.
  bool retryable() const { return sqlstate_ == "40001" || sqlstate_ == "40P01"; }

 private:
  std::string sqlstate_;
  bool connection_lost_;
};

class Conn;

// One execution of a prepared statement. Parameters are 1-based, sent as text (bytea as binary);
// results come back as text. The statement runs at the first step() or run().
class Stmt {
 public:
  Stmt(Conn& c, const std::string* name, int nparams);
  Stmt(Stmt&&) noexcept = default;

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::optional<std::string>& v);
  Stmt& bind(int i, bool v) = delete;           // say what you mean: an int or a string
  Stmt& bind_bytes(int i, std::string_view v);  // bytea, sent in binary
  Stmt& bind_null(int i);

  // True when a(nother) row is available. Throws Error on failure.
  bool step();
  // Runs it (INSERT/UPDATE/DELETE); returns the number of rows affected.
  int64_t run();

  int64_t col_int(int i) const;
  double col_double(int i) const;
  bool col_bool(int i) const;  // a boolean column ('t'/'f')
  std::string col_text(int i) const;
  std::string col_bytes(int i) const;  // a bytea column, decoded
  std::optional<std::string> col_opt_text(int i) const;
  std::optional<int64_t> col_opt_int(int i) const;
  bool col_null(int i) const;
  int rows() const;

 private:
  void execute();
  const char* cell(int i) const;

  Conn* c_;
  const std::string* name_;
  std::vector<std::optional<std::string>> params_;
  std::vector<int> formats_;
  std::shared_ptr<PGresult> res_;
  int row_ = -1;
  bool executed_ = false;
};

class Conn {
 public:
  explicit Conn(PGconn* c) : c_(c) {}
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Runs one or more statements without parameters (simple query protocol).
  void exec(const char* sql);
  // Prepared once per connection (keyed by the literal's address) and reused.
  Stmt prepare(const char* sql);
  // Rows affected by the last run().
  int64_t changes() const { return changes_; }
  PGconn* raw() const { return c_; }
  bool broken() const { return PQstatus(c_) != CONNECTION_OK; }
  // Reconnects a broken connection; prepared statements are per session, so they are forgotten.
  bool reset();

  [[noreturn]] void fail(PGresult* r, const char* what);

 private:
  friend class Stmt;
  PGconn* c_;
  struct Prepared {
    std::string name;
    int nparams = 0;
  };
  std::unordered_map<const char*, Prepared> cache_;
  int64_t changes_ = 0;
  int next_id_ = 0;
};

// Rewrites `?` and `?N` placeholders (outside quotes) to `$N`; returns the parameter count.
std::string rewrite_placeholders(std::string_view sql, int* nparams);

namespace detail {
template <typename T>
struct TxResultOf {
  using type = Result<T>;
};
template <>
struct TxResultOf<Status> {
  using type = Status;
};
template <typename T>
struct TxResultOf<Result<T>> {
  using type = Result<T>;
};
template <typename T>
using TxResult = typename TxResultOf<T>::type;

template <typename T>
bool failed(const T&) {
  return false;
}
inline bool failed(const Status& s) {
  return !s.ok();
}
template <typename T>
bool failed(const Result<T>& r) {
  return !r.ok();
}
}  // namespace detail

class Db {
 public:
  // Connects (libpq URL or key=value string) and checks the server answers.
  static Result<std::unique_ptr<Db>> open(const std::string& url, int pool_size = 8);
  ~Db();

  template <typename F>
  auto read(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))>;
  template <typename F>
  auto write(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))>;
  // A single statement outside an explicit transaction (autocommit): one round trip.
  template <typename F>
  auto once(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))>;

  const std::string& url() const { return url_; }

 private:
  Db(std::string url) : url_(std::move(url)) {}
  Result<Conn*> open_conn();
  Conn* acquire();
  void release(Conn* c);

  template <typename F>
  auto run_tx(F&& fn, const char* begin) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))>;

  std::string url_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Conn>> all_;
  std::vector<Conn*> idle_;
  size_t max_ = 8;
};

// A dedicated connection that LISTENs on channels and calls `on_notify(channel, payload)` from its
// own thread. Once LISTEN is in effect (at start and after every reconnect) it calls
// on_notify(channel, "") once per channel, because notifications sent before that are lost (they
// are wake-ups, never the data itself).
class Listener {
 public:
  using Callback = std::function<void(const std::string& channel, const std::string& payload)>;
  Listener(std::string url, std::vector<std::string> channels, Callback on_notify);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

 private:
  void run();
  struct State;
  std::unique_ptr<State> st_;
};

// --- templates ---

template <typename F>
auto Db::run_tx(F&& fn, const char* begin) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))> {
  using R = decltype(fn(std::declval<Conn&>()));
  Conn* c = nullptr;
  try {
    c = acquire();
  } catch (const Error& e) {
    return Status::Unavailable(std::string("database unavailable: ") + e.what());
  }
  struct Releaser {
    Db* db;
    Conn* c;
    ~Releaser() { db->release(c); }
  } releaser{this, c};
  for (int attempt = 0;; ++attempt) {
    bool committing = false;
    try {
      if (c->broken() && !c->reset()) throw Error("08006", "connection lost", true);
      if (begin) c->prepare(begin).run();
      // Without BEGIN each statement commits by itself: once it is sent, its outcome is unknown
      // if the connection breaks.
      if (!begin) committing = true;
      try {
        R r = fn(*c);
        if (begin) {
          const bool fail = detail::failed(r);
          committing = !fail;
          c->prepare(fail ? "ROLLBACK" : "COMMIT").run();
        }
        return r;
      } catch (...) {
        if (begin && !committing && !c->broken()) {
          try {
            c->exec("ROLLBACK");
          } catch (...) {
          }
        }
        throw;
      }
    } catch (const Error& e) {
      // Safe to run again: PostgreSQL rolled it back (40001/40P01), or the connection died before
      // COMMIT was sent. Not when COMMIT itself was lost: it may have committed.
      const bool safe = e.retryable() || (e.connection_lost() && !committing);
      if (safe && attempt < 3) continue;
      // A unique or check constraint refused the write (a duplicate create that raced past its
      // check): the caller's conflict, never an internal error (as on SQLite).
      if (e.sqlstate().rfind("23", 0) == 0)
        return Status::Conflict("The record already exists or conflicts with another");
      if (e.connection_lost()) {
        return Status::Unavailable(
            std::string(committing ? "database connection lost during commit (outcome unknown): "
                                   : "database unavailable: ") +
            e.what());
      }
      return Status::Internal(std::string("database error: ") + e.what());
    }
  }
}

template <typename F>
auto Db::read(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))> {
  return run_tx(std::forward<F>(fn), "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
}

template <typename F>
auto Db::write(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))> {
  return run_tx(std::forward<F>(fn), "BEGIN");
}

template <typename F>
auto Db::once(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))> {
  return run_tx(std::forward<F>(fn), nullptr);
}

}  // namespace imago::pg

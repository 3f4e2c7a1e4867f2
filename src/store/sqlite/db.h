// A thin, safe layer over the SQLite C API: a pool of connections (WAL mode lets readers run beside
// the single writer), per-connection prepared-statement cache, and write transactions that begin
// IMMEDIATE so two writers never deadlock upgrading a read lock.
#pragma once
#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/status.h"

namespace imago::sqlite {

// A prepared statement bound for one execution. Indices are 1-based, as in SQLite.
class Stmt {
 public:
  explicit Stmt(sqlite3_stmt* s) : s_(s) {}
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::optional<std::string>& v);
  Stmt& bind_blob(int i, std::string_view v);
  Stmt& bind_null(int i);

  // Steps once: true when a row is available, false when done. Throws on error, which the
  // transaction helpers turn into a Status.
  bool step();
  // Runs to completion (for INSERT/UPDATE/DELETE).
  void run();

  int64_t col_int(int i) const { return sqlite3_column_int64(s_, i); }
  double col_double(int i) const { return sqlite3_column_double(s_, i); }
  std::string col_text(int i) const;
  std::optional<std::string> col_opt_text(int i) const;
  std::optional<int64_t> col_opt_int(int i) const;
  bool col_null(int i) const { return sqlite3_column_type(s_, i) == SQLITE_NULL; }

 private:
  sqlite3_stmt* s_;
};

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

class Conn {
 public:
  explicit Conn(sqlite3* db) : db_(db) {}
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void exec(const char* sql);
  // Prepared once per connection and reused; reset and cleared on each call.
  Stmt prepare(const char* sql);
  // Resets every cached statement. A SELECT left mid-result keeps its read snapshot open past
  // COMMIT; the next BEGIN IMMEDIATE on this connection would then fail with SQLITE_BUSY_SNAPSHOT
  // for good. Transactions call this before they end, so callers may stop stepping at any row.
  void reset_all();
  int changes() const { return sqlite3_changes(db_); }
  int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
  sqlite3* raw() const { return db_; }

 private:
  sqlite3* db_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
};

namespace detail {
// What a transaction returns: a Status stays a Status, a Result<T> stays a Result<T>, and a plain
// T becomes Result<T> (so database errors always have somewhere to go).
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
  // Opens (creating if needed) the database file, sets WAL, foreign keys and a busy timeout.
  static Result<std::unique_ptr<Db>> open(const std::string& path, int pool_size = 8);
  ~Db();

  // Runs `fn(Conn&)` in a read transaction (snapshot). Exceptions from SQLite become Status.
  template <typename F>
  auto read(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))>;
  // Runs `fn(Conn&)` in BEGIN IMMEDIATE ... COMMIT; rolls back if fn throws or returns a failed
  // Status/Result. Retries the whole transaction when the database is busy.
  template <typename F>
  auto write(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))>;

  const std::string& path() const { return path_; }

 private:
  class Lease;
  Db(std::string path) : path_(std::move(path)) {}
  Result<Conn*> open_conn();
  Conn* acquire();
  void release(Conn* c);

  std::string path_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Conn>> all_;
  std::vector<Conn*> idle_;
  size_t max_ = 8;

  template <typename F>
  auto run_tx(F&& fn, const char* begin) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))>;
};

// --- implementation of the templates ---

template <typename F>
auto Db::run_tx(F&& fn, const char* begin) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))> {
  using R = decltype(fn(std::declval<Conn&>()));
  Conn* c = acquire();
  struct Releaser {
    Db* db;
    Conn* c;
    ~Releaser() { db->release(c); }
  } releaser{this, c};
  for (int attempt = 0;; ++attempt) {
    try {
      // Transaction control goes through the statement cache: sqlite3_exec would parse it again on
      // every request.
      c->prepare(begin).run();
      try {
        R r = fn(*c);
        c->reset_all();
        c->prepare(detail::failed(r) ? "ROLLBACK" : "COMMIT").run();
        return r;
      } catch (...) {
        try {
          c->reset_all();
          c->prepare("ROLLBACK").run();
        } catch (...) {
        }
        throw;
      }
    } catch (const Error& e) {
      bool busy = e.code() == SQLITE_BUSY || e.code() == SQLITE_LOCKED;
      if (busy && attempt < 50) continue;
      // A unique or check constraint refused the write (a duplicate create that raced past its
      // check): the caller's conflict, never an internal error.
      if ((e.code() & 0xff) == SQLITE_CONSTRAINT)
        return Status::Conflict("The record already exists or conflicts with another");
      return Status::Internal(std::string("database error: ") + e.what());
    }
  }
}

template <typename F>
auto Db::read(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))> {
  return run_tx(std::forward<F>(fn), "BEGIN");
}

template <typename F>
auto Db::write(F&& fn) -> detail::TxResult<decltype(fn(std::declval<Conn&>()))> {
  return run_tx(std::forward<F>(fn), "BEGIN IMMEDIATE");
}

}  // namespace imago::sqlite

// One SQL store implementation over both engines (docs/architecture.md, "One store, two
// databases"): the table stores in this folder are written once against these interfaces, which
// each engine implements (store/sqlite/db.h, store/postgres/db.h) on the one transaction loop of
// pool.h. Statements use `?` / `?N` placeholders (PostgreSQL's engine rewrites them to `$N`);
// where the dialects really differ a statement names both texts (Dialects, IMAGO_SQL_FOR_UPDATE,
// IMAGO_SQL_INSERTION_ORDER, IMAGO_SQL_GREATEST) or the store asks dialect() and takes its own path.
//
// Database errors are exceptions inside a transaction and become a Status when it ends: a unique
// or check violation is kConflict, a busy or lost database is retried where that is safe, the
// rest is kInternal/kUnavailable (pool.h says which).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/status.h"

namespace imago::sql {

enum class Dialect { kSqlite, kPostgres };

// The same statement in each dialect, for the few that differ. Literals only: both backends
// prepare a statement once per connection, keyed by the literal's address.
struct Dialects {
  const char* sqlite;
  const char* postgres;
};

// A read that the transaction goes on to write from: PostgreSQL at READ COMMITTED locks the row
// (FOR UPDATE); SQLite needs no lock, its write transaction already holds the database's.
#define IMAGO_SQL_FOR_UPDATE(text) (::imago::sql::Dialects{text, text " FOR UPDATE"})
// Insertion order (a tie-break after created_at) in `before ROW after`: SQLite's rowid, the `seq`
// column PostgreSQL's tables carry for it.
#define IMAGO_SQL_INSERTION_ORDER(before, after) \
  (::imago::sql::Dialects{before "rowid" after, before "seq" after})

// A statement that uses the larger-of function: `text(fn)` is a macro that writes it with the
// function named `fn` (SQLite's scalar MAX, PostgreSQL's GREATEST).
#define IMAGO_SQL_GREATEST(text) (::imago::sql::Dialects{text("MAX"), text("GREATEST")})

// One execution of a prepared statement, as each engine runs it. Parameters and columns are
// counted as in SQL: parameters from 1, result columns from 0.
class Statement {
 public:
  virtual ~Statement() = default;
  virtual void bind_int(int i, int64_t v) = 0;
  virtual void bind_double(int i, double v) = 0;
  virtual void bind_text(int i, std::string_view v) = 0;
  // Bytes for a blob column (SQLite BLOB, PostgreSQL bytea).
  virtual void bind_blob(int i, std::string_view v) = 0;
  virtual void bind_null(int i) = 0;
  // True when a(nother) row is available; the first call runs the statement.
  virtual bool step() = 0;
  // Rows changed by the statement, once it has run (INSERT/UPDATE/DELETE).
  virtual int64_t changes() const = 0;
  virtual int64_t col_int(int i) const = 0;
  virtual double col_double(int i) const = 0;
  virtual std::string col_text(int i) const = 0;
  virtual std::string col_blob(int i) const = 0;
  virtual bool col_null(int i) const = 0;
};

// What store code holds: a Statement with typed, chainable binds, read like the backends' own.
class Stmt {
 public:
  explicit Stmt(std::unique_ptr<Statement> s) : s_(std::move(s)) {}

  Stmt& bind(int i, int64_t v) { return s_->bind_int(i, v), *this; }
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, double v) { return s_->bind_double(i, v), *this; }
  Stmt& bind(int i, std::string_view v) { return s_->bind_text(i, v), *this; }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  template <typename T>
  Stmt& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }
  Stmt& bind(int i, std::nullopt_t) { return bind_null(i); }
  Stmt& bind(int i, bool v) = delete;  // say what you mean: an int or a string
  Stmt& bind_blob(int i, std::string_view v) { return s_->bind_blob(i, v), *this; }
  Stmt& bind_null(int i) { return s_->bind_null(i), *this; }
  // Binds `args` to ?1, ?2, ... in order.
  template <typename... A>
  Stmt& bind_all(const A&... args) {
    int i = 0;
    (bind(++i, args), ...);
    return *this;
  }

  bool step() { return s_->step(); }
  // Runs it to the end (INSERT/UPDATE/DELETE); returns the rows it changed.
  int64_t run() {
    while (step()) {
    }
    return s_->changes();
  }

  int64_t col_int(int i) const { return s_->col_int(i); }
  double col_double(int i) const { return s_->col_double(i); }
  std::string col_text(int i) const { return s_->col_text(i); }
  std::string col_blob(int i) const { return s_->col_blob(i); }
  bool col_null(int i) const { return s_->col_null(i); }
  std::optional<std::string> col_opt_text(int i) const {
    return col_null(i) ? std::nullopt : std::optional<std::string>(col_text(i));
  }
  std::optional<int64_t> col_opt_int(int i) const {
    return col_null(i) ? std::nullopt : std::optional<int64_t>(col_int(i));
  }
  // Reads the row's columns, from `first` on, into `out...` in order, each as its type reads it
  // (a NULL is an empty optional).
  template <typename... T>
  void read_from(int first, T&... out) const {
    (col(first++, out), ...);
  }
  template <typename... T>
  void read(T&... out) const {
    read_from(0, out...);
  }

 private:
  void col(int i, std::string& v) const { v = col_text(i); }
  void col(int i, int64_t& v) const { v = col_int(i); }
  void col(int i, int& v) const { v = static_cast<int>(col_int(i)); }
  void col(int i, double& v) const { v = col_double(i); }
  template <typename T>
  void col(int i, std::optional<T>& v) const {
    if (col_null(i))
      v.reset();
    else
      col(i, v.emplace());
  }

  std::unique_ptr<Statement> s_;
};

// A connection inside a transaction (see Database).
class Connection {
 public:
  virtual ~Connection() = default;
  virtual Dialect dialect() const = 0;
  // Prepared once per connection and reused; `sql` must be a literal (see Dialects).
  virtual Stmt prepare(const char* sql) = 0;
  Stmt prepare(const Dialects& sql) {
    return prepare(dialect() == Dialect::kPostgres ? sql.postgres : sql.sqlite);
  }
  // Rows changed by the last INSERT/UPDATE/DELETE run on this connection.
  virtual int64_t changes() const = 0;
  // Runs a script of statements without parameters (migrations).
  virtual void exec(const std::string& script) = 0;

  // The shapes store code repeats, over a statement (a literal or Dialects) with `args` bound to
  // ?1, ?2, ... in order. A single-row read leaves the statement unfinished, as stopping at any
  // row may (the engines reset it before the next use and before the transaction ends).
  template <typename S, typename... A>
  Stmt query(const S& sql, const A&... args) {
    Stmt s = prepare(sql);
    s.bind_all(args...);
    return s;
  }
  // Runs an INSERT/UPDATE/DELETE; returns the rows it changed.
  template <typename S, typename... A>
  int64_t run(const S& sql, const A&... args) {
    return query(sql, args...).run();
  }
  // True when the query returns a row.
  template <typename S, typename... A>
  bool exists(const S& sql, const A&... args) {
    return query(sql, args...).step();
  }
  // The first column of the first row as a number; 0 without a row (counts, sums).
  template <typename S, typename... A>
  int64_t number(const S& sql, const A&... args) {
    Stmt s = query(sql, args...);
    return s.step() ? s.col_int(0) : 0;
  }
  // The first row as `read(const Stmt&)` maps it; nullopt without a row.
  template <typename F, typename S, typename... A>
  auto first(F&& read, const S& sql, const A&... args)
      -> std::optional<std::invoke_result_t<F&, const Stmt&>> {
    Stmt s = query(sql, args...);
    if (!s.step()) return std::nullopt;
    return read(s);
  }
  // Every row as `read(const Stmt&)` maps it.
  template <typename F, typename S, typename... A>
  auto all(F&& read, const S& sql, const A&... args) {
    std::vector<std::invoke_result_t<F&, const Stmt&>> out;
    for (Stmt s = query(sql, args...); s.step();) out.push_back(read(s));
    return out;
  }
};

// Row mappers for first() and all() that read one column.
inline std::string text_col(const Stmt& s) {
  return s.col_text(0);
}
inline int64_t int_col(const Stmt& s) {
  return s.col_int(0);
}

// `v`, or `missing` when there is none (a single-row read that found nothing).
template <typename T>
Result<T> found(std::optional<T> v, Status missing) {
  if (!v) return missing;
  return std::move(*v);
}

namespace detail {
// What a transaction returns: a Status stays a Status, a Result<T> stays a Result<T>, and a plain
// T becomes Result<T>; failed() says when the work asks for a rollback.
template <typename T>
struct Outcome {
  using type = Result<T>;
  static bool failed(const T&) { return false; }
};
template <>
struct Outcome<Status> {
  using type = Status;
  static bool failed(const Status& s) { return !s.ok(); }
};
template <typename T>
struct Outcome<Result<T>> {
  using type = Result<T>;
  static bool failed(const Result<T>& r) { return !r.ok(); }
};
}  // namespace detail

enum class Tx {
  kRead,   // a consistent snapshot to read from
  kWrite,  // SQLite: BEGIN IMMEDIATE; PostgreSQL: READ COMMITTED
  kOnce,   // PostgreSQL: no transaction, each statement commits by itself; SQLite: kWrite
};

// A pool of connections and the transactions on them. `fn(Connection&)` runs in a transaction that
// commits when it returns, and rolls back when it returns a failed Status/Result or throws. It may
// run more than once when the engine retries (busy, serialization failure), so it must not have
// effects outside the database.
class Database {
 public:
  virtual ~Database() = default;
  virtual Dialect dialect() const = 0;

  // A consistent snapshot to read from.
  template <typename F>
  auto read(F&& fn) {
    return run(Tx::kRead, std::forward<F>(fn));
  }
  // A write transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: READ COMMITTED).
  template <typename F>
  auto write(F&& fn) {
    return run(Tx::kWrite, std::forward<F>(fn));
  }
  // PostgreSQL: each statement commits by itself (one round trip each); SQLite: a write
  // transaction (its single writer needs one anyway).
  template <typename F>
  auto once(F&& fn) {
    return run(Tx::kOnce, std::forward<F>(fn));
  }

  // A read of one query (Connection::first, all): its first row, else `missing`; every row.
  template <typename F, typename S, typename... A>
  auto read_one(Status missing, F&& map, const S& sql, const A&... args) {
    return read([&](Connection& c) { return found(c.first(map, sql, args...), missing); });
  }
  template <typename F, typename S, typename... A>
  auto read_all(F&& map, const S& sql, const A&... args) {
    return read([&](Connection& c) { return c.all(map, sql, args...); });
  }

 protected:
  // Runs `work` in a transaction of `kind`; `work` returns true to roll back. Returns Ok once the
  // work committed, else why not (database errors; ignored when the work asked to roll back).
  class Work {
   public:
    virtual bool operator()(Connection& c) = 0;

   protected:
    ~Work() = default;
  };
  virtual Status transact(Tx kind, Work& work) = 0;

 private:
  template <typename F>
  auto run(Tx kind, F&& fn) {
    using R = std::invoke_result_t<F&, Connection&>;
    using O = detail::Outcome<R>;
    struct Body final : Work {
      F& fn;
      std::optional<R> out;
      bool failed = false;
      explicit Body(F& f) : fn(f) {}
      bool operator()(Connection& c) override {
        out.reset();
        failed = false;
        out.emplace(fn(c));
        return failed = O::failed(*out);
      }
    } body(fn);
    Status st = transact(kind, body);
    using Ret = typename O::type;
    // The work's own failure (rolled back) wins; then the transaction's (the commit failed, or the
    // database did).
    if (body.failed || (st.ok() && body.out)) return Ret(std::move(*body.out));
    if (st.ok()) st = Status::Internal("transaction ended without running its work");
    return Ret(std::move(st));
  }
};

}  // namespace imago::sql

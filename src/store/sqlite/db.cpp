#include "store/sqlite/db.h"

#include <sqlite3.h>

#include <mutex>
#include <unordered_map>

namespace imago::sqlite {

namespace {

using sql::Error;

[[noreturn]] void fail(sqlite3* db, int rc, const char* what) {
  const int primary = rc & 0xff;
  const Error::Kind kind = primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? Error::Kind::kRetry
                           : primary == SQLITE_CONSTRAINT                     ? Error::Kind::kConstraint
                                                                              : Error::Kind::kOther;
  throw Error(kind, std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

class Statement final : public sql::Statement {
 public:
  explicit Statement(sqlite3_stmt* s) : s_(s) {}
  void bind_int(int i, int64_t v) override { sqlite3_bind_int64(s_, i, v); }
  void bind_double(int i, double v) override { sqlite3_bind_double(s_, i, v); }
  void bind_text(int i, std::string_view v) override {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind_blob(int i, std::string_view v) override {
    sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind_null(int i) override { sqlite3_bind_null(s_, i); }
  bool step() override {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(sqlite3_db_handle(s_), rc, "step");
  }
  int64_t changes() const override { return sqlite3_changes64(sqlite3_db_handle(s_)); }
  int64_t col_int(int i) const override { return sqlite3_column_int64(s_, i); }
  double col_double(int i) const override { return sqlite3_column_double(s_, i); }
  std::string col_text(int i) const override {
    const auto* p = sqlite3_column_blob(s_, i);
    const int n = sqlite3_column_bytes(s_, i);
    return p ? std::string(static_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
  }
  std::string col_blob(int i) const override { return col_text(i); }
  bool col_null(int i) const override { return sqlite3_column_type(s_, i) == SQLITE_NULL; }

 private:
  sqlite3_stmt* s_;  // owned by the connection's cache
};

class Conn final : public sql::PooledConnection {
 public:
  explicit Conn(sqlite3* db) : db_(db) {}
  ~Conn() override {
    for (auto& [sql, s] : cache_) sqlite3_finalize(s);
    sqlite3_close_v2(db_);
  }

  sql::Dialect dialect() const override { return sql::Dialect::kSqlite; }
  using sql::Connection::prepare;
  sql::Stmt prepare(const char* sql) override { return sql::Stmt(std::make_unique<Statement>(cached(sql))); }
  int64_t changes() const override { return sqlite3_changes64(db_); }
  void exec(const std::string& script) override {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, script.c_str(), nullptr, nullptr, &err);
    if (rc == SQLITE_OK) return;
    const std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    fail(nullptr, rc, msg.c_str());
  }

  // Transaction control goes through the statement cache: sqlite3_exec would parse it again on
  // every request. The single writer needs no other lock, so kOnce is a write transaction too.
  bool begin(sql::Tx kind) override {
    run(kind == sql::Tx::kRead ? "BEGIN" : "BEGIN IMMEDIATE");
    return true;
  }
  void commit() override {
    reset_all();
    run("COMMIT");
  }
  void rollback() noexcept override {
    try {
      reset_all();
      run("ROLLBACK");
    } catch (...) {
    }
  }

 private:
  // Prepared once per connection, keyed by the literal's address (every caller passes a literal);
  // reset and cleared on each use.
  sqlite3_stmt* cached(const char* sql) {
    auto it = cache_.find(sql);
    if (it == cache_.end()) {
      sqlite3_stmt* s = nullptr;
      const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
      if (rc != SQLITE_OK) fail(db_, rc, "prepare");
      it = cache_.emplace(sql, s).first;
    }
    sqlite3_reset(it->second);
    sqlite3_clear_bindings(it->second);
    return it->second;
  }
  void run(const char* sql) {
    Statement s(cached(sql));
    while (s.step()) {
    }
  }
  // A SELECT left mid-result keeps its read snapshot open past COMMIT; the next BEGIN IMMEDIATE on
  // this connection would then fail with SQLITE_BUSY_SNAPSHOT for good. Resetting every statement
  // before a transaction ends lets callers stop stepping at any row.
  void reset_all() {
    for (auto& [sql, s] : cache_) sqlite3_reset(s);
  }

  sqlite3* db_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
};

}  // namespace

Db::Db(const std::string& path, int pool_size)
    : EnginePool(sql::Dialect::kSqlite, path, static_cast<size_t>(pool_size), /*retries=*/50) {}

Result<std::unique_ptr<sql::PooledConnection>> Db::connect() {
  // SQLite counts allocated memory under one global mutex by default: every statement step on
  // every thread would meet there. Nothing here reads those counts. This must precede SQLite's
  // initialization, so it is done before the first connection of the process.
  static std::once_flag configured;
  std::call_once(configured, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(target().c_str(), &raw,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close_v2(raw);
    return Status::Internal("cannot open database " + target() + ": " + msg);
  }
  auto conn = std::make_unique<Conn>(raw);
  sqlite3_busy_timeout(raw, 5000);
  try {
    if (!opened_any_) {
      try {
        conn->exec("PRAGMA journal_mode=WAL");
      } catch (const Error& e) {
        return Status::Internal(std::string("cannot enable WAL: ") + e.what());
      }
      opened_any_ = true;
    }
    conn->exec("PRAGMA foreign_keys=ON");
    conn->exec("PRAGMA synchronous=NORMAL");
  } catch (const Error& e) {
    return Status::Internal(e.what());
  }
  return std::unique_ptr<sql::PooledConnection>(std::move(conn));
}

}  // namespace imago::sqlite

#include "store/sqlite/db.h"

#include <mutex>

namespace imago::sqlite {

namespace {
[[noreturn]] void fail(sqlite3* db, int rc, const char* what) {
  throw Error(rc, std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}
}  // namespace

Stmt& Stmt::bind(int i, int64_t v) {
  sqlite3_bind_int64(s_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  sqlite3_bind_double(s_, i, v);
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view v) {
  sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind(int i, const std::optional<std::string>& v) {
  return v ? bind(i, std::string_view(*v)) : bind_null(i);
}
Stmt& Stmt::bind_blob(int i, std::string_view v) {
  sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  sqlite3_bind_null(s_, i);
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(sqlite3_db_handle(s_), rc, "step");
}

void Stmt::run() {
  while (step()) {
  }
}

std::string Stmt::col_text(int i) const {
  const auto* p = sqlite3_column_blob(s_, i);
  int n = sqlite3_column_bytes(s_, i);
  return p ? std::string(static_cast<const char*>(p), static_cast<size_t>(n)) : std::string();
}

std::optional<std::string> Stmt::col_opt_text(int i) const {
  if (col_null(i)) return std::nullopt;
  return col_text(i);
}

std::optional<int64_t> Stmt::col_opt_int(int i) const {
  if (col_null(i)) return std::nullopt;
  return col_int(i);
}

Conn::~Conn() {
  for (auto& [k, s] : cache_) sqlite3_finalize(s);
  sqlite3_close_v2(db_);
}

void Conn::exec(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw Error(rc, msg);
  }
}

void Conn::reset_all() {
  for (auto& [sql, stmt] : cache_) sqlite3_reset(stmt);
}

Stmt Conn::prepare(const char* sql) {
  // Keyed by the literal's address: every call site passes a string literal.
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    if (rc != SQLITE_OK) fail(db_, rc, "prepare");
    it = cache_.emplace(sql, s).first;
  }
  sqlite3_reset(it->second);
  sqlite3_clear_bindings(it->second);
  return Stmt(it->second);
}

Result<std::unique_ptr<Db>> Db::open(const std::string& path, int pool_size) {
  // SQLite counts allocated memory under one global mutex by default: every statement step on
  // every thread would meet there. Nothing here reads those counts. This must precede SQLite's
  // initialization, so it is done before the first connection of the process.
  static std::once_flag configured;
  std::call_once(configured, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  std::unique_ptr<Db> db(new Db(path));
  db->max_ = static_cast<size_t>(std::max(1, pool_size));
  auto first = db->open_conn();
  if (!first.ok()) return first.status();
  try {
    (*first)->exec("PRAGMA journal_mode=WAL");
  } catch (const Error& e) {
    return Status::Internal(std::string("cannot enable WAL: ") + e.what());
  }
  db->idle_.push_back(*first);
  return db;
}

Db::~Db() = default;

Result<Conn*> Db::open_conn() {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path_.c_str(), &raw,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close_v2(raw);
    return Status::Internal("cannot open database " + path_ + ": " + msg);
  }
  auto conn = std::make_unique<Conn>(raw);
  sqlite3_busy_timeout(raw, 5000);
  try {
    conn->exec("PRAGMA foreign_keys=ON");
    conn->exec("PRAGMA synchronous=NORMAL");
  } catch (const Error& e) {
    return Status::Internal(e.what());
  }
  Conn* p = conn.get();
  all_.push_back(std::move(conn));
  return p;
}

Conn* Db::acquire() {
  std::unique_lock lock(mu_);
  while (true) {
    if (!idle_.empty()) {
      Conn* c = idle_.back();
      idle_.pop_back();
      return c;
    }
    if (all_.size() < max_) {
      auto c = open_conn();
      if (c.ok()) return *c;
      throw Error(SQLITE_CANTOPEN, c.status().message());
    }
    cv_.wait(lock);
  }
}

void Db::release(Conn* c) {
  {
    std::lock_guard lock(mu_);
    idle_.push_back(c);
  }
  cv_.notify_one();
}

}  // namespace imago::sqlite

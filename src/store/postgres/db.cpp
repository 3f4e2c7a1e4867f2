#include "store/postgres/db.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>
#include <unordered_map>

namespace imago::pg {

namespace {

using sql::Error;

// Timestamps are Unix numbers everywhere; keep the session predictable regardless of server
// defaults (set again after a reconnect).
constexpr const char* kSessionSettings =
    "SET TIME ZONE 'UTC'; SET client_min_messages = warning; SET statement_timeout = '30s'; SET "
    "lock_timeout = '10s'";

std::string error_text(PGconn* c, PGresult* r) {
  const char* m = r ? PQresultErrorMessage(r) : nullptr;
  std::string s = (m && *m) ? m : PQerrorMessage(c);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Throws the failure of `r` (consumed) as the pool classifies it.
[[noreturn]] void fail(PGconn* c, PGresult* r, const char* what) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state ? state : "";
  std::string msg = std::string(what) + ": " + error_text(c, r);
  if (r) PQclear(r);
  Error::Kind kind = Error::Kind::kOther;
  if (PQstatus(c) != CONNECTION_OK)
    kind = Error::Kind::kLost;
  else if (sqlstate == "40001" || sqlstate == "40P01")  // serialization failure, deadlock
    kind = Error::Kind::kRetry;
  else if (sqlstate.rfind("23", 0) == 0)  // integrity constraint violation
    kind = Error::Kind::kConstraint;
  throw Error(kind, msg);
}

// One execution of a prepared statement. Results come back as text; the statement runs at the
// first step().
class Statement final : public sql::Statement {
 public:
  Statement(PGconn* c, int64_t* changes, const std::string* name, int nparams)
      : c_(c),
        changes_(changes),
        name_(name),
        params_(static_cast<size_t>(nparams)),
        formats_(static_cast<size_t>(nparams), 0) {}

  void bind_int(int i, int64_t v) override { param(i) = std::to_string(v); }
  void bind_double(int i, double v) override {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
    param(i) = std::string(buf, r.ptr);
  }
  void bind_text(int i, std::string_view v) override { param(i) = std::string(v); }
  void bind_blob(int i, std::string_view v) override {
    param(i) = std::string(v);
    formats_.at(static_cast<size_t>(i - 1)) = 1;  // binary: bytea without escaping
  }
  void bind_null(int i) override { param(i).reset(); }

  bool step() override {
    if (!res_) execute();
    return ++row_ < PQntuples(res_.get());
  }
  int64_t changes() const override { return *changes_; }

  int64_t col_int(int i) const override { return col_null(i) ? 0 : std::strtoll(cell(i), nullptr, 10); }
  double col_double(int i) const override { return col_null(i) ? 0.0 : std::strtod(cell(i), nullptr); }
  std::string col_text(int i) const override {
    return std::string(cell(i), static_cast<size_t>(PQgetlength(res_.get(), row_, i)));
  }
  std::string col_blob(int i) const override {
    if (col_null(i)) return {};
    size_t n = 0;
    unsigned char* p = PQunescapeBytea(reinterpret_cast<const unsigned char*>(cell(i)), &n);
    if (!p) throw Error(Error::Kind::kOther, "out of memory decoding bytea");
    std::string out(reinterpret_cast<char*>(p), n);
    PQfreemem(p);
    return out;
  }
  bool col_null(int i) const override { return PQgetisnull(res_.get(), row_, i) != 0; }

 private:
  std::optional<std::string>& param(int i) { return params_.at(static_cast<size_t>(i - 1)); }
  const char* cell(int i) const { return PQgetvalue(res_.get(), row_, i); }
  void execute() {
    std::vector<const char*> values(params_.size());
    std::vector<int> lengths(params_.size());
    for (size_t i = 0; i < params_.size(); ++i) {
      values[i] = params_[i] ? params_[i]->data() : nullptr;
      lengths[i] = params_[i] ? static_cast<int>(params_[i]->size()) : 0;
    }
    PGresult* r = PQexecPrepared(c_, name_->c_str(), static_cast<int>(params_.size()), values.data(),
                                 lengths.data(), formats_.data(), 0);
    const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) fail(c_, r, "statement");
    res_.reset(r, PQclear);
    const char* n = PQcmdTuples(r);
    *changes_ = (n && *n) ? std::strtoll(n, nullptr, 10) : 0;
  }

  PGconn* c_;
  int64_t* changes_;
  const std::string* name_;
  std::vector<std::optional<std::string>> params_;
  std::vector<int> formats_;
  std::shared_ptr<PGresult> res_;
  int row_ = -1;
};

class Conn final : public sql::PooledConnection {
 public:
  explicit Conn(PGconn* c) : c_(c) {}
  ~Conn() override { PQfinish(c_); }

  sql::Dialect dialect() const override { return sql::Dialect::kPostgres; }
  using sql::Connection::prepare;
  sql::Stmt prepare(const char* sql) override {
    auto it = cache_.find(sql);
    if (it == cache_.end()) {
      Prepared p;
      const std::string text = rewrite_placeholders(sql, &p.nparams);
      p.name = "s" + std::to_string(next_id_++);
      PGresult* r = PQprepare(c_, p.name.c_str(), text.c_str(), 0, nullptr);
      if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) fail(c_, r, "prepare");
      PQclear(r);
      it = cache_.emplace(sql, std::move(p)).first;
    }
    return sql::Stmt(std::make_unique<Statement>(c_, &changes_, &it->second.name, it->second.nparams));
  }
  int64_t changes() const override { return changes_; }
  void exec(const std::string& script) override {
    PGresult* r = PQexec(c_, script.c_str());
    const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) fail(c_, r, "exec");
    PQclear(r);
  }

  // A broken connection (the server restarted, a failover) is reconnected; prepared statements
  // are per session, so they are forgotten.
  void ready() override {
    if (PQstatus(c_) == CONNECTION_OK) return;
    cache_.clear();
    PQreset(c_);
    if (PQstatus(c_) != CONNECTION_OK) throw Error(Error::Kind::kLost, "connection lost");
    exec(kSessionSettings);
  }
  bool begin(sql::Tx kind) override {
    if (kind == sql::Tx::kOnce) return false;
    prepare(kind == sql::Tx::kRead ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN").run();
    return true;
  }
  void commit() override { prepare("COMMIT").run(); }
  void rollback() noexcept override {
    if (PQstatus(c_) != CONNECTION_OK) return;  // the server rolled it back
    try {
      exec("ROLLBACK");
    } catch (...) {
    }
  }

 private:
  struct Prepared {
    std::string name;
    int nparams = 0;
  };
  PGconn* c_;
  std::unordered_map<const char*, Prepared> cache_;
  int64_t changes_ = 0;
  int next_id_ = 0;
};

}  // namespace

std::string rewrite_placeholders(std::string_view sql, int* nparams) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 0, max_seen = 0;
  bool in_quote = false;
  for (size_t i = 0; i < sql.size(); ++i) {
    char ch = sql[i];
    if (ch == '\'') in_quote = !in_quote;
    if (in_quote || ch != '?') {
      out.push_back(ch);
      continue;
    }
    size_t j = i + 1;
    int n = 0;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') n = n * 10 + (sql[j++] - '0');
    if (j == i + 1) n = ++next;  // plain `?`: the next one in order
    max_seen = std::max(max_seen, n);
    out += "$" + std::to_string(n);
    i = j - 1;
  }
  *nparams = max_seen;
  return out;
}

Db::Db(const std::string& url, int pool_size)
    : EnginePool(sql::Dialect::kPostgres, url, static_cast<size_t>(pool_size), /*retries=*/3) {}

Result<std::unique_ptr<sql::PooledConnection>> Db::connect() {
  PGconn* raw = PQconnectdb(target().c_str());
  if (!raw || PQstatus(raw) != CONNECTION_OK) {
    std::string msg = raw ? PQerrorMessage(raw) : "out of memory";
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    PQfinish(raw);
    return Status::Unavailable("cannot connect to PostgreSQL: " + msg);
  }
  auto conn = std::make_unique<Conn>(raw);
  try {
    conn->exec(kSessionSettings);
  } catch (const Error& e) {
    return Status::Internal(e.what());
  }
  return std::unique_ptr<sql::PooledConnection>(std::move(conn));
}

// --- Listener ---

struct Listener::State {
  std::string url;
  std::vector<std::string> channels;
  Callback cb;
  std::atomic<bool> stop{false};
  int wake_pipe[2] = {-1, -1};
  std::thread thread;
};

Listener::Listener(std::string url, std::vector<std::string> channels, Callback on_notify)
    : st_(std::make_unique<State>()) {
  st_->url = std::move(url);
  st_->channels = std::move(channels);
  st_->cb = std::move(on_notify);
  if (::pipe2(st_->wake_pipe, O_CLOEXEC) != 0) st_->wake_pipe[0] = st_->wake_pipe[1] = -1;
  st_->thread = std::thread([this] { run(); });
}

Listener::~Listener() {
  st_->stop = true;
  if (st_->wake_pipe[1] >= 0) (void)!::write(st_->wake_pipe[1], "x", 1);
  if (st_->thread.joinable()) st_->thread.join();
  for (int fd : st_->wake_pipe) {
    if (fd >= 0) ::close(fd);
  }
}

void Listener::run() {
  State& s = *st_;
  while (!s.stop) {
    PGconn* c = PQconnectdb(s.url.c_str());
    bool ok = c && PQstatus(c) == CONNECTION_OK;
    for (size_t i = 0; ok && i < s.channels.size(); ++i) {
      char* ident = PQescapeIdentifier(c, s.channels[i].c_str(), s.channels[i].size());
      std::string sql = std::string("LISTEN ") + (ident ? ident : "");
      PQfreemem(ident);
      PGresult* r = PQexec(c, sql.c_str());
      ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
      PQclear(r);
    }
    if (ok) {
      // Anything sent before LISTEN took effect (at start, or while we were away) is lost: tell the
      // owner to look once.
      for (const auto& ch : s.channels) s.cb(ch, "");
    }
    while (ok && !s.stop) {
      pollfd fds[2] = {{PQsocket(c), POLLIN, 0}, {s.wake_pipe[0], POLLIN, 0}};
      int n = ::poll(fds, s.wake_pipe[0] >= 0 ? 2 : 1, 1000);
      if (n < 0 && errno != EINTR) break;
      if (!PQconsumeInput(c)) break;
      while (PGnotify* note = PQnotifies(c)) {
        std::string ch = note->relname, payload = note->extra ? note->extra : "";
        PQfreemem(note);
        s.cb(ch, payload);
      }
      if (PQstatus(c) != CONNECTION_OK) break;
    }
    if (c) PQfinish(c);
    // Reconnect after a short pause (the database may be restarting).
    for (int i = 0; i < 10 && !s.stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace imago::pg

#include "store/postgres/db.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <thread>

namespace imago::pg {

namespace {

std::string error_text(PGconn* c, PGresult* r) {
  const char* m = r ? PQresultErrorMessage(r) : nullptr;
  std::string s = (m && *m) ? m : PQerrorMessage(c);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

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

// --- Stmt ---

Stmt::Stmt(Conn& c, const std::string* name, int nparams)
    : c_(&c), name_(name), params_(static_cast<size_t>(nparams)), formats_(static_cast<size_t>(nparams), 0) {}

Stmt& Stmt::bind(int i, int64_t v) {
  params_.at(static_cast<size_t>(i - 1)) = std::to_string(v);
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  params_.at(static_cast<size_t>(i - 1)) = std::string(buf, r.ptr);
  return *this;
}
Stmt& Stmt::bind(int i, std::string_view v) {
  params_.at(static_cast<size_t>(i - 1)) = std::string(v);
  return *this;
}
Stmt& Stmt::bind(int i, const std::optional<std::string>& v) {
  return v ? bind(i, std::string_view(*v)) : bind_null(i);
}
Stmt& Stmt::bind_bytes(int i, std::string_view v) {
  params_.at(static_cast<size_t>(i - 1)) = std::string(v);
  formats_.at(static_cast<size_t>(i - 1)) = 1;
  return *this;
}
Stmt& Stmt::bind_null(int i) {
  params_.at(static_cast<size_t>(i - 1)).reset();
  return *this;
}

void Stmt::execute() {
  std::vector<const char*> values(params_.size());
  std::vector<int> lengths(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    values[i] = params_[i] ? params_[i]->data() : nullptr;
    lengths[i] = params_[i] ? static_cast<int>(params_[i]->size()) : 0;
  }
  PGresult* r = PQexecPrepared(c_->c_, name_->c_str(), static_cast<int>(params_.size()), values.data(),
                               lengths.data(), formats_.data(), 0);
  ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) c_->fail(r, "statement");
  res_.reset(r, PQclear);
  const char* n = PQcmdTuples(r);
  c_->changes_ = (n && *n) ? std::strtoll(n, nullptr, 10) : 0;
  executed_ = true;
}

bool Stmt::step() {
  if (!executed_) execute();
  return ++row_ < PQntuples(res_.get());
}

int64_t Stmt::run() {
  if (!executed_) execute();
  return c_->changes_;
}

int Stmt::rows() const {
  return executed_ ? PQntuples(res_.get()) : 0;
}

const char* Stmt::cell(int i) const {
  return PQgetvalue(res_.get(), row_, i);
}
bool Stmt::col_null(int i) const {
  return PQgetisnull(res_.get(), row_, i) != 0;
}
int64_t Stmt::col_int(int i) const {
  return col_null(i) ? 0 : std::strtoll(cell(i), nullptr, 10);
}
double Stmt::col_double(int i) const {
  return col_null(i) ? 0.0 : std::strtod(cell(i), nullptr);
}
bool Stmt::col_bool(int i) const {
  return !col_null(i) && cell(i)[0] == 't';
}
std::string Stmt::col_text(int i) const {
  return std::string(cell(i), static_cast<size_t>(PQgetlength(res_.get(), row_, i)));
}
std::string Stmt::col_bytes(int i) const {
  if (col_null(i)) return {};
  size_t n = 0;
  unsigned char* p = PQunescapeBytea(reinterpret_cast<const unsigned char*>(cell(i)), &n);
  if (!p) throw Error("53200", "out of memory decoding bytea", false);
  std::string out(reinterpret_cast<char*>(p), n);
  PQfreemem(p);
  return out;
}
std::optional<std::string> Stmt::col_opt_text(int i) const {
  if (col_null(i)) return std::nullopt;
  return col_text(i);
}
std::optional<int64_t> Stmt::col_opt_int(int i) const {
  if (col_null(i)) return std::nullopt;
  return col_int(i);
}

// --- Conn ---

Conn::~Conn() {
  PQfinish(c_);
}

void Conn::fail(PGresult* r, const char* what) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string msg = std::string(what) + ": " + error_text(c_, r);
  bool lost = PQstatus(c_) != CONNECTION_OK;
  std::string sqlstate = state ? state : (lost ? "08006" : "XX000");
  if (r) PQclear(r);
  throw Error(sqlstate, msg, lost);
}

void Conn::exec(const char* sql) {
  PGresult* r = PQexec(c_, sql);
  ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) fail(r, "exec");
  PQclear(r);
}

Stmt Conn::prepare(const char* sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    Prepared p;
    std::string text = rewrite_placeholders(sql, &p.nparams);
    p.name = "s" + std::to_string(next_id_++);
    PGresult* r = PQprepare(c_, p.name.c_str(), text.c_str(), 0, nullptr);
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK) fail(r, "prepare");
    PQclear(r);
    it = cache_.emplace(sql, std::move(p)).first;
  }
  return Stmt(*this, &it->second.name, it->second.nparams);
}

bool Conn::reset() {
  cache_.clear();
  PQreset(c_);
  return PQstatus(c_) == CONNECTION_OK;
}

// --- Db ---

Result<std::unique_ptr<Db>> Db::open(const std::string& url, int pool_size) {
  std::unique_ptr<Db> db(new Db(url));
  db->max_ = static_cast<size_t>(std::max(1, pool_size));
  auto first = db->open_conn();
  if (!first.ok()) return first.status();
  db->idle_.push_back(*first);
  return db;
}

Db::~Db() = default;

Result<Conn*> Db::open_conn() {
  PGconn* raw = PQconnectdb(url_.c_str());
  if (!raw || PQstatus(raw) != CONNECTION_OK) {
    std::string msg = raw ? PQerrorMessage(raw) : "out of memory";
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    PQfinish(raw);
    return Status::Unavailable("cannot connect to PostgreSQL: " + msg);
  }
  auto conn = std::make_unique<Conn>(raw);
  try {
    // Timestamps are Unix numbers everywhere; keep the session predictable regardless of server
    // defaults.
    conn->exec(
        "SET TIME ZONE 'UTC'; SET client_min_messages = warning; SET statement_timeout = '30s'; SET "
        "lock_timeout = '10s'");
  } catch (const Error& e) {
    return Status::Internal(e.what());
  }
  Conn* p = conn.get();
  std::lock_guard lock(mu_);
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
      lock.unlock();
      auto c = open_conn();
      if (c.ok()) return *c;
      throw Error("08001", c.status().message(), true);
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

// The one transaction loop of both engines: a pool of connections and Database::transact over it.
// An engine (store/sqlite/db.h, store/postgres/db.h) supplies its connections, their transaction
// control and how it reports errors (Error::Kind); the loop decides what to retry and what each
// failure means to the caller.
//
// Retries, only where safe: a transaction runs again when the engine reports kRetry (SQLite: the
// database is busy; PostgreSQL: serialization failure or deadlock, rolled back), or when the
// connection broke before COMMIT was sent (the server rolls back an unfinished transaction). A
// connection lost during COMMIT, or during a statement that commits by itself, leaves the outcome
// unknown: that is reported (kUnavailable), never retried.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/sql/connection.h"

namespace imago::sql {

// A failed statement, as an engine classifies it.
class Error : public std::runtime_error {
 public:
  enum class Kind {
    kRetry,       // rolled back by the engine; running the transaction again is safe
    kConstraint,  // a unique or check constraint refused the write
    kLost,        // the connection broke
    kOther,
  };
  Error(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// One connection of a pool, with its engine's transaction control.
class PooledConnection : public Connection {
 public:
  // Makes the connection ready for a transaction (PostgreSQL reconnects a broken one); throws
  // Error(kLost) when it cannot.
  virtual void ready() {}
  // Starts a transaction of `kind`; false when the engine runs it without one (PostgreSQL's
  // kOnce: each statement commits by itself).
  virtual bool begin(Tx kind) = 0;
  virtual void commit() = 0;
  // Never throws: it runs after a failure, whose error is the one reported.
  virtual void rollback() noexcept = 0;
};

class Pool : public Database {
 public:
  Dialect dialect() const final { return dialect_; }
  // What the engine connects to: a file path (SQLite), a libpq URL (PostgreSQL).
  const std::string& target() const { return target_; }

 protected:
  // `retries`: how many times a transaction runs again after kRetry or an early kLost.
  Pool(Dialect dialect, std::string target, size_t max_connections, int retries);
  ~Pool() override;
  // Opens one more connection (called outside the pool's lock).
  virtual Result<std::unique_ptr<PooledConnection>> connect() = 0;
  // Opens the first connection, so that a bad path or URL fails at open.
  Status open_first();

  Status transact(Tx kind, Work& work) final;

 private:
  PooledConnection* acquire();
  void release(PooledConnection* c);

  const Dialect dialect_;
  const std::string target_;
  const size_t max_;
  const int retries_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<PooledConnection>> all_;
  std::vector<PooledConnection*> idle_;
  size_t opening_ = 0;  // connections being opened outside the lock
};

// An engine's pool: Engine::open(target, pool_size) makes one with its first connection open.
// Engine's constructor takes (target, pool_size) and befriends EnginePool.
template <typename Engine>
class EnginePool : public Pool {
 public:
  static Result<std::unique_ptr<Engine>> open(const std::string& target, int pool_size = 8) {
    std::unique_ptr<Engine> db(new Engine(target, pool_size));
    if (Status st = db->open_first(); !st.ok()) return st;
    return db;
  }

 protected:
  using Pool::Pool;
};

}  // namespace imago::sql

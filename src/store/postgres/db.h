// PostgreSQL under the SQL stores (store/sql/), over libpq: a pool of connections, statements
// prepared once per connection (by the address of their SQL literal, `?` / `?N` placeholders
// rewritten to `$N`), parameters sent as text (blobs as binary bytea), and a LISTEN connection for
// wake-ups across nodes. The transaction loop and its retries are the pool's (store/sql/pool.h).
//
// Isolation: writes run at READ COMMITTED (the default); stores lock the rows they read-modify-write
// (SELECT ... FOR UPDATE) or write conditionally (UPDATE ... WHERE ... RETURNING). Reads run in a
// READ ONLY REPEATABLE READ transaction so that a count and its page come from one snapshot.
// Database::once runs without a transaction: each statement commits by itself (one round trip).
// A broken connection is reconnected before the next transaction.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/sql/pool.h"

namespace imago::pg {

// Db::open(url, pool_size) connects (libpq URL or key=value string) and checks the server answers.
class Db final : public sql::EnginePool<Db> {
 public:
  const std::string& url() const { return target(); }

 private:
  friend EnginePool;
  Db(const std::string& url, int pool_size);
  Result<std::unique_ptr<sql::PooledConnection>> connect() override;
};

// Rewrites `?` and `?N` placeholders (outside quotes) to `$N`; returns the parameter count.
std::string rewrite_placeholders(std::string_view sql, int* nparams);

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

}  // namespace imago::pg

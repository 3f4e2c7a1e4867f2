// SQLite under the SQL stores (store/sql/): a pool of connections on one file (WAL lets readers run
// beside the single writer), statements prepared once per connection, and write transactions that
// begin IMMEDIATE, so two writers never deadlock upgrading a read lock; a busy database is retried
// by the pool's transaction loop (store/sql/pool.h).
#pragma once
#include <memory>
#include <string>

#include "store/sql/pool.h"

namespace imago::sqlite {

// Db::open(path, pool_size) opens (creating if needed) the database file, sets WAL, foreign keys
// and a busy timeout.
class Db final : public sql::EnginePool<Db> {
  friend EnginePool;
  Db(const std::string& path, int pool_size);
  Result<std::unique_ptr<sql::PooledConnection>> connect() override;

  bool opened_any_ = false;  // the first connection sets WAL (kept in the file)
};

}  // namespace imago::sqlite

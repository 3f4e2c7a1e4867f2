// The SQL store interfaces (connection.h) over each backend's own layer: SQLite (store/sqlite/db.h)
// and PostgreSQL (store/postgres/db.h). Both layers have the same shape (a pool, statements
// prepared once per connection, transactions that roll back on a failed Status), so one adapter
// template serves both.
#pragma once
#include <memory>

#include "store/postgres/db.h"
#include "store/sql/connection.h"
#include "store/sqlite/db.h"

namespace imago::sql {

template <typename BackendConn, Dialect D>
class ConnectionOver final : public Connection {
 public:
  explicit ConnectionOver(BackendConn& c) : c_(c) {}
  Dialect dialect() const override { return D; }
  using Connection::prepare;
  Stmt prepare(const char* sql) override;
  int64_t changes() const override { return static_cast<int64_t>(c_.changes()); }
  void exec(const std::string& script) override { c_.exec(script.c_str()); }

 private:
  BackendConn& c_;
};

using SqliteConnection = ConnectionOver<sqlite::Conn, Dialect::kSqlite>;
using PgConnection = ConnectionOver<pg::Conn, Dialect::kPostgres>;

// Transactions on `db`, which must outlive the result.
std::unique_ptr<Database> wrap(sqlite::Db& db);
std::unique_ptr<Database> wrap(pg::Db& db);

}  // namespace imago::sql

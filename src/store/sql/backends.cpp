#include "store/sql/backends.h"

namespace imago::sql {

namespace {

template <typename BackendStmt>
class StatementOver final : public Statement {
 public:
  explicit StatementOver(BackendStmt s) : s_(std::move(s)) {}
  void bind_int(int i, int64_t v) override { s_.bind(i, v); }
  void bind_double(int i, double v) override { s_.bind(i, v); }
  void bind_text(int i, std::string_view v) override { s_.bind(i, v); }
  void bind_null(int i) override { s_.bind_null(i); }
  bool step() override { return s_.step(); }
  int64_t col_int(int i) const override { return s_.col_int(i); }
  double col_double(int i) const override { return s_.col_double(i); }
  std::string col_text(int i) const override { return s_.col_text(i); }
  bool col_null(int i) const override { return s_.col_null(i); }

 private:
  BackendStmt s_;
};

template <typename BackendDb, typename BackendConn, Dialect D>
class DatabaseOver final : public Database {
 public:
  explicit DatabaseOver(BackendDb& db) : db_(db) {}
  Dialect dialect() const override { return D; }

 protected:
  Status transact(Tx kind, Work& work) override {
    // The failed Status only tells the backend to roll back; Database::run reports the work's own.
    auto body = [&](BackendConn& c) -> Status {
      ConnectionOver<BackendConn, D> conn(c);
      return work(conn) ? Status::Internal("rolled back") : Status::Ok();
    };
    if (kind == Tx::kRead) return db_.read(body);
    if constexpr (requires { db_.once(body); }) {
      if (kind == Tx::kOnce) return db_.once(body);
    }
    return db_.write(body);
  }

 private:
  BackendDb& db_;
};

}  // namespace

template <typename BackendConn, Dialect D>
Stmt ConnectionOver<BackendConn, D>::prepare(const char* sql) {
  using BackendStmt = decltype(c_.prepare(sql));
  return Stmt(std::make_unique<StatementOver<BackendStmt>>(c_.prepare(sql)));
}
template class ConnectionOver<sqlite::Conn, Dialect::kSqlite>;
template class ConnectionOver<pg::Conn, Dialect::kPostgres>;

std::unique_ptr<Database> wrap(sqlite::Db& db) {
  return std::make_unique<DatabaseOver<sqlite::Db, sqlite::Conn, Dialect::kSqlite>>(db);
}

std::unique_ptr<Database> wrap(pg::Db& db) {
  return std::make_unique<DatabaseOver<pg::Db, pg::Conn, Dialect::kPostgres>>(db);
}

}  // namespace imago::sql

// The shared SQL interface's transaction semantics, the same on both backends: what the work
// returns is what the caller gets, a failed Status or an exception rolls back, a unique violation
// is a conflict, and a statement that names two dialect texts runs the backend's own.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "store/postgres/test_db.h"
#include "store/sql/connection.h"
#include "store/sqlite/test_db.h"

namespace imago::sql {
namespace {

// A migrated database of one backend and the shared interface over it.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Database& db() = 0;
};

template <typename TestDb>
class BackendOver final : public Backend {
 public:
  Database& db() override { return test_db_.db(); }

 private:
  TestDb test_db_;
};

struct BackendFactory {
  std::string name;
  std::function<std::unique_ptr<Backend>()> open;
};

void PrintTo(const BackendFactory& f, std::ostream* os) {
  *os << f.name;
}

class SqlDatabase : public ::testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override { backend_ = GetParam().open(); }
  Database& db() { return backend_->db(); }

  // Inserts a voice row (the table exists on both backends and has a unique code).
  static void insert_voice(Connection& c, const std::string& code) {
    c.prepare(
         "INSERT INTO voices (code, account_id, name, base_voice, created_at, updated_at)"
         " VALUES (?, 'acct', 'n', 'base', 1, 1)")
        .bind(1, code)
        .run();
  }
  int64_t voices_named(const std::string& code) {
    auto n = db().read([&](Connection& c) {
      auto q = c.prepare("SELECT COUNT(*) FROM voices WHERE code = ?");
      q.bind(1, code);
      return q.step() ? q.col_int(0) : -1;
    });
    EXPECT_TRUE(n.ok()) << n.status().message();
    return n.ok() ? *n : -1;
  }

 private:
  std::unique_ptr<Backend> backend_;
};

TEST_P(SqlDatabase, WhatTheWorkReturnsIsWhatTheCallerGets) {
  Result<int64_t> plain = db().read([](Connection& c) {
    auto q = c.prepare("SELECT 41 + 1");
    return q.step() ? q.col_int(0) : int64_t{0};
  });
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(*plain, 42);

  Result<std::string> refused =
      db().read([](Connection&) -> Result<std::string> { return Status::NotFound("no such thing"); });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kNotFound);
  EXPECT_EQ(refused.status().message(), "no such thing");
}

TEST_P(SqlDatabase, AFailedStatusRollsBackAndIsReturnedAsItWas) {
  Status st = db().write([](Connection& c) -> Status {
    insert_voice(c, "rolled-back");
    return Status::InsufficientFunds("not enough");
  });
  EXPECT_EQ(st.code(), Code::kInsufficientFunds);
  EXPECT_EQ(st.message(), "not enough");
  EXPECT_EQ(voices_named("rolled-back"), 0);

  Status ok = db().write([](Connection& c) -> Status {
    insert_voice(c, "kept");
    return Status::Ok();
  });
  EXPECT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(voices_named("kept"), 1);
}

TEST_P(SqlDatabase, AnExceptionRollsBackAndADatabaseErrorBecomesAStatus) {
  // Not a database error: it reaches the caller, after the rollback.
  EXPECT_THROW((void)db().write([](Connection& c) -> int {
    insert_voice(c, "thrown");
    throw std::runtime_error("work gave up");
  }),
               std::runtime_error);
  EXPECT_EQ(voices_named("thrown"), 0);

  Status bad_sql = db().write([](Connection& c) -> Status {
    insert_voice(c, "bad-sql");
    c.prepare("SELECT no_such_column FROM voices").run();
    return Status::Ok();
  });
  EXPECT_EQ(bad_sql.code(), Code::kInternal);
  EXPECT_EQ(voices_named("bad-sql"), 0);
}

TEST_P(SqlDatabase, AUniqueViolationIsAConflict) {
  ASSERT_TRUE(db().write([](Connection& c) -> Status {
                    insert_voice(c, "twice");
                    return Status::Ok();
                  })
                  .ok());
  Status again = db().write([](Connection& c) -> Status {
    insert_voice(c, "twice");
    return Status::Ok();
  });
  EXPECT_EQ(again.code(), Code::kConflict) << again.message();
  EXPECT_EQ(voices_named("twice"), 1);
}

TEST_P(SqlDatabase, AStatementWithTwoDialectTextsRunsTheBackendsOwn) {
  const Dialect dialect = db().dialect();
  EXPECT_EQ(dialect, GetParam().name == "postgres" ? Dialect::kPostgres : Dialect::kSqlite);
  auto r = db().write([](Connection& c) -> Result<std::string> {
    insert_voice(c, "locked");
    auto q = c.prepare(Dialects{"SELECT 'sqlite'", "SELECT 'postgres'"});
    if (!q.step()) return Status::Internal("no row");
    std::string which = q.col_text(0);
    // Locking reads and insertion order parse on both.
    auto lock = c.prepare(IMAGO_SQL_FOR_UPDATE("SELECT code FROM voices WHERE code = ?"));
    lock.bind(1, "locked");
    if (!lock.step()) return Status::Internal("the locking read found nothing");
    auto ordered = c.prepare(IMAGO_SQL_INSERTION_ORDER("SELECT code FROM voices ORDER BY created_at, ", ""));
    if (!ordered.step()) return Status::Internal("the ordered read found nothing");
    return which;
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, dialect == Dialect::kPostgres ? "postgres" : "sqlite");
}

TEST_P(SqlDatabase, ChangesCountsTheRowsOfTheLastWrite) {
  auto changed = db().write([](Connection& c) -> int64_t {
    insert_voice(c, "a");
    insert_voice(c, "b");
    c.prepare("UPDATE voices SET name = 'renamed' WHERE code IN ('a', 'b')").run();
    return c.changes();
  });
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_EQ(*changed, 2);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, SqlDatabase,
    ::testing::Values(
        BackendFactory{"sqlite", [] { return std::unique_ptr<Backend>(new BackendOver<sqlite::TestDb>); }},
        BackendFactory{"postgres", [] { return std::unique_ptr<Backend>(new BackendOver<pg::TestDb>); }}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace imago::sql

// A migrated PostgreSQL database of its own on the test server, for store unit tests (the
// PostgreSQL twin of store/sqlite/test_db.h).
#pragma once
#include <cstdlib>
#include <iostream>
#include <memory>

#include "store/postgres/db.h"
#include "store/postgres/test_postgres.h"
#include "store/sql/schema.h"

namespace imago::pg {

class TestDb {
 public:
  TestDb() {
    auto db = Db::open(database_.url(), 8);
    if (!db.ok()) {
      std::cerr << db.status().message() << "\n";
      std::abort();
    }
    db_ = std::move(db).value();
    if (Status m = sql::migrate(*db_); !m.ok()) {
      std::cerr << m.message() << "\n";
      std::abort();
    }
  }
  ~TestDb() { db_.reset(); }
  Db& db() { return *db_; }
  const std::string& url() const { return database_.url(); }

 private:
  TestDatabase database_;
  std::unique_ptr<Db> db_;
};

}  // namespace imago::pg

// A migrated SQLite database in a fresh temporary directory, for store unit tests.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "store/sql/schema.h"
#include "store/sqlite/db.h"

namespace imago::sqlite {

class TestDb {
 public:
  TestDb() {
    char tmpl[] = "/tmp/imago-store-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto db = Db::open(dir_ + "/test.db", 8);
    if (!db.ok()) std::abort();
    db_ = std::move(db).value();
    if (!sql::migrate(*db_).ok()) std::abort();
  }
  ~TestDb() {
    db_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Db& db() { return *db_; }

 private:
  std::string dir_;
  std::unique_ptr<Db> db_;
};

}  // namespace imago::sqlite

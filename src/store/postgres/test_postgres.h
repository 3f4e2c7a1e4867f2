// The throwaway PostgreSQL of the tests. Under CTest the `postgres` fixture (src/store/CMakeLists.txt)
// starts one server for the whole run (scripts/test_postgres.sh) and writes its URL to a file;
// a test binary run by hand starts its own and stops it at exit. Each TestDatabase is a fresh,
// empty database on that server, dropped at the end. Nothing is ever skipped: without a server
// the test fails with the reason.
#pragma once
#include <string>

namespace imago::pg {

// postgresql://... of the server's maintenance database; aborts the test binary with a message
// when no server can be started.
const std::string& test_server_url();

class TestDatabase {
 public:
  TestDatabase();   // CREATE DATABASE with a random name
  ~TestDatabase();  // DROP DATABASE ... WITH (FORCE)
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;
  const std::string& url() const { return url_; }
  // Leaves the database in place at destruction (it goes with the server at the end of the run):
  // for a data directory that outlives its first server (restart tests).
  void keep() { keep_ = true; }

 private:
  std::string name_;
  std::string url_;
  bool keep_ = false;
};

}  // namespace imago::pg

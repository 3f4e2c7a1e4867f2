#include "store/postgres/test_postgres.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>

#include "util/random.h"

namespace imago::pg {

namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

[[noreturn]] void die(const std::string& why) {
  std::cerr << "test PostgreSQL: " << why << "\n";
  std::abort();
}

struct OwnServer {
  std::string urlfile;
  ~OwnServer() {
    if (urlfile.empty()) return;
    std::string cmd = std::string(IMAGO_TEST_PG_SCRIPT) + " stop " + urlfile + " >/dev/null 2>&1";
    (void)!std::system(cmd.c_str());
  }
};

void exec_admin(const std::string& sql) {
  PGconn* c = PQconnectdb(test_server_url().c_str());
  if (PQstatus(c) != CONNECTION_OK) die(std::string("cannot connect: ") + PQerrorMessage(c));
  PGresult* r = PQexec(c, sql.c_str());
  bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  std::string err = PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(c);
  if (!ok) die(sql + ": " + err);
}

}  // namespace

const std::string& test_server_url() {
  static std::once_flag once;
  static std::string url;
  static OwnServer own;
  std::call_once(once, [] {
    // The CTest fixture's server, when it is up.
    url = read_first_line(IMAGO_TEST_PG_URL_FILE);
    if (!url.empty() && PQping(url.c_str()) == PQPING_OK) return;
    // Run by hand: start a private one for this process.
    own.urlfile = "/tmp/imago-pg-own-" + std::to_string(::getpid()) + ".url";
    std::string cmd = std::string(IMAGO_TEST_PG_SCRIPT) + " start " + own.urlfile;
    if (std::system(cmd.c_str()) != 0)
      die("'" + cmd + "' failed (is postgresql-15 installed? scripts/setup.sh)");
    url = read_first_line(own.urlfile);
    if (url.empty()) die("no URL in " + own.urlfile);
  });
  return url;
}

TestDatabase::TestDatabase() {
  const std::string& server = test_server_url();
  name_ = "imago_t_" + random_hex(8);
  exec_admin("CREATE DATABASE " + name_ + " STRATEGY = FILE_COPY");
  auto slash = server.rfind('/');
  url_ = server.substr(0, slash + 1) + name_;
}

TestDatabase::~TestDatabase() {
  if (!keep_) exec_admin("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
}

}  // namespace imago::pg

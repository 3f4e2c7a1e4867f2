// Black-box test support: starts the real `imagod serve` on an ephemeral port with a temporary
// data directory, and talks to it over real HTTP (libcurl).
#pragma once
#include <boost/json.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace imago::pg {
class TestDatabase;
}

namespace imago::testing {

// True when this test process runs the black-box suite against PostgreSQL
// (IMAGO_TEST_BACKEND=postgres, set by CTest for the "pg." copy of the suite).
bool testing_postgres();

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  boost::json::value json() const;  // parses body; null when it is not JSON
  std::string header(const std::string& lower_name) const;
};

struct HttpRequestOptions {
  std::map<std::string, std::string> headers;
  std::string content_type = "application/json";
  long timeout_ms = 30000;
  std::string
      ca_file;  // https: trust this PEM (a test's self-signed certificate); peer and host are verified
};

// A minimal synchronous HTTP/1.1 client.
HttpResponse http_request(const std::string& method, const std::string& url, const std::string& body = "",
                          const HttpRequestOptions& opts = {});

struct TestAccount {
  std::string account_id;
  std::string api_secret;
};

// The server gets SIGTERM when the thread that created the TestServer exits (PR_SET_PDEATHSIG),
// so a crashed or killed test never leaves imagod running: create it on the test's own thread.
class TestServer {
 public:
  // Extra flags for `imagod serve` and extra environment variables. Under testing_postgres() a
  // server without its own --database gets a fresh PostgreSQL database, tied to its data directory.
  explicit TestServer(std::vector<std::string> extra_args = {}, std::map<std::string, std::string> env = {});
  // Reuses an existing data directory (restart tests).
  TestServer(const std::string& data_dir, std::vector<std::string> extra_args,
             std::map<std::string, std::string> env);
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  const std::string& url() const { return url_; }  // "http://127.0.0.1:PORT" ("https://" with --tls-cert)
  // With --tls-cert: the certificate, trusted by this server's own requests (request(), admin()).
  const std::string& ca_file() const { return ca_file_; }
  int port() const { return port_; }
  const std::string& data_dir() const { return data_dir_; }
  const std::string& admin_token() const { return admin_token_; }
  int pid() const { return pid_; }

  // Convenience calls. `secret` goes in the api-secret header when not empty.
  HttpResponse get(const std::string& path, const std::string& secret = "") const;
  HttpResponse post(const std::string& path, const std::string& body, const std::string& secret = "") const;
  HttpResponse put(const std::string& path, const std::string& body, const std::string& secret = "") const;
  HttpResponse del(const std::string& path, const std::string& secret = "") const;
  HttpResponse request(const std::string& method, const std::string& path, const std::string& body,
                       const std::string& secret, HttpRequestOptions opts = {}) const;
  HttpResponse admin(const std::string& method, const std::string& path, const std::string& body = "") const;

  // Creates an account through the admin API.
  TestAccount create_account(const std::string& plan = "free", long long credits = 1000,
                             const std::string& name = "test");

  void stop(int signal = 15);  // SIGTERM by default; waits for exit
  void kill9();                // SIGKILL, no cleanup (crash tests)
  int wait_exit();             // exit status after stop()

 private:
  void start(std::vector<std::string> extra_args, std::map<std::string, std::string> env);
  std::string data_dir_;
  bool own_dir_ = false;
  std::string url_;
  std::string admin_token_;
  std::string ca_file_;
  int port_ = 0;
  int pid_ = -1;
  int exit_status_ = -1;
  std::unique_ptr<pg::TestDatabase> database_;
};

// Path of the built imagod binary.
std::string imagod_path();
// The tests/ folder of the source tree: $IMAGO_TESTS_DIR (set by CTest), else the compile-time
// IMAGO_TESTS_DIR. ccache's base_dir rewrites an absolute -D path into one relative to the build
// directory, which breaks once a test runs elsewhere, so the environment comes first.
std::string tests_dir();
// A fresh temporary directory, removed by the caller (or TestServer) when done.
std::string make_temp_dir();
// Installs the npm packages of `dir` (tests/node, tests/browser) once: `npm ci` under an flock on
// dir/.npm-install.lock, finished by a marker inside node_modules (a copy of package-lock.json:
// a changed lock file installs again). Several tests share one
// folder and CTest runs them in parallel; without the lock one test ran node against the half
// written node_modules of another's `npm ci`. Browsers are never downloaded (Debian's chromium).
// Returns false (after npm's own output) when the install fails.
bool ensure_node_packages(const std::string& dir);

// Runs a shell command; its exit status, or -1 when it did not exit normally.
int run_command(const std::string& cmd);

}  // namespace imago::testing

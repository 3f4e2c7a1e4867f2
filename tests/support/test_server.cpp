#include "test_server.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "store/postgres/test_postgres.h"
#include "util/random.h"

extern char** environ;

namespace imago::testing {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim_crlf(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* res = static_cast<HttpResponse*>(user);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    res->headers.clear();  // a new status line (after "100 Continue"): keep only the final headers
  } else if (auto colon = line.find(':'); colon != std::string::npos) {
    res->headers[lower(line.substr(0, colon))] = trim_crlf(line.substr(colon + 1));
  }
  return size * n;
}

void curl_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The last `lines` lines of a file, for error messages.
std::string tail_of(const std::string& path, size_t lines = 40) {
  std::ifstream in(path);
  if (!in) return "(no log at " + path + ")";
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += all[i] + "\n";
  return out.empty() ? "(empty log)" : out;
}

// waitpid with a deadline; returns true when the process was reaped (status in *status).
bool wait_for(int pid, int* status, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int r = waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not our child any more
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// fork + exec rather than posix_spawn, for two things posix_spawn cannot do: the server gets
// SIGTERM when the test process dies (a crashed or timed-out test never leaves imagod running),
// and it inherits no descriptor but stdin/stdout/stderr (a leaked pipe end would keep the test
// runner's output pipe open). Returns the pid, or -errno when exec failed.
pid_t spawn_server(char* const* argv, char* const* envp, const std::string& log_path) {
  int report[2];  // the child writes errno here if exec fails; closed by a successful exec
  if (pipe2(report, O_CLOEXEC) != 0) return -errno;
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(report[0]);
    close(report[1]);
    return -e;
  }
  if (pid == 0) {
    // Child of a multithreaded process: only async-signal-safe calls until execve.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the test died before prctl took effect
    int in = open("/dev/null", O_RDONLY);
    int out = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || out < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
        dup2(out, STDERR_FILENO) < 0) {
      int e = errno;
      (void)!write(report[1], &e, sizeof e);
      _exit(127);
    }
    // Everything above stderr closes at exec, including `report[1]` (already close-on-exec).
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {  // kernels before 5.11: close now
      close_range(3, static_cast<unsigned>(report[1]) - 1, 0);
      close_range(static_cast<unsigned>(report[1]) + 1, ~0U, 0);
    }
    execve(argv[0], argv, envp);
    int e = errno;
    (void)!write(report[1], &e, sizeof e);
    _exit(127);
  }
  close(report[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int st = 0;
    waitpid(pid, &st, 0);
    return -child_errno;
  }
  return pid;
}

}  // namespace

boost::json::value HttpResponse::json() const {
  boost::system::error_code ec;
  auto v = boost::json::parse(body, ec);
  if (ec) return nullptr;
  return v;
}

std::string HttpResponse::header(const std::string& lower_name) const {
  auto it = headers.find(lower(lower_name));
  return it == headers.end() ? "" : it->second;
}

HttpResponse http_request(const std::string& method, const std::string& url, const std::string& body,
                          const HttpRequestOptions& opts) {
  curl_init_once();
  HttpResponse res;
  CURL* curl = curl_easy_init();
  if (!curl) {
    res.body = "curl_easy_init failed";
    return res;
  }
  curl_slist* headers = nullptr;
  for (const auto& [k, v] : opts.headers) headers = curl_slist_append(headers, (k + ": " + v).c_str());
  if (!body.empty() && !opts.content_type.empty() && !opts.headers.count("Content-Type") &&
      !opts.headers.count("content-type")) {
    headers = curl_slist_append(headers, ("Content-Type: " + opts.content_type).c_str());
  }
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, opts.timeout_ms);
  if (method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (method != "GET" || !body.empty()) {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  }
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  if (!opts.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, opts.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &res.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &res);
  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &res.status);
  } else {
    res.status = 0;  // transport failure: the reason is in the body for assertion messages
    res.body = std::string("curl: ") + curl_easy_strerror(rc);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return res;
}

std::string imagod_path() {
  if (const char* p = std::getenv("IMAGO_IMAGOD"); p && *p) return p;  // test another build
#ifdef IMAGO_IMAGOD_PATH
  return IMAGO_IMAGOD_PATH;
#else
  return "imagod";
#endif
}

std::string make_temp_dir() {
  std::string tmpl = "/tmp/imago-test-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  return tmpl;
}

bool testing_postgres() {
  const char* b = std::getenv("IMAGO_TEST_BACKEND");
  return b && std::string_view(b) == "postgres";
}

TestServer::TestServer(std::vector<std::string> extra_args, std::map<std::string, std::string> env)
    : data_dir_(make_temp_dir()), own_dir_(true) {
  start(std::move(extra_args), std::move(env));
}

TestServer::TestServer(const std::string& data_dir, std::vector<std::string> extra_args,
                       std::map<std::string, std::string> env)
    : data_dir_(data_dir), own_dir_(false) {
  start(std::move(extra_args), std::move(env));
}

TestServer::~TestServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    if (!wait_for(pid_, &status, std::chrono::seconds(10))) {
      ::kill(pid_, SIGKILL);
      wait_for(pid_, &status, std::chrono::seconds(10));
    }
    pid_ = -1;
  }
  if (own_dir_ && !std::getenv("IMAGO_KEEP_TEST_DIRS")) {
    std::error_code ec;
    std::filesystem::remove_all(data_dir_, ec);
  }
  database_.reset();  // drops the database (unless kept with its directory)
}

void TestServer::start(std::vector<std::string> extra_args, std::map<std::string, std::string> env) {
  admin_token_ = random_hex(32);
  const std::string log_path = data_dir_ + "/imagod.log";
  std::error_code fs_ec;
  std::filesystem::create_directories(data_dir_, fs_ec);
  // A restarted server appends to the same log: only lines after this offset are its own.
  std::uintmax_t log_offset = std::filesystem::exists(log_path) ? std::filesystem::file_size(log_path) : 0;

  std::vector<std::string> args = {imagod_path(), "serve",   "--listen",       "127.0.0.1:0",
                                   "--data-dir",  data_dir_, "--no-bootstrap", "--allow-private-fetch"};
  if (testing_postgres() &&
      std::find(extra_args.begin(), extra_args.end(), "--database") == extra_args.end()) {
    // The database belongs to the data directory: a restart on the same directory finds it again.
    const std::string url_file = data_dir_ + "/test-database.url";
    std::string db_url;
    if (std::ifstream in(url_file); in) std::getline(in, db_url);
    if (db_url.empty()) {
      database_ = std::make_unique<pg::TestDatabase>();
      if (!own_dir_) database_->keep();
      db_url = database_->url();
      std::ofstream(url_file) << db_url << "\n";
    }
    args.push_back("--database");
    args.push_back(db_url);
  }
  if (auto it = std::find(extra_args.begin(), extra_args.end(), "--tls-cert");
      it != extra_args.end() && it + 1 != extra_args.end()) {
    ca_file_ = *(it + 1);
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());

  // The child sees the parent's environment minus any IMAGO_* setting (a developer's shell must not
  // change what a test runs against), plus the admin token and the test's own variables.
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos || kv.rfind("IMAGO_", 0) == 0) continue;
    vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  vars["IMAGO_ADMIN_TOKEN"] = admin_token_;
  for (auto& [k, v] : env) vars[k] = v;
  std::vector<std::string> env_strings;
  for (auto& [k, v] : vars) env_strings.push_back(k + "=" + v);

  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = spawn_server(argv.data(), envp.data(), log_path);
  if (pid < 0) {
    if (own_dir_ && !std::getenv("IMAGO_KEEP_TEST_DIRS")) {
      std::error_code ec;
      std::filesystem::remove_all(data_dir_, ec);
      own_dir_ = false;  // the constructor throws: the destructor will not run
    }
    throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(static_cast<int>(-pid)));
  }
  pid_ = pid;
  exit_status_ = -1;

  auto fail = [&](const std::string& why) {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int st = 0;
      wait_for(pid_, &st, std::chrono::seconds(5));
      pid_ = -1;
    }
    std::string msg = "imagod did not start (" + why + "); tail of " + log_path + ":\n" + tail_of(log_path);
    if (own_dir_ && !std::getenv("IMAGO_KEEP_TEST_DIRS")) {
      std::error_code ec;
      std::filesystem::remove_all(data_dir_, ec);
      own_dir_ = false;  // the constructor throws: the destructor will not run
    }
    throw std::runtime_error(msg);
  };

  // Wait for {"event":"listening","port":N} in the log, the server's readiness signal.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string pending;
  std::ifstream log;
  for (;;) {
    if (!log.is_open()) {
      log.open(log_path, std::ios::binary);
      if (log.is_open()) log.seekg(static_cast<std::streamoff>(log_offset));
    }
    if (log.is_open()) {
      char buf[4096];
      log.clear();
      while (log.read(buf, sizeof buf) || log.gcount() > 0)
        pending.append(buf, static_cast<size_t>(log.gcount()));
      size_t nl;
      while ((nl = pending.find('\n')) != std::string::npos) {
        std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        if (line.find("\"listening\"") == std::string::npos) continue;
        boost::system::error_code ec;
        auto v = boost::json::parse(line, ec);
        if (ec || !v.is_object()) continue;
        auto& o = v.as_object();
        auto* ev = o.if_contains("event");
        auto* port = o.if_contains("port");
        if (ev && ev->is_string() && ev->as_string() == "listening" && port && port->is_int64()) {
          port_ = static_cast<int>(port->as_int64());
          url_ =
              std::string(ca_file_.empty() ? "http://" : "https://") + "127.0.0.1:" + std::to_string(port_);
          return;
        }
      }
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      fail(WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                             : "killed by signal " + std::to_string(WTERMSIG(status)));
    }
    if (std::chrono::steady_clock::now() >= deadline) fail("no \"listening\" line within 20 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

namespace {

// API traffic log (docs/openapi.yaml's check): while IMAGO_API_TRAFFIC_DIR exists, every request a
// TestServer sends to imagod and its answer become one JSON line in DIR/traffic-<pid>.jsonl, which
// tests/openapi/validate_traffic.mjs checks against the document after the suite. One file per
// process, so the parallel test processes never interleave their lines.
void record_traffic(const std::string& method, const std::string& path, const std::string& body,
                    const HttpRequestOptions& opts, const HttpResponse& res) {
  static const std::string dir = [] {
    const char* e = std::getenv("IMAGO_API_TRAFFIC_DIR");
#ifdef IMAGO_API_TRAFFIC_DIR
    if (!e || !*e) e = IMAGO_API_TRAFFIC_DIR;
#endif
    return std::string(e ? e : "");
  }();
  // Only while the directory exists: CTest's openapi.traffic_reset makes it for a run.
  if (dir.empty() || res.status == 0 || !std::filesystem::is_directory(dir)) return;
  boost::json::object line{{"method", method}, {"status", res.status}};
  const size_t q = path.find('?');
  line["path"] = path.substr(0, q);
  line["query"] = q == std::string::npos ? "" : path.substr(q + 1);
  boost::json::object req_headers;
  for (const auto& [k, v] : opts.headers) {
    const std::string name = lower(k);
    // Credentials are recorded as present, never by value.
    req_headers[name] = (name == "api-secret" || name == "authorization") ? std::string("<set>") : v;
  }
  std::string content_type = opts.content_type;
  if (req_headers.contains("content-type"))
    content_type = std::string(req_headers["content-type"].as_string());
  if (!body.empty()) {
    req_headers["content-type"] = content_type;
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(body, ec);
    if (!ec && content_type.rfind("application/json", 0) == 0) {
      line["body"] = v;
    } else {
      line["body_size"] = body.size();
      line["body_valid_json"] = !ec;
    }
  }
  line["request_headers"] = req_headers;
  boost::json::object res_headers;
  for (const auto& [k, v] : res.headers) res_headers[k] = v;
  line["response_headers"] = res_headers;
  const std::string type = res.header("content-type");
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(res.body, ec);
  if (!ec && type.rfind("application/json", 0) == 0) {
    line["response_body"] = v;
  } else {
    line["response_body_size"] = res.body.size();
  }
  const std::string text = boost::json::serialize(line) + "\n";
  const std::string file = dir + "/traffic-" + std::to_string(::getpid()) + ".jsonl";
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (FILE* f = std::fopen(file.c_str(), "a")) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
}

}  // namespace

HttpResponse TestServer::request(const std::string& method, const std::string& path, const std::string& body,
                                 const std::string& secret, HttpRequestOptions opts) const {
  if (!secret.empty()) opts.headers["api-secret"] = secret;
  if (opts.ca_file.empty()) opts.ca_file = ca_file_;
  HttpResponse res = http_request(method, url_ + path, body, opts);
  record_traffic(method, path, body, opts, res);
  return res;
}

HttpResponse TestServer::get(const std::string& path, const std::string& secret) const {
  return request("GET", path, "", secret);
}

HttpResponse TestServer::post(const std::string& path, const std::string& body,
                              const std::string& secret) const {
  return request("POST", path, body, secret);
}

HttpResponse TestServer::put(const std::string& path, const std::string& body,
                             const std::string& secret) const {
  return request("PUT", path, body, secret);
}

HttpResponse TestServer::del(const std::string& path, const std::string& secret) const {
  return request("DELETE", path, "", secret);
}

HttpResponse TestServer::admin(const std::string& method, const std::string& path,
                               const std::string& body) const {
  HttpRequestOptions opts;
  opts.headers["Authorization"] = "Bearer " + admin_token_;
  opts.ca_file = ca_file_;
  HttpResponse res = http_request(method, url_ + path, body, opts);
  record_traffic(method, path, body, opts, res);
  return res;
}

TestAccount TestServer::create_account(const std::string& plan, long long credits, const std::string& name) {
  boost::json::object req{{"name", name}, {"plan", plan}, {"credits", credits}};
  HttpResponse r = admin("POST", "/admin/v1/accounts", boost::json::serialize(req));
  auto v = r.json();
  if (r.status != 201 || !v.is_object()) {
    throw std::runtime_error("create_account: HTTP " + std::to_string(r.status) + ": " + r.body);
  }
  auto& o = v.as_object();
  auto* id = o.if_contains("account_id");
  auto* secret = o.if_contains("api_secret");
  if (!id || !id->is_string() || !secret || !secret->is_string()) {
    throw std::runtime_error("create_account: unexpected body: " + r.body);
  }
  return TestAccount{std::string(id->as_string()), std::string(secret->as_string())};
}

void TestServer::stop(int signal) {
  if (pid_ <= 0) return;
  ::kill(pid_, signal);
  int status = 0;
  if (!wait_for(pid_, &status, std::chrono::seconds(30))) {
    // A server that ignores the signal fails the test through its exit status, not by hanging it.
    ::kill(pid_, SIGKILL);
    wait_for(pid_, &status, std::chrono::seconds(10));
  }
  exit_status_ = status;
  pid_ = -1;
}

void TestServer::kill9() {
  stop(SIGKILL);
}

int TestServer::wait_exit() {
  if (pid_ > 0) {
    int status = 0;
    waitpid(pid_, &status, 0);
    exit_status_ = status;
    pid_ = -1;
  }
  if (exit_status_ < 0) return -1;
  if (WIFEXITED(exit_status_)) return WEXITSTATUS(exit_status_);
  if (WIFSIGNALED(exit_status_)) return 128 + WTERMSIG(exit_status_);
  return -1;
}

std::string tests_dir() {
  if (const char* e = std::getenv("IMAGO_TESTS_DIR"); e && *e) return e;
#ifdef IMAGO_TESTS_DIR
  return IMAGO_TESTS_DIR;
#else
  return "tests";
#endif
}

bool ensure_node_packages(const std::string& dir) {
  // The check runs under the lock too: a folder another test is installing into is never taken
  // as installed. npm ci empties node_modules first, so the marker exists only after a whole run;
  // it is a copy of the lock file it installed, so a changed package-lock.json installs again.
  std::string cmd =
      "cd '" + dir +
      "' && flock .npm-install.lock sh -c 'cmp -s package-lock.json node_modules/.imago-installed || "
      "(PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error && "
      "cp package-lock.json node_modules/.imago-installed)'";
  return run_command(cmd) == 0;
}

int run_command(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

}  // namespace imago::testing

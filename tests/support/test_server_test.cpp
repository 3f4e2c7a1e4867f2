// Tests of the black-box harness itself (start, readiness, accounts, stop, restart, failure
// reporting) and of the HTTP layer's edge cases as the real imagod serves them.
#include "support/test_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace imago::testing {
namespace {

// Sends raw bytes on a fresh connection and returns everything the server answers until it closes.
std::string raw_exchange(int port, const std::string& data) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    (void)!::write(fd, data.data(), data.size());
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

TEST(Harness, StartsOnAnEphemeralPortAndServes) {
  TestServer s;
  EXPECT_GT(s.port(), 0);
  EXPECT_EQ(s.url(), "http://127.0.0.1:" + std::to_string(s.port()));
  EXPECT_GT(s.pid(), 0);
  EXPECT_TRUE(std::filesystem::exists(s.data_dir() + "/imagod.log"));
  EXPECT_EQ(s.admin_token().size(), 64u);
  auto r = s.get("/healthz");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.header("x-request-id").empty());
  EXPECT_FALSE(r.header("X-Request-Id").empty());  // lookup is case-insensitive
  EXPECT_TRUE(r.json().is_object());
}

TEST(Harness, TwoServersGetDifferentPortsAndDirs) {
  TestServer a, b;
  EXPECT_NE(a.port(), b.port());
  EXPECT_NE(a.data_dir(), b.data_dir());
}

TEST(Harness, DataDirIsRemovedWhenOwned) {
  std::string dir;
  {
    TestServer s;
    dir = s.data_dir();
    EXPECT_TRUE(std::filesystem::is_directory(dir));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(Harness, CreateAccountGivesAWorkingSecret) {
  TestServer s;
  auto acct = s.create_account("pro", 500, "Harness");
  EXPECT_FALSE(acct.account_id.empty());
  EXPECT_FALSE(acct.api_secret.empty());
  auto v = s.post("/v1/validate", "", acct.api_secret);
  EXPECT_EQ(v.status, 200) << v.body;
  EXPECT_EQ(v.json().at("valid").as_bool(), true);
  auto me = s.get("/v1/me", acct.api_secret);
  EXPECT_EQ(me.status, 200) << me.body;
}

TEST(Harness, AdminCallsCarryTheToken) {
  TestServer s;
  EXPECT_EQ(s.admin("GET", "/admin/v1/accounts").status, 200);
  EXPECT_EQ(s.get("/admin/v1/accounts").status, 401);  // without the token
}

TEST(Harness, SigtermExitsCleanly) {
  TestServer s;
  ASSERT_EQ(s.get("/healthz").status, 200);
  s.stop(SIGTERM);
  EXPECT_EQ(s.wait_exit(), 0);
  EXPECT_EQ(s.get("/healthz").status, 0);  // nobody listens any more
}

TEST(Harness, SigintExitsCleanly) {
  TestServer s;
  s.stop(SIGINT);
  EXPECT_EQ(s.wait_exit(), 0);
}

TEST(Harness, Kill9IsReportedAsSignal) {
  TestServer s;
  s.kill9();
  EXPECT_EQ(s.wait_exit(), 128 + SIGKILL);
}

TEST(Harness, RestartOnTheSameDataDirKeepsAccounts) {
  TestServer first;
  auto acct = first.create_account("free", 10);
  first.stop();
  ASSERT_EQ(first.wait_exit(), 0);
  TestServer second(first.data_dir(), {}, {});
  auto v = second.post("/v1/validate", "", acct.api_secret);
  EXPECT_EQ(v.status, 200);
  EXPECT_EQ(v.json().at("valid").as_bool(), true);
}

TEST(Harness, StartupFailureReportsTheLogTail) {
  try {
    TestServer s({"--definitely-not-a-flag"});
    FAIL() << "imagod accepted an unknown flag";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("imagod did not start"), std::string::npos) << what;
    EXPECT_NE(what.find("definitely-not-a-flag"), std::string::npos) << "log tail missing: " << what;
  }
}

// State letter from /proc/PID/stat, or 0 when the process is gone.
char proc_state(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  auto close_paren = stat.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < stat.size() ? stat[close_paren + 2] : 0;
}

TEST(Harness, ServerDoesNotOutliveACrashedTestProcess) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a "test process" that dies without running any destructor
    close(fds[0]);
    try {
      auto* s = new TestServer();
      std::string msg = std::to_string(s->pid()) + " " + s->data_dir();
      (void)!write(fds[1], msg.data(), msg.size());
    } catch (...) {
    }
    _exit(0);
  }
  close(fds[1]);
  char buf[512] = {};
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int st = 0;
  waitpid(child, &st, 0);
  ASSERT_GT(n, 0) << "the child could not start a server";
  int server_pid = 0;
  char dir[400] = {};
  ASSERT_EQ(sscanf(buf, "%d %399s", &server_pid, dir), 2);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {  // 10 s
    char state = proc_state(server_pid);
    gone = state == 0 || state == 'Z';  // a zombie waits for a reaper, but it has exited
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "imagod " << server_pid << " still runs after its test process died";
  if (!gone) kill(server_pid, SIGKILL);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST(Harness, MissingBinaryIsReportedClearly) {
  setenv("IMAGO_IMAGOD", "/nonexistent/imagod", 1);
  std::string what;
  try {
    TestServer s;
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  unsetenv("IMAGO_IMAGOD");
  EXPECT_NE(what.find("/nonexistent/imagod"), std::string::npos) << what;
  EXPECT_NE(what.find("No such file"), std::string::npos) << what;
}

TEST(Harness, ImagodIsBuilt) {
  EXPECT_TRUE(std::filesystem::exists(imagod_path())) << imagod_path();
}

// ---- the HTTP layer as imagod serves it ----

TEST(HttpEdge, GarbageGets400EnvelopeAndRequestId) {
  TestServer s;
  std::string out = raw_exchange(s.port(), "BLAH\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 400", 0), 0u) << out;
  EXPECT_NE(out.find("\"code\":\"BAD_REQUEST\""), std::string::npos) << out;
  EXPECT_NE(out.find("X-Request-Id: "), std::string::npos) << out;
  EXPECT_EQ(s.get("/healthz").status, 200);  // and the server lives on
}

TEST(HttpEdge, HugeHeaderGets431) {
  TestServer s;
  HttpRequestOptions o;
  o.headers["X-Big"] = std::string(64 * 1024, 'h');
  auto r = s.request("GET", "/healthz", "", "", o);
  EXPECT_EQ(r.status, 431) << r.body;
  EXPECT_EQ(r.json().at("error").at("code").as_string(), "HEADER_TOO_LARGE");
  EXPECT_FALSE(r.header("x-request-id").empty());
}

TEST(HttpEdge, OversizedBodyGets413BeforeAuthentication) {
  TestServer s;
  auto r = s.post("/v1/validate", std::string(3 * 1024 * 1024, 'x'), "imago_sk_whatever");
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_EQ(r.json().at("error").at("code").as_string(), "PAYLOAD_TOO_LARGE");
  EXPECT_EQ(r.header("connection"), "close");
}

TEST(HttpEdge, PipelinedRequestsComeBackInOrder) {
  TestServer s;
  std::string req;
  for (int i = 0; i < 3; ++i) {
    req += "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipe-" + std::to_string(i) + "\r\n";
    req += i == 2 ? "Connection: close\r\n\r\n" : "\r\n";
  }
  std::string out = raw_exchange(s.port(), req);
  size_t p0 = out.find("pipe-0"), p1 = out.find("pipe-1"), p2 = out.find("pipe-2");
  ASSERT_NE(p0, std::string::npos) << out;
  ASSERT_NE(p1, std::string::npos) << out;
  ASSERT_NE(p2, std::string::npos) << out;
  EXPECT_LT(p0, p1);
  EXPECT_LT(p1, p2);
}

}  // namespace
}  // namespace imago::testing

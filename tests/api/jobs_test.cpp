// Separate worker processes: `imagod serve --no-workers` queues, `imagod worker` runs the jobs.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include "fixtures/fixture.h"
#include "support/test_server.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

TEST(Jobs, ServeWithoutWorkersQueuesAndAWorkerProcessRunsTheJobs) {
  TestServer s({"--no-workers"});
  auto acct = s.create_account("enterprise", 1000);
  auto r = s.post("/v1/agent/generate", R"({"prompt": "queued"})", acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string code = str(r.json(), "agent_id");
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_EQ(str(s.get("/v1/agent/status/" + code, acct.api_secret).json().at("data"), "status"),
            "processing");

  std::vector<std::string> args = {
      imagod_path(),           "worker",        "--data-dir", s.data_dir(), "--public-url", s.url(),
      "--allow-private-fetch", "--job-workers", "1"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string log = s.data_dir() + "/worker.log";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);

  auto st = wait_agent(s, acct.api_secret, code, 60);
  EXPECT_EQ(str(st, "status"), "ready") << json::serialize(st) << "\n" << read_file(log);
  EXPECT_EQ(str(st, "model_url").rfind(s.url() + "/v1/files/", 0), 0u);
  EXPECT_EQ(s.get(str(st, "model_url").substr(s.url().size()), acct.api_secret).status, 200);

  // SIGTERM: the worker stops claiming, finishes, and exits cleanly.
  ::kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_file(log);
}

}  // namespace
}  // namespace imago::testing

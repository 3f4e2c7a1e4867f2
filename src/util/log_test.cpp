#include "util/log.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <string>
#include <vector>

namespace imago {
namespace {

// The buffered mode in a child process whose stdout is a pipe: every line arrives, in the order
// logged, and a normal exit writes what was still pending.
TEST(Log, BufferedLinesKeepTheirOrderAndExitWritesTheRest) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    log::set_buffered();
    for (int i = 0; i < 2000; ++i) log::info("tick", {{"i", i}});
    log::warn("warned", {{"i", 2000}});  // written at once, after what was pending
    for (int i = 2001; i < 2010; ++i) log::info("tick", {{"i", i}});
    std::exit(0);  // atexit stops the writer and writes the rest
  }
  close(fds[1]);
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(out.substr(at, nl - at));
  ASSERT_EQ(lines.size(), 2010u);
  for (int i = 0; i < 2010; ++i) {
    auto v = boost::json::parse(lines[size_t(i)]).as_object();
    EXPECT_EQ(v.at("i").as_int64(), i) << lines[size_t(i)];
    EXPECT_EQ(v.at("event").as_string(), i == 2000 ? "warned" : "tick");
  }
}

}  // namespace
}  // namespace imago

// Streamed responses whose clients leave mid-stream (docs/http.md, "Streamed responses"): 32
// streams of POST /v1/tts and of POST /v1/audio/speech (SSE) that are never read, then reset.
// The server keeps serving, no source runs after it was released, and SIGTERM exits cleanly.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "support/test_server.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

// Sends the request and reads only the response's header (small reads, a small receive
// buffer), so the body stays unread. Returns the socket (-1 when refused).
int start_unread_stream(int port, const std::string& path, const std::string& body,
                        const std::string& secret) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  timeval tv{30, 0};  // a missing response fails the test rather than hanging it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  std::string req =
      "POST " + path +
      " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\napi-secret: " + secret +
      "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos && recv(fd, &c, 1, 0) == 1) head += c;
  return fd;
}

// Closes with a reset (SO_LINGER 0): the server's pending write fails at once.
void reset(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

int count_in_log(const TestServer& s, const std::string& needle) {
  std::ifstream in(s.data_dir() + "/imagod.log");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(needle) != std::string::npos;
  return n;
}

std::string long_text() {
  std::string t;
  for (int i = 0; i < 12; ++i)
    t += "This is sentence number " + std::to_string(i) +
         " of a long answer that the client will never hear. ";
  return t;
}

// Finding: a reset during a streamed response released its source while the producer was still
// running it (970 of 976 resets logged stream_source_threw: bad_function_call; some crashed the
// node with a bus error in the speech stream's next()).
TEST(StreamAbort, ResetStreamsOfTtsAndSpeechSseLeaveTheServerWhole) {
  TestServer s;
  auto acct = s.create_account("enterprise", 100000);
  const std::string text = long_text();
  const std::string tts = json::serialize(json::object{{"text", text}, {"stream", true}});
  const std::string sse = json::serialize(
      json::object{{"model", "tts-1"}, {"input", text}, {"voice", "alloy"}, {"stream_format", "sse"}});
  for (int round = 0; round < 3; ++round) {
    std::vector<int> fds;
    for (int i = 0; i < 32; ++i) {
      const bool speech = i % 2 == 1;
      int fd = start_unread_stream(s.port(), speech ? "/v1/audio/speech" : "/v1/tts", speech ? sse : tts,
                                   acct.api_secret);
      ASSERT_GE(fd, 0) << "connection refused: the server is gone";
      fds.push_back(fd);
    }
    for (int fd : fds) reset(fd);
    // Still serving (and, below, still the same process).
    auto r = s.get("/v1/voices", acct.api_secret);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  ASSERT_EQ(kill(s.pid(), 0), 0) << "imagod died";
  s.stop();
  EXPECT_EQ(s.wait_exit(), 0);
  EXPECT_EQ(count_in_log(s, "stream_source_threw"), 0) << "a source was called after it was released";
}

}  // namespace
}  // namespace imago::testing

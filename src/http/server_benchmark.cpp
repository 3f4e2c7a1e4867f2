// What clients that never read cost everyone else (the figure the black-box test
// HttpCoreStalled.NeverReadingStreamClientsDoNotSlowOtherRequests used to assert in
// milliseconds): round trips of a small request on a keep-alive connection while N clients hold
// endless streamed responses without reading them, on one I/O thread, one worker and one stream
// thread. Reported: mean (the benchmark's time) and the p99 of the round trips, in microseconds,
// for an inline route and a worker-pool route.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"

namespace imago::http {
namespace {

class BenchDispatcher : public Dispatcher {
 public:
  RouteInfo route_info(std::string_view, std::string_view path) const override {
    RouteInfo info;
    if (path == "/inline") info.pool = HandlerPool::kInline;
    return info;
  }
  Response dispatch(Request& req) override {
    if (req.path == "/endless") {
      Response r = Response::bytes(200, "application/octet-stream", "");
      r.stream = []() -> std::optional<std::string> { return std::string(16 * 1024, 'x'); };
      return r;
    }
    return Response::bytes(200, "text/plain", "ok");
  }
};

int connect_to(int port, int rcvbuf) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads one response with a Content-Length body; false on error.
bool read_response(int fd, std::string& buf) {
  buf.clear();
  char tmp[4096];
  size_t head_end = std::string::npos;
  size_t need = 0;
  for (;;) {
    if (head_end == std::string::npos) {
      head_end = buf.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        auto cl = buf.find("Content-Length: ");
        if (cl == std::string::npos) return false;
        need = head_end + 4 + std::stoul(buf.substr(cl + 16));
      }
    }
    if (head_end != std::string::npos && buf.size() >= need) return true;
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
  }
}

double p99(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(v.size())));
  return v[std::max<size_t>(rank, 1) - 1];
}

// Arg 0: stalled streaming clients; arg 1: 0 = inline route, 1 = worker-pool route.
void BM_RoundTripWithStalledStreams(benchmark::State& state) {
  BenchDispatcher dispatcher;
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.handle_signals = false;
  o.io_threads = 1;
  o.worker_threads = 1;
  o.stream_threads = 1;
  o.write_timeout_s = 3600;
  Server server(o, dispatcher);
  if (!server.listen().ok()) {
    state.SkipWithError("listen failed");
    return;
  }
  std::thread runner([&] { server.run(); });
  std::vector<int> stalled;
  for (int64_t i = 0; i < state.range(0); ++i) {
    int fd = connect_to(server.port(), 4096);
    if (fd >= 0 && send_all(fd, "GET /endless HTTP/1.1\r\nHost: t\r\n\r\n")) stalled.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let their buffers fill
  const std::string req =
      std::string("GET ") + (state.range(1) == 0 ? "/inline" : "/echo") + " HTTP/1.1\r\nHost: t\r\n\r\n";
  int fd = connect_to(server.port(), 0);
  std::string buf;
  std::vector<double> us;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    if (!send_all(fd, req) || !read_response(fd, buf)) {
      state.SkipWithError("request failed");
      break;
    }
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  state.counters["p99_us"] = p99(us);
  ::close(fd);
  for (int s : stalled) ::close(s);
  server.stop();
  runner.join();
}
BENCHMARK(BM_RoundTripWithStalledStreams)
    ->Args({0, 0})
    ->Args({64, 0})
    ->Args({0, 1})
    ->Args({64, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace imago::http

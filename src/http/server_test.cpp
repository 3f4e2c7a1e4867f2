// In-process tests of http::Server over real loopback sockets, with a fake Dispatcher. The client
// side uses Beast's synchronous parser so that framing is checked by an independent reader.
#include "http/server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json/parse.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

namespace imago::http {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using net::ip::tcp;
using Clock = std::chrono::steady_clock;

int64_t ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

constexpr uint64_t kFnvOffset = 14695981039346656037ull;
uint64_t fnv1a(uint64_t h, std::string_view data) {
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

class FakeDispatcher : public Dispatcher {
 public:
  RouteInfo route_info(std::string_view, std::string_view path) const override {
    RouteInfo info;
    if (path == "/small") info.body_limit = 16;
    if (path == "/big") info.body_limit = 8 << 20;
    if (path == "/cpu") info.pool = HandlerPool::kCpu;
    if (path == "/inline") info.pool = HandlerPool::kInline;
    if (path == "/upload") {
      info.body_limit = 200 << 20;
      info.needs_auth = true;
    }
    if (path == "/spool") {
      info.body_limit = 8 << 20;
      info.spool_body = true;
    }
    return info;
  }

  std::optional<Response> precheck(Request& req) override {
    prechecks++;
    if (req.headers.get("api-secret").value_or("") == "good") return std::nullopt;
    return Response::error(401, "UNAUTHORIZED", "Invalid api-secret");
  }

  Response dispatch(Request& req) override {
    dispatch_thread_ids_mu.lock();
    dispatch_threads.push_back(std::this_thread::get_id());
    dispatch_thread_ids_mu.unlock();
    if (req.path == "/throw") throw std::runtime_error("boom");
    if (req.path == "/gate") {  // holds a worker until the test opens the gate (bounded)
      std::unique_lock lock(mu);
      ++gate_waiting;
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(60), [&] { return gate_open; });
      ++gate_passed;
      return Response::bytes(200, "text/plain", "gate passed");
    }
    if (req.path == "/slow") {
      int ms = std::stoi(std::string(req.query_param("ms").value_or("500")));
      slow_started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return Response::bytes(200, "text/plain", "slow done");
    }
    if (req.path == "/stream") {
      Response r = Response::bytes(200, "text/plain", "");
      r.stream = [i = 0]() mutable -> std::optional<std::string> {
        if (i == 3) return std::nullopt;
        if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(400));
        return "chunk" + std::to_string(i++) + ";";
      };
      return r;
    }
    if (req.path == "/gated-stream") {
      // chunk0, then waits until the test has seen chunk0 (bounded), then chunk1 and the end.
      Response r = Response::bytes(200, "text/plain", "");
      r.stream = [this, i = 0]() mutable -> std::optional<std::string> {
        if (i == 2) return std::nullopt;
        if (i == 1) {
          std::unique_lock lock(mu);
          stream_gate_timed_out =
              !cv.wait_for(lock, std::chrono::seconds(60), [&] { return stream_gate_open; });
        }
        return "chunk" + std::to_string(i++) + ";";
      };
      return r;
    }
    if (req.path == "/endless") {
      Response r = Response::bytes(200, "application/octet-stream", "");
      // Counts its calls and notices (destructor) when the server drops it.
      struct Endless {
        explicit Endless(FakeDispatcher* x) : d(x) {}
        ~Endless() {
          std::lock_guard lock(d->mu);
          d->endless_dropped = true;
          d->cv.notify_all();
        }
        FakeDispatcher* d;
      };
      r.stream = [e = std::make_shared<Endless>(this), this]() -> std::optional<std::string> {
        endless_calls++;
        return std::string(16 * 1024, 'x');
      };
      return r;
    }
    if (req.path == "/held") {
      // First call: more than the client's small receive window takes, so the write stays
      // pending. Second call: blocks until the test opens held_gate. Records whether the source
      // was destroyed while that call was running.
      Response r = Response::bytes(200, "application/octet-stream", "");
      struct Held {
        explicit Held(FakeDispatcher* x) : d(x) {}
        ~Held() {
          std::lock_guard lock(d->mu);
          d->held_dropped = true;
          d->held_dropped_during_call = d->held_in_call;
          d->cv.notify_all();
        }
        FakeDispatcher* d;
      };
      r.stream = [h = std::make_shared<Held>(this), this, calls = 0]() mutable -> std::optional<std::string> {
        if (++calls == 1) return std::string(200 * 1024, 'x');
        std::unique_lock lock(mu);
        held_in_call = true;
        cv.notify_all();
        cv.wait_for(lock, std::chrono::seconds(10), [&] { return held_gate; });
        held_in_call = false;
        return std::string(h ? 1024 : 0, 'y');
      };
      return r;
    }
    if (req.path == "/cpu") {  // holds a cpu thread until the test opens cpu_gate (bounded)
      std::unique_lock lock(mu);
      ++cpu_started;
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(60), [&] { return cpu_gate_open; });
      return Response::bytes(200, "text/plain", "cpu done");
    }
    if (req.path == "/big") return Response::bytes(200, "text/plain", std::to_string(req.body.size()));
    if (req.path == "/spool") {
      // Where the body arrived and a hash of it, read back in pieces as upload handlers do.
      BodyBytes b = req.body_bytes();
      std::string piece(100 * 1000, '\0');  // not a divisor of the body sizes used: seams move
      uint64_t h = kFnvOffset;
      for (int64_t pos = 0; pos < b.size();) {
        auto n = b.read(pos, piece.data(), piece.size());
        if (!n.ok() || *n == 0) return Response::error(500, "INTERNAL_ERROR", "read failed");
        h = fnv1a(h, std::string_view(piece.data(), *n));
        pos += static_cast<int64_t>(*n);
      }
      boost::json::object o;
      o["in_file"] = req.body_file != nullptr;
      o["in_memory"] = req.body.size();
      o["size"] = b.size();
      o["hash"] = std::to_string(h);
      return Response::json(200, o);
    }
    if (req.path == "/nocontent") return Response::bytes(204, "text/plain", "");
    if (req.path == "/with-id") {
      Response r = Response::bytes(200, "text/plain", "x");
      r.headers.set("X-Request-Id", "req_fixed");
      return r;
    }
    if (req.path == "/bad-header") {
      Response r = Response::bytes(200, "text/plain", "ok");
      r.headers.set("X-Evil", "a\r\nSet-Cookie: pwned=1");
      return r;
    }
    boost::json::object o;
    o["method"] = req.method;
    o["target"] = req.target;
    o["path"] = req.path;
    boost::json::object q;
    for (auto& [k, v] : req.query) q[k] = v;
    o["query"] = q;
    o["body"] = req.body;
    o["client_ip"] = req.client_ip;
    o["x_test"] = std::string(req.headers.get("x-test").value_or(""));
    o["header_count"] = req.headers.all().size();
    return Response::json(200, o);
  }

  std::atomic<bool> slow_started{false};
  std::mutex dispatch_thread_ids_mu;
  std::vector<std::thread::id> dispatch_threads;
  std::mutex mu;
  std::condition_variable cv;
  bool endless_dropped = false;
  bool held_in_call = false;
  bool held_gate = false;
  bool held_dropped = false;
  bool held_dropped_during_call = false;
  int gate_waiting = 0;
  bool gate_open = false;
  int gate_passed = 0;
  bool stream_gate_timed_out = false;
  bool stream_gate_open = false;
  int cpu_started = 0;
  bool cpu_gate_open = false;
  std::atomic<int> endless_calls{0};
  std::atomic<int> prechecks{0};
};

class ServerTest : public ::testing::Test {
 protected:
  void start(ServerOptions o = {}) {
    o.host = "127.0.0.1";
    o.port = 0;
    o.handle_signals = false;
    if (o.io_threads == 1) o.io_threads = 2;
    o.worker_threads = 4;
    server_ = std::make_unique<Server>(o, dispatcher_);
    ASSERT_TRUE(server_->listen().ok());
    port_ = server_->port();
    ASSERT_GT(port_, 0);
    runner_ = std::thread([this] {
      server_->run();
      run_returned_ = true;
    });
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (runner_.joinable()) runner_.join();
    server_.reset();
  }

  tcp::socket connect() {
    tcp::socket s(client_ioc_);
    s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)));
    // A missing response must fail the test, not hang it. Far beyond any scheduling delay: no
    // test depends on this bound, it only ends a test that would otherwise wait forever.
    timeval tv{30, 0};
    setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return s;
  }

  static void send(tcp::socket& s, std::string_view data) {
    net::write(s, net::buffer(data.data(), data.size()));
  }

  static bhttp::response<bhttp::string_body> read_response(tcp::socket& s, boost::beast::flat_buffer& buf,
                                                           boost::system::error_code& ec, bool head = false) {
    bhttp::response_parser<bhttp::string_body> p;
    p.body_limit(64 << 20);
    p.skip(head);
    bhttp::read(s, buf, p, ec);
    return p.release();
  }

  // Reads until EOF (or error); returns true when the peer closed the connection.
  static bool closed_by_peer(tcp::socket& s, boost::beast::flat_buffer& buf) {
    boost::system::error_code ec;
    char tmp[4096];
    for (;;) {
      s.read_some(net::buffer(tmp), ec);
      if (ec) return ec == net::error::eof || ec == net::error::connection_reset;
    }
    (void)buf;
  }

  static std::string get(std::string_view target, std::string_view extra = "") {
    return "GET " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n" + std::string(extra) + "\r\n";
  }

  static boost::json::value error_of(const bhttp::response<bhttp::string_body>& r) {
    return boost::json::parse(r.body());
  }

  static void expect_envelope_no_id(const bhttp::response<bhttp::string_body>& r, int status) {
    EXPECT_EQ(r.result_int(), static_cast<unsigned>(status));
    EXPECT_FALSE(r[bhttp::field::retry_after].empty());
    auto v = boost::json::parse(r.body());
    EXPECT_EQ(v.at("error").at("code").as_string(), "SERVICE_UNAVAILABLE");
    EXPECT_EQ(v.at("status_code").as_int64(), status);
  }

  static void expect_envelope(const bhttp::response<bhttp::string_body>& r, int status, const char* code) {
    EXPECT_EQ(r.result_int(), static_cast<unsigned>(status));
    EXPECT_EQ(r[bhttp::field::content_type], "application/json");
    EXPECT_FALSE(r["X-Request-Id"].empty());
    auto v = boost::json::parse(r.body());
    EXPECT_EQ(v.at("error").at("code").as_string(), code);
    EXPECT_EQ(v.at("error").at("httpStatus").as_int64(), status);
    EXPECT_EQ(v.at("status").as_string(), "error");
    EXPECT_EQ(v.at("status_code").as_int64(), status);
  }

  FakeDispatcher dispatcher_;
  std::unique_ptr<Server> server_;
  std::thread runner_;
  std::atomic<bool> run_returned_{false};
  int port_ = 0;
  net::io_context client_ioc_;
};

TEST_F(ServerTest, FillsRequestFields) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s,
       "POST /echo/a%20b%2Fc?x=1&y=a+b&y=c%26d&flag HTTP/1.1\r\nHost: t\r\nX-Test: hello\r\n"
       "Content-Length: 4\r\n\r\nabcd");
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_EQ(r.result_int(), 200u) << r.body();
  auto v = boost::json::parse(r.body());
  EXPECT_EQ(v.at("method").as_string(), "POST");
  EXPECT_EQ(v.at("target").as_string(), "/echo/a%20b%2Fc?x=1&y=a+b&y=c%26d&flag");
  EXPECT_EQ(v.at("path").as_string(), "/echo/a b/c");
  EXPECT_EQ(v.at("query").at("x").as_string(), "1");
  EXPECT_EQ(v.at("query").at("y").as_string(), "c&d");  // last one wins
  EXPECT_EQ(v.at("query").at("flag").as_string(), "");
  EXPECT_EQ(v.at("body").as_string(), "abcd");
  EXPECT_EQ(v.at("client_ip").as_string(), "127.0.0.1");
  EXPECT_EQ(v.at("x_test").as_string(), "hello");
  EXPECT_EQ(r[bhttp::field::content_length], std::to_string(r.body().size()));
  EXPECT_FALSE(r["X-Request-Id"].empty());
  EXPECT_TRUE(r[bhttp::field::server].empty());
  EXPECT_TRUE(r[bhttp::field::date].empty());
}

TEST_F(ServerTest, FormDecodesQueryAndAcceptsAbsoluteForm) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("http://example.com/echo?q=a+b%2Bc"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  auto v = boost::json::parse(r.body());
  EXPECT_EQ(v.at("path").as_string(), "/echo");
  EXPECT_EQ(v.at("query").at("q").as_string(), "a b+c");
}

TEST_F(ServerTest, DispatchRunsOnWorkerThreadsNotTheCaller) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/echo"));
  boost::system::error_code ec;
  read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  std::lock_guard lock(dispatcher_.dispatch_thread_ids_mu);
  ASSERT_EQ(dispatcher_.dispatch_threads.size(), 1u);
  EXPECT_NE(dispatcher_.dispatch_threads[0], runner_.get_id());  // run() thread is an I/O thread
}

TEST_F(ServerTest, InlineRoutesAreAnsweredWhileEveryWorkerIsBlocked) {
  start();  // 4 worker threads
  std::vector<tcp::socket> blocked;
  for (int i = 0; i < 4; ++i) {
    blocked.push_back(connect());
    send(blocked.back(), get("/gate"));
  }
  {
    std::unique_lock lock(dispatcher_.mu);
    ASSERT_TRUE(dispatcher_.cv.wait_for(lock, std::chrono::seconds(10),
                                        [&] { return dispatcher_.gate_waiting == 4; }));
  }
  // Every worker waits for the gate: only a dispatch on the I/O thread can answer this. A pool
  // dispatch would wait for the gate and the read would time out.
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/inline?x=1"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(boost::json::parse(r.body()).at("query").at("x").as_string(), "1");
  EXPECT_FALSE(r["X-Request-Id"].empty());
  {
    std::lock_guard lock(dispatcher_.mu);
    EXPECT_FALSE(dispatcher_.gate_open);
    dispatcher_.gate_open = true;
  }
  dispatcher_.cv.notify_all();
  for (auto& b : blocked) {
    boost::beast::flat_buffer bbuf;
    auto br = read_response(b, bbuf, ec);
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_EQ(br.body(), "gate passed");
  }
}

TEST_F(ServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  for (int i = 0; i < 5; ++i) {
    send(s, get("/echo?i=" + std::to_string(i)));
    boost::system::error_code ec;
    auto r = read_response(s, buf, ec);
    ASSERT_FALSE(ec) << "request " << i << ": " << ec.message();
    EXPECT_EQ(boost::json::parse(r.body()).at("query").at("i").as_string(), std::to_string(i));
    EXPECT_TRUE(r.keep_alive());
  }
}

TEST_F(ServerTest, PipelinedRequestsAnsweredInOrder) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  // The first one is slow: a server answering out of order would send the others first.
  send(s, get("/slow?ms=300") + get("/echo?n=2") + get("/inline?n=3"));
  boost::system::error_code ec;
  auto r1 = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(r1.body(), "slow done");
  auto r2 = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(boost::json::parse(r2.body()).at("query").at("n").as_string(), "2");
  auto r3 = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(boost::json::parse(r3.body()).at("query").at("n").as_string(), "3");
}

TEST_F(ServerTest, Http10WithoutKeepAliveIsClosed) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, "GET /echo HTTP/1.0\r\n\r\n");
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(r.result_int(), 200u);
  EXPECT_EQ(r.version(), 10u);
  EXPECT_TRUE(closed_by_peer(s, buf));
}

TEST_F(ServerTest, ConnectionCloseRequestIsHonoured) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/echo", "Connection: close\r\n"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(r[bhttp::field::connection], "close");
  EXPECT_TRUE(closed_by_peer(s, buf));
}

TEST_F(ServerTest, OversizedContentLengthIs413WithoutDispatch) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, "POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'a'));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  expect_envelope(r, 413, "PAYLOAD_TOO_LARGE");
  EXPECT_EQ(r[bhttp::field::connection], "close");
  EXPECT_TRUE(closed_by_peer(s, buf));
  std::lock_guard lock(dispatcher_.dispatch_thread_ids_mu);
  EXPECT_TRUE(dispatcher_.dispatch_threads.empty());
}

TEST_F(ServerTest, BodyWithinLimitIsAccepted) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, "POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 16\r\n\r\n" + std::string(16, 'a'));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(r.result_int(), 200u);
}

TEST_F(ServerTest, OversizedChunkedBodyIs413) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s,
       "POST /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
       "a\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n");
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  expect_envelope(r, 413, "PAYLOAD_TOO_LARGE");
}

TEST_F(ServerTest, ExpectContinueOverLimitGets413InsteadOf100) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, "POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 5000000\r\nExpect: 100-continue\r\n\r\n");
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  expect_envelope(r, 413, "PAYLOAD_TOO_LARGE");
}

TEST_F(ServerTest, ExpectContinueWithinLimitGets100ThenResponse) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
  boost::system::error_code ec;
  auto interim = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(interim.result_int(), 100u);
  send(s, "xyz");
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(boost::json::parse(r.body()).at("body").as_string(), "xyz");
}

TEST_F(ServerTest, HugeHeaderIs431) {
  ServerOptions o;
  o.header_limit = 8 * 1024;
  start(o);
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/echo", "X-Big: " + std::string(20 * 1024, 'b') + "\r\n"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  expect_envelope(r, 431, "HEADER_TOO_LARGE");
}

TEST_F(ServerTest, GarbageIs400) {
  start();
  const std::string inputs[] = {
      "HELLO THERE\r\n\r\n",
      "GET /echo HTTP/9.9\r\n\r\n",
      "GET /echo HTTP/1.1\r\nBad Header\r\n\r\n",
      "POST /echo HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcde",
      "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "GET /a%zz HTTP/1.1\r\n\r\n",
      "GET /a%00b HTTP/1.1\r\n\r\n",
      "GET ftp://x/y HTTP/1.1\r\n\r\n",
      std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) + std::string(64, '\0') + "\r\n\r\n",
  };
  for (const auto& in : inputs) {
    auto s = connect();
    boost::beast::flat_buffer buf;
    send(s, in);
    boost::system::error_code ec;
    auto r = read_response(s, buf, ec);
    ASSERT_FALSE(ec) << ec.message() << " for " << in;
    expect_envelope(r, 400, "BAD_REQUEST");
    EXPECT_TRUE(closed_by_peer(s, buf));
  }
  // The server is still fine.
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/echo"));
  boost::system::error_code ec;
  EXPECT_EQ(read_response(s, buf, ec).result_int(), 200u);
}

// Request smuggling primitives (RFC 9112 6.1, 6.3, 5.2): each is refused with an error and the
// connection closes, so the "body" can never run as a second request.
TEST_F(ServerTest, SmugglingFramingIsRefusedAndConnectionClosed) {
  start();
  const std::string smuggled = "GET /echo?smuggled=1 HTTP/1.1\r\nHost: t\r\n\r\n";
  const struct {
    std::string head;
    int status;
    const char* code;
  } cases[] = {
      {"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: xchunked\r\n", 400, "BAD_REQUEST"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n", 400, "BAD_REQUEST"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, identity\r\n", 400, "BAD_REQUEST"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: identity\r\n", 400, "BAD_REQUEST"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n", 501, "NOT_IMPLEMENTED"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n", 400,
       "BAD_REQUEST"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n", 400,
       "BAD_REQUEST"},
      {"POST /echo HTTP/1.0\r\nHost: t\r\nTransfer-Encoding: chunked\r\n", 400, "BAD_REQUEST"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding:\r\n chunked\r\n", 400, "BAD_REQUEST"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nX-Folded: a\r\n\tb\r\nContent-Length: 0\r\n", 400, "BAD_REQUEST"},
      {"GET /echo HTTP/1.1\r\n", 400, "BAD_REQUEST"},                        // no Host
      {"GET /echo HTTP/1.1\r\nHost: a\r\nHost: b\r\n", 400, "BAD_REQUEST"},  // two Hosts
      {"get /echo HTTP/1.1\r\nHost: t\r\n", 400, "BAD_REQUEST"},             // lower-case method
      {"Post /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n", 400, "BAD_REQUEST"},
  };
  for (const auto& c : cases) {
    auto s = connect();
    boost::beast::flat_buffer buf;
    send(s, c.head + "\r\n" + smuggled);
    boost::system::error_code ec;
    auto r = read_response(s, buf, ec);
    ASSERT_FALSE(ec) << ec.message() << " for " << c.head;
    expect_envelope(r, c.status, c.code);
    if (r.version() == 11) EXPECT_EQ(r[bhttp::field::connection], "close") << c.head;
    // No second response: the smuggled request never ran.
    EXPECT_TRUE(closed_by_peer(s, buf)) << c.head;
  }
  // Still accepted: a lone chunked coding (any case), and HTTP/1.0 without Host.
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_EQ(r.result_int(), 200u) << r.body();
  EXPECT_EQ(boost::json::parse(r.body()).at("body").as_string(), "abc");
  auto s2 = connect();
  send(s2, "GET /echo HTTP/1.0\r\n\r\n");
  boost::beast::flat_buffer buf2;
  EXPECT_EQ(read_response(s2, buf2, ec).result_int(), 200u);
}

TEST_F(ServerTest, HandlerExceptionIs500Envelope) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/throw"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  expect_envelope(r, 500, "INTERNAL_ERROR");
  EXPECT_EQ(error_of(r).at("error").at("message").as_string(), "Internal server error");
}

TEST_F(ServerTest, RequestIdFromHandlerIsKeptAndUnsafeHeadersDropped) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/with-id") + get("/bad-header"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(r["X-Request-Id"], "req_fixed");
  auto r2 = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(r2.body(), "ok");
  EXPECT_TRUE(r2["X-Evil"].empty());
  EXPECT_TRUE(r2[bhttp::field::set_cookie].empty());
}

TEST_F(ServerTest, HeadSendsLengthButNoBody) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, "HEAD /echo HTTP/1.1\r\nHost: t\r\n\r\n" + get("/echo?after=1"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec, /*head=*/true);
  ASSERT_FALSE(ec);
  EXPECT_GT(std::stoi(std::string(r[bhttp::field::content_length])), 0);
  // If a body had been sent, this would read it as a broken response.
  auto r2 = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(boost::json::parse(r2.body()).at("query").at("after").as_string(), "1");
}

TEST_F(ServerTest, NoContentHasNoBodyOrLength) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/nocontent") + get("/echo"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(r.result_int(), 204u);
  EXPECT_TRUE(r[bhttp::field::content_length].empty());
  EXPECT_EQ(read_response(s, buf, ec).result_int(), 200u);
}

TEST_F(ServerTest, ReadTimeoutClosesStalledRequest) {
  ServerOptions o;
  o.read_timeout_s = 1;
  o.idle_timeout_s = 30;
  start(o);
  auto s = connect();
  boost::beast::flat_buffer buf;
  auto t0 = Clock::now();
  send(s, "GET /echo HTTP/1.1\r\nHost: t\r\n");  // never finished
  EXPECT_TRUE(closed_by_peer(s, buf));
  // Not before the timeout (timers never fire early); how much later depends on the machine.
  EXPECT_GE(ms_since(t0), 900);
}

TEST_F(ServerTest, ReadTimeoutCoversTheWholeRequestNotEachRead) {
  ServerOptions o;
  o.read_timeout_s = 1;
  start(o);
  auto s = connect();
  // A slow-loris trickle: each byte arrives well within the timeout, the whole header does not
  // (400 bytes at one per 100 ms take 40 s). A timeout per read would never close it and the whole
  // request would go out; a timeout for the request closes it long before the last byte.
  std::string req = get("/echo", "X-Pad: " + std::string(400, 'p') + "\r\n");
  size_t sent = 0;
  bool closed = false;
  for (; sent < req.size() && !closed; ++sent) {
    boost::system::error_code ec;
    net::write(s, net::buffer(&req[sent], 1), ec);
    if (ec) {
      closed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    char c;
    const ssize_t n = ::recv(s.native_handle(), &c, 1, MSG_DONTWAIT | MSG_PEEK);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) closed = true;  // FIN or reset
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(sent, req.size()) << "the whole trickled request was accepted";
}

TEST_F(ServerTest, LargeDeclaredBodyGetsMoreReadTime) {
  ServerOptions o;
  o.read_timeout_s = 1;
  start(o);
  auto s = connect();
  boost::beast::flat_buffer buf;
  const size_t size = 3 << 20;  // 3 MiB: 1 s + 3 s allowed
  send(s, "POST /big HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(size) + "\r\n\r\n");
  std::string piece(size / 6, 'z');
  for (int i = 0; i < 6; ++i) {  // takes about 1.8 s, longer than the plain read timeout
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    send(s, piece);
  }
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(r.result_int(), 200u);
  EXPECT_EQ(r.body(), std::to_string(size));
}

TEST_F(ServerTest, IdleKeepAliveConnectionIsClosed) {
  ServerOptions o;
  o.idle_timeout_s = 1;
  start(o);
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/echo"));
  boost::system::error_code ec;
  read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  auto t0 = Clock::now();
  EXPECT_TRUE(closed_by_peer(s, buf));
  EXPECT_GE(ms_since(t0), 900);  // by the idle timer, not at once
}

TEST_F(ServerTest, StreamingChunksArriveIncrementally) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/gated-stream") + get("/echo?after=stream"));
  bhttp::response_parser<bhttp::string_body> p;
  std::vector<std::string> chunks;
  // Ordering, not timing: the producer waits after chunk0 until the client has it, so chunk0 can
  // only arrive here if the server sent it before the producer finished.
  std::function<std::size_t(std::uint64_t, boost::beast::string_view, boost::system::error_code&)> on_chunk =
      [&](std::uint64_t, boost::beast::string_view body, boost::system::error_code&) {
        if (chunks.empty()) {
          std::lock_guard lock(dispatcher_.mu);
          dispatcher_.stream_gate_open = true;
          dispatcher_.cv.notify_all();
        }
        chunks.emplace_back(body);
        return body.size();
      };
  p.on_chunk_body(on_chunk);
  boost::system::error_code ec;
  bhttp::read(s, buf, p, ec);
  ASSERT_FALSE(ec) << ec.message();
  auto& r = p.get();
  EXPECT_TRUE(r.chunked());
  EXPECT_TRUE(r[bhttp::field::content_length].empty());
  std::string all;
  for (auto& c : chunks) all += c;
  EXPECT_EQ(all, "chunk0;chunk1;");
  {
    // Had the server held chunk0 back, the producer would have given up waiting before it came.
    std::lock_guard lock(dispatcher_.mu);
    EXPECT_FALSE(dispatcher_.stream_gate_timed_out);
  }
  // And the connection is still usable afterwards.
  auto r2 = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(boost::json::parse(r2.body()).at("query").at("after").as_string(), "stream");
}

TEST_F(ServerTest, StreamSourceIsDroppedOnceClientIsGone) {
  start();
  {
    auto s = connect();
    boost::beast::flat_buffer buf;
    send(s, get("/endless"));
    char tmp[1024];
    net::read(s, net::buffer(tmp));  // the stream started
    s.close();
  }
  std::unique_lock lock(dispatcher_.mu);
  EXPECT_TRUE(
      dispatcher_.cv.wait_for(lock, std::chrono::seconds(10), [&] { return dispatcher_.endless_dropped; }));
}

// Finding: a client that reset the connection while its source was producing made the session
// destroy the source under the running call (bad_function_call, and a crash inside the speech
// stream's next()). The producer now holds its own reference: the source goes only after the call.
TEST_F(ServerTest, StreamSourceOutlivesTheCallRunningWhenTheClientLeaves) {
  ServerOptions o;
  o.stream_threads = 2;  // a second thread free to run the session's release while a call blocks
  start(o);
  tcp::socket s(client_ioc_);
  s.open(tcp::v4());
  s.set_option(net::socket_base::receive_buffer_size(4096));  // the first 200 KiB piece stays pending
  s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)));
  send(s, get("/held"));
  {
    std::unique_lock lock(dispatcher_.mu);
    ASSERT_TRUE(
        dispatcher_.cv.wait_for(lock, std::chrono::seconds(10), [&] { return dispatcher_.held_in_call; }));
  }
  // Reset, not FIN: the server's pending write fails at once and it releases the stream.
  s.set_option(net::socket_base::linger(true, 0));
  s.close();
  {
    // The old session destroyed the source here, within milliseconds; give it ample time to.
    std::unique_lock lock(dispatcher_.mu);
    dispatcher_.cv.wait_for(lock, std::chrono::seconds(2), [&] { return dispatcher_.held_dropped; });
    EXPECT_FALSE(dispatcher_.held_dropped_during_call) << "source destroyed while it was running";
    dispatcher_.held_gate = true;
    dispatcher_.cv.notify_all();
    // Once the call returns, the source is dropped (by the producer, on the stream pool).
    EXPECT_TRUE(
        dispatcher_.cv.wait_for(lock, std::chrono::seconds(10), [&] { return dispatcher_.held_dropped; }));
  }
  EXPECT_FALSE(dispatcher_.held_dropped_during_call);
  // The server is still serving.
  auto e = connect();
  boost::beast::flat_buffer buf;
  boost::system::error_code ec;
  send(e, get("/echo"));
  EXPECT_EQ(read_response(e, buf, ec).result_int(), 200u);
}

// Finding: slow readers froze the server because each stream held a thread per blocked write.
// Now a client that never reads stops its source once the bounded buffer (plus socket buffers) is
// full, and the stream pool's single thread keeps serving other streams.
TEST_F(ServerTest, StalledReadersHoldNoThreadAndBoundedMemory) {
  ServerOptions o;
  o.stream_threads = 1;
  start(o);
  std::vector<tcp::socket> stalled;
  for (int i = 0; i < 8; ++i) {
    stalled.push_back(connect());
    send(stalled.back(), get("/endless"));  // and never read
  }
  // The sources stop being called: the count settles (loopback socket buffers take a few MB each).
  int last = -1;
  for (int i = 0; i < 100 && dispatcher_.endless_calls.load() != last; ++i) {
    last = dispatcher_.endless_calls.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_EQ(dispatcher_.endless_calls.load(), last) << "sources still called for stalled clients";
  EXPECT_LT(last, 8 * 2000);  // 8 x at most ~32 MB: bounded, not unbounded
  // Another stream on the same (single-thread) pool still completes while the eight stay stalled:
  // were a stalled write holding the thread, it would never be called.
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/stream"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(r.body(), "chunk0;chunk1;chunk2;");
  auto e = connect();
  send(e, get("/echo"));
  EXPECT_EQ(read_response(e, buf, ec).result_int(), 200u);
}

// Finding: unauthenticated clients made the server buffer 8 x 185 MB before their 401.
TEST_F(ServerTest, LargeBodyIsAuthenticatedBeforeItIsRead) {
  start();
  auto s = connect();
  boost::beast::flat_buffer buf;
  // 100 MB declared, nothing sent: the 401 comes from the header alone.
  send(s, "POST /upload HTTP/1.1\r\nHost: t\r\napi-secret: bad\r\nContent-Length: 104857600\r\n\r\n");
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  expect_envelope(r, 401, "UNAUTHORIZED");
  EXPECT_EQ(r[bhttp::field::connection], "close");
  EXPECT_EQ(dispatcher_.prechecks.load(), 1);

  // Expect: 100-continue gets the refusal instead of 100 Continue.
  auto s2 = connect();
  send(s2, "POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 104857600\r\n\r\n");
  boost::beast::flat_buffer buf2;
  expect_envelope(read_response(s2, buf2, ec), 401, "UNAUTHORIZED");

  // Small bodies are read first (one round trip less) and authenticated by the pipeline.
  auto s3 = connect();
  send(s3, "POST /upload HTTP/1.1\r\nHost: t\r\napi-secret: bad\r\nContent-Length: 3\r\n\r\nabc");
  boost::beast::flat_buffer buf3;
  EXPECT_EQ(read_response(s3, buf3, ec).result_int(), 200u);
  EXPECT_EQ(dispatcher_.prechecks.load(), 2);

  // A good key: the body is read and dispatched.
  auto s4 = connect();
  std::string body(200 * 1024, 'b');
  send(s4, "POST /upload HTTP/1.1\r\nHost: t\r\napi-secret: good\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body);
  boost::beast::flat_buffer buf4;
  auto r4 = read_response(s4, buf4, ec);
  ASSERT_EQ(r4.result_int(), 200u);
  EXPECT_EQ(boost::json::parse(r4.body()).at("body").as_string().size(), body.size());
}

// Finding: one IP opened ~20,000 idle sockets and exhausted the descriptors.
TEST_F(ServerTest, ConnectionCapsPerIpAndGlobal) {
  ServerOptions o;
  o.max_connections_per_ip = 3;
  o.max_connections = 5;
  start(o);
  std::vector<tcp::socket> held;
  for (int i = 0; i < 3; ++i) held.push_back(connect());
  for (int i = 0; i < 300 && server_->connection_count() < 3; ++i)  // accepted on the server's thread
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(server_->connection_count(), 3);
  {
    auto s = connect();
    boost::beast::flat_buffer buf;
    boost::system::error_code ec;
    auto r = read_response(s, buf, ec);
    ASSERT_FALSE(ec) << ec.message();
    expect_envelope_no_id(r, 503);
    EXPECT_NE(r.body().find("from this address"), std::string::npos);
  }
  // Another address (127.0.0.2 is loopback too) is not affected by this one's cap...
  auto other = [&] {
    tcp::socket s(client_ioc_);
    s.open(tcp::v4());
    s.bind(tcp::endpoint(net::ip::make_address("127.0.0.2"), 0));
    s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)));
    timeval tv{5, 0};
    setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return s;
  };
  std::vector<tcp::socket> others;
  for (int i = 0; i < 2; ++i) {
    others.push_back(other());
    send(others.back(), get("/echo"));
    boost::beast::flat_buffer buf;
    boost::system::error_code ec;
    EXPECT_EQ(read_response(others.back(), buf, ec).result_int(), 200u);
  }
  // ...but the global cap (5) is reached now.
  {
    auto s = other();
    boost::beast::flat_buffer buf;
    boost::system::error_code ec;
    auto r = read_response(s, buf, ec);
    ASSERT_FALSE(ec) << ec.message();
    expect_envelope_no_id(r, 503);
  }
  // Closing connections frees their slots.
  held.clear();
  for (int i = 0; i < 50 && server_->connection_count() > 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto s = connect();
  send(s, get("/echo"));
  boost::beast::flat_buffer buf;
  boost::system::error_code ec;
  EXPECT_EQ(read_response(s, buf, ec).result_int(), 200u);
}

TEST_F(ServerTest, FullCpuPoolAnswers503AtOnce) {
  ServerOptions o;
  o.cpu_threads = 1;
  o.cpu_queue = 1;
  start(o);
  std::vector<tcp::socket> conns;
  conns.push_back(connect());
  send(conns.back(), get("/cpu"));
  {
    std::unique_lock lock(dispatcher_.mu);
    ASSERT_TRUE(dispatcher_.cv.wait_for(lock, std::chrono::seconds(30),
                                        [&] { return dispatcher_.cpu_started == 1; }));
  }
  // The only cpu thread is held. Two more: one fills the queue, the other is refused, whichever
  // the server sees first. "At once" means while the pool is still held: the gate opens only after
  // the refusal has arrived.
  for (int i = 0; i < 2; ++i) {
    conns.push_back(connect());
    send(conns.back(), get("/cpu"));
  }
  pollfd fds[2] = {{conns[1].native_handle(), POLLIN, 0}, {conns[2].native_handle(), POLLIN, 0}};
  ASSERT_GT(::poll(fds, 2, 30000), 0) << "no answer while the cpu pool was held";
  const size_t refused = (fds[0].revents & POLLIN) ? 1 : 2;
  const size_t queued = refused == 1 ? 2 : 1;
  boost::beast::flat_buffer buf;
  boost::system::error_code ec;
  auto r = read_response(conns[refused], buf, ec);
  ASSERT_FALSE(ec);
  expect_envelope(r, 503, "SERVICE_UNAVAILABLE");
  EXPECT_EQ(r[bhttp::field::retry_after], "1");
  {
    std::lock_guard lock(dispatcher_.mu);
    EXPECT_EQ(dispatcher_.cpu_started, 1) << "the refused request waited for the pool";
  }
  // Other routes are not affected, and the held and queued ones complete.
  send(conns[refused], get("/echo"));
  EXPECT_EQ(read_response(conns[refused], buf, ec).result_int(), 200u);
  {
    std::lock_guard lock(dispatcher_.mu);
    dispatcher_.cpu_gate_open = true;
  }
  dispatcher_.cv.notify_all();
  for (size_t i : {size_t{0}, queued}) {
    boost::beast::flat_buffer bb;
    EXPECT_EQ(read_response(conns[i], bb, ec).body(), "cpu done");
  }
}

// Waits until the gate route holds `n` requests (bounded).
bool gate_holds(FakeDispatcher& d, int n) {
  std::unique_lock lock(d.mu);
  return d.cv.wait_for(lock, std::chrono::seconds(30), [&] { return d.gate_waiting == n; });
}

void open_gate(FakeDispatcher& d) {
  {
    std::lock_guard lock(d.mu);
    d.gate_open = true;
  }
  d.cv.notify_all();
}

int gate_passed(FakeDispatcher& d) {
  std::lock_guard lock(d.mu);
  return d.gate_passed;
}

TEST_F(ServerTest, GracefulStopFinishesInFlightRequestAndClosesIdleOnes) {
  start();
  auto idle = connect();
  boost::beast::flat_buffer idle_buf;
  send(idle, get("/echo"));
  boost::system::error_code ec;
  read_response(idle, idle_buf, ec);
  ASSERT_FALSE(ec);

  auto busy = connect();
  boost::beast::flat_buffer busy_buf;
  send(busy, get("/gate"));
  ASSERT_TRUE(gate_holds(dispatcher_, 1));

  server_->stop();
  // The idle keep-alive connection is closed at once: while the in-flight request is still held.
  EXPECT_TRUE(closed_by_peer(idle, idle_buf));
  EXPECT_EQ(gate_passed(dispatcher_), 0);
  // New connections are refused once the listener has closed (bounded retries: stop() closes it
  // on the server's own thread).
  bool refused = false;
  for (int i = 0; i < 300 && !refused; ++i) {
    tcp::socket late(client_ioc_);
    late.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)), ec);
    refused = static_cast<bool>(ec);
    if (!refused) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(refused);
  EXPECT_FALSE(run_returned_);

  open_gate(dispatcher_);
  auto r = read_response(busy, busy_buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(r.result_int(), 200u);
  EXPECT_EQ(r.body(), "gate passed");
  EXPECT_EQ(r[bhttp::field::connection], "close");
  runner_.join();
  EXPECT_TRUE(run_returned_);
}

TEST_F(ServerTest, StopGraceLimitsHowLongRunWaits) {
  ServerOptions o;
  o.shutdown_grace_s = 1;
  start(o);
  auto busy = connect();
  boost::beast::flat_buffer buf;
  send(busy, get("/gate"));
  ASSERT_TRUE(gate_holds(dispatcher_, 1));
  auto t0 = Clock::now();
  server_->stop();
  // After the grace period the connection is closed while the handler is still held; the
  // response never comes.
  EXPECT_TRUE(closed_by_peer(busy, buf));
  EXPECT_GE(ms_since(t0), 900);
  EXPECT_EQ(gate_passed(dispatcher_), 0);
  open_gate(dispatcher_);
  runner_.join();  // run() still waits for the handler itself to return (it cannot be cancelled)
}

TEST_F(ServerTest, StopWithNoConnectionsReturnsPromptly) {
  ServerOptions o;
  o.shutdown_grace_s = 120;  // waiting for the grace would outlast the bounded wait below
  start(o);
  server_->stop();
  server_->stop();  // idempotent
  for (int i = 0; i < 600 && !run_returned_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(run_returned_);
  runner_.join();
}

TEST_F(ServerTest, ManyConcurrentClients) {
  start();
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int c = 0; c < 16; ++c) {
    clients.emplace_back([&, c] {
      net::io_context ioc;
      tcp::socket s(ioc);
      s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)));
      boost::beast::flat_buffer buf;
      for (int i = 0; i < 50; ++i) {
        std::string id = std::to_string(c) + "-" + std::to_string(i);
        send(s, get("/echo?id=" + id));
        boost::system::error_code ec;
        auto r = read_response(s, buf, ec);
        if (!ec && boost::json::parse(r.body()).at("query").at("id").as_string() == id) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 16 * 50);
}

TEST_F(ServerTest, MutatedAndRandomInputNeverBreaksTheServer) {
  ServerOptions o;
  o.read_timeout_s = 1;
  start(o);
  std::mt19937 rng(12345);  // fixed seed: a failure is reproducible
  const std::string seeds[] = {
      "POST /echo?a=b HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello",
      "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "GET /echo/%41?x=%20 HTTP/1.0\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n\r\n",
  };
  for (int i = 0; i < 300; ++i) {
    std::string in = seeds[i % 3];
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !in.empty(); ++e) {
      size_t pos = rng() % in.size();
      switch (rng() % 4) {
        case 0:
          in[pos] = static_cast<char>(rng() % 256);
          break;
        case 1:
          in.erase(pos, 1 + rng() % 4);
          break;
        case 2:
          in.insert(pos, std::string(1 + rng() % 3, static_cast<char>(rng() % 256)));
          break;
        case 3:
          in.insert(pos, in.substr(0, std::min<size_t>(in.size(), rng() % 40)));
          break;
      }
    }
    if (i % 10 == 9) {  // and some pure noise
      in.resize(1 + rng() % 200);
      for (char& c : in) c = static_cast<char>(rng() % 256);
    }
    auto s = connect();
    boost::system::error_code ec;
    net::write(s, net::buffer(in), ec);
    s.shutdown(tcp::socket::shutdown_send, ec);  // EOF: nothing stays open until the timeout
    char tmp[4096];
    while (!ec) s.read_some(net::buffer(tmp), ec);
  }
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, get("/echo?alive=1"));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(r.result_int(), 200u);
}

// ---- spooled request bodies --------------------------------------------------------------------

class SpoolTest : public ServerTest {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "spool_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    ServerTest::TearDown();
    std::filesystem::remove_all(dir_);
  }
  void start_spooling(size_t threshold) {
    ServerOptions o;
    o.spool_dir = dir_;
    o.spool_threshold = threshold;
    start(o);
  }
  static std::string pattern(size_t n) {
    std::string b(n, '\0');
    std::mt19937 rng(7);
    for (auto& c : b) c = static_cast<char>(rng());
    return b;
  }
  static std::string post(std::string_view target, std::string_view body) {
    return "POST " + std::string(target) +
           " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
           std::string(body);
  }
  static std::string chunked(std::string_view body, size_t piece) {
    std::string out;
    for (size_t i = 0; i < body.size(); i += piece) {
      auto part = body.substr(i, piece);
      char len[32];
      std::snprintf(len, sizeof len, "%zx\r\n", part.size());
      out += len;
      out += part;
      out += "\r\n";
    }
    return out + "0\r\n\r\n";
  }
  // Names left in the spool directory: spool files have none, so this stays 0.
  size_t names_in_dir() const {
    std::error_code ec;
    size_t n = 0;
    for (auto it = std::filesystem::directory_iterator(dir_, ec);
         !ec && it != std::filesystem::directory_iterator(); ++it)
      ++n;
    return n;
  }
  // Waits (bounded) until the process holds `n` spool files; the condition, not the time, is tested.
  static bool open_spools_become(int64_t n) {
    for (int i = 0; i < 1000 && SpoolFile::open_count() != n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return SpoolFile::open_count() == n;
  }
  boost::json::value roundtrip(const std::string& request) {
    auto s = connect();
    boost::beast::flat_buffer buf;
    send(s, request);
    boost::system::error_code ec;
    auto r = read_response(s, buf, ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(r.result_int(), 200u) << r.body();
    return r.result_int() == 200 ? boost::json::parse(r.body()) : boost::json::value();
  }

  std::string dir_;
};

TEST_F(SpoolTest, LargeBodyArrivesInAFileIntact) {
  start_spooling(64 * 1024);
  const std::string body = pattern(3 << 20);
  auto v = roundtrip(post("/spool", body));
  ASSERT_TRUE(v.is_object());
  EXPECT_TRUE(v.at("in_file").as_bool());
  EXPECT_EQ(v.at("in_memory").as_int64(), 0);  // nothing of it was kept in memory as well
  EXPECT_EQ(v.at("size").as_int64(), static_cast<int64_t>(body.size()));
  EXPECT_EQ(v.at("hash").as_string(), std::to_string(fnv1a(kFnvOffset, body)));
  EXPECT_TRUE(open_spools_become(0));  // closed with the request
  EXPECT_EQ(names_in_dir(), 0u);
}

TEST_F(SpoolTest, ChunkedBodyMovesToAFileOnceOverTheThreshold) {
  start_spooling(64 * 1024);
  const std::string body = pattern(1 << 20);
  auto v = roundtrip("POST /spool HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" +
                     chunked(body, 10000));
  ASSERT_TRUE(v.is_object());
  EXPECT_TRUE(v.at("in_file").as_bool());
  EXPECT_EQ(v.at("in_memory").as_int64(), 0);
  EXPECT_EQ(v.at("hash").as_string(), std::to_string(fnv1a(kFnvOffset, body)));
}

TEST_F(SpoolTest, SmallBodiesAndOtherRoutesStayInMemory) {
  start_spooling(64 * 1024);
  const std::string small = pattern(1000);
  auto v = roundtrip(post("/spool", small));
  ASSERT_TRUE(v.is_object());
  EXPECT_FALSE(v.at("in_file").as_bool());
  EXPECT_EQ(v.at("hash").as_string(), std::to_string(fnv1a(kFnvOffset, small)));
  // /big does not opt in: its 2 MB body is read into memory as before.
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, post("/big", std::string(2 << 20, 'b')));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(r.body(), std::to_string(2 << 20));
}

TEST_F(SpoolTest, ClientLeavingMidBodyLeavesNothing) {
  start_spooling(64 * 1024);
  ASSERT_EQ(SpoolFile::open_count(), 0);
  {
    auto s = connect();
    const std::string part = pattern(2 << 20);
    send(s, "POST /spool HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(6 << 20) + "\r\n\r\n");
    send(s, part);
    ASSERT_TRUE(open_spools_become(1)) << "the body is being spooled";
    EXPECT_EQ(names_in_dir(), 0u);  // nameless from the start
  }                                 // the client goes away with 4 MB unsent
  EXPECT_TRUE(open_spools_become(0)) << "the partial body's file was closed";
  EXPECT_EQ(names_in_dir(), 0u);
}

TEST_F(SpoolTest, OverLimitBodyIs413EnvelopeAndItsFileIsClosed) {
  start_spooling(64 * 1024);
  // Declared too large: refused before a byte of it is read.
  {
    auto s = connect();
    boost::beast::flat_buffer buf;
    send(s, "POST /spool HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(9 << 20) + "\r\n\r\n");
    boost::system::error_code ec;
    auto r = read_response(s, buf, ec);
    ASSERT_FALSE(ec);
    expect_envelope(r, 413, "PAYLOAD_TOO_LARGE");
  }
  // Chunked: cut at the limit after 8 MB went to the spool file.
  {
    auto s = connect();
    boost::beast::flat_buffer buf;
    const std::string body = pattern(9 << 20);
    std::thread sender([&] {
      boost::system::error_code ignored;
      std::string req =
          "POST /spool HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(body, 64 * 1024);
      net::write(s, net::buffer(req), ignored);  // the server may close before all of it is sent
    });
    boost::system::error_code ec;
    auto r = read_response(s, buf, ec);
    sender.join();
    ASSERT_FALSE(ec) << ec.message();
    expect_envelope(r, 413, "PAYLOAD_TOO_LARGE");
  }
  EXPECT_TRUE(open_spools_become(0));
  EXPECT_EQ(names_in_dir(), 0u);
}

TEST_F(SpoolTest, UnusableSpoolDirectoryIs503Envelope) {
  ServerOptions o;
  // A regular file where the directory should be: creating the spool file fails.
  std::filesystem::create_directories(std::filesystem::path(dir_).parent_path());
  { std::ofstream(dir_) << "x"; }
  o.spool_dir = dir_ + "/sub";
  o.spool_threshold = 1024;
  start(o);
  auto s = connect();
  boost::beast::flat_buffer buf;
  send(s, post("/spool", pattern(4096)));
  boost::system::error_code ec;
  auto r = read_response(s, buf, ec);
  ASSERT_FALSE(ec) << ec.message();
  expect_envelope(r, 503, "SERVICE_UNAVAILABLE");
}

TEST(ServerListen, BusyPortIsAnError) {
  FakeDispatcher d;
  ServerOptions o;
  o.port = 0;
  o.handle_signals = false;
  Server a(o, d);
  ASSERT_TRUE(a.listen().ok());
  o.port = a.port();
  Server b(o, d);
  Status st = b.listen();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("bind"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace imago::http

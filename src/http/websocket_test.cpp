// WebSocket upgrade through the real pipeline (router, failed-auth throttle, api-secret auth on a
// SQLite store) and server, over loopback, with Beast's synchronous websocket client.
#include <gtest/gtest.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "auth/authenticator.h"
#include "auth/provisioning.h"
#include "http/gathering_stream.h"
#include "http/pipeline.h"
#include "http/router.h"
#include "http/server.h"
#include "limits/rate_limiter.h"
#include "store/stores.h"

namespace imago::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using net::ip::tcp;

// Segments with data this socket has received (TCP_INFO's tcpi_data_segs_in, Linux 4.6+). glibc's
// struct tcp_info stops before it; the kernel's layout continues as below (linux/tcp.h, which
// cannot be included beside netinet/tcp.h).
uint32_t data_segments_in(int fd) {
  struct Info {
    tcp_info base;
    uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
    uint32_t segs_out, segs_in, notsent_bytes, min_rtt, data_segs_in, data_segs_out;
  } info{};
  socklen_t len = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 || len < sizeof info) return 0;
  return info.data_segs_in;
}

TEST(GatheringStream, HeldWritesCompleteAtOnceAndLeaveWithTheNextInOneSegment) {
  net::io_context ioc;
  tcp::acceptor acceptor(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  tcp::socket client(ioc);
  client.connect(acceptor.local_endpoint());
  tcp::socket accepted = acceptor.accept();
  accepted.set_option(tcp::no_delay(true));
  detail::GatheringStream<beast::tcp_stream> s{beast::tcp_stream(std::move(accepted))};
  const uint32_t segments = data_segments_in(client.native_handle());
  size_t written = 0;
  auto write = [&](const std::string& bytes) {
    net::async_write(s, net::buffer(bytes), [&](beast::error_code ec, size_t n) {
      EXPECT_FALSE(ec) << ec.message();
      written += n;
    });
    ioc.restart();
    ioc.run();
  };
  s.hold(true);
  write("abc");
  write("de");
  EXPECT_EQ(written, 5u);  // completed, as far as the writer knows
  EXPECT_EQ(s.held_bytes(), 5u);
  EXPECT_EQ(client.available(), 0u);  // loopback delivers within the send: nothing was sent
  s.hold(false);
  write("fgh");
  EXPECT_EQ(written, 8u);
  EXPECT_EQ(s.held_bytes(), 0u);
  std::string got(8, '\0');
  net::read(client, net::buffer(got));
  EXPECT_EQ(got, "abcdefgh");
  EXPECT_EQ(data_segments_in(client.native_handle()) - segments, 1u);
  write("ij");  // nothing held: straight through
  got.assign(2, '\0');
  net::read(client, net::buffer(got));
  EXPECT_EQ(got, "ij");
  EXPECT_EQ(data_segments_in(client.native_handle()) - segments, 2u);
}

// Echoes text, reports what it saw; "flood:N" sends N video frames and then audio.
class EchoHandler final : public WebSocketHandler {
 public:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<uint16_t> closes;
    int opens = 0;
    std::string last_ip;
  };
  explicit EchoHandler(std::shared_ptr<Shared> s) : s_(std::move(s)) {}
  void on_open(std::shared_ptr<WebSocketConnection> c) override {
    conn_ = std::move(c);
    std::lock_guard lock(s_->mu);
    s_->opens++;
    s_->last_ip = conn_->client_ip();
    conn_->send_text("hello");
  }
  void on_text(std::string_view m) override {
    if (m == "bye") {
      conn_->close(ws_close::kNormal, "bye");
      return;
    }
    if (m.rfind("video-then-audio:", 0) == 0) {
      // Stalled-viewer policy: video beyond the queue bound is dropped, audio is kept, in order.
      int n = std::stoi(std::string(m.substr(17)));
      for (int i = 0; i < n; ++i)
        conn_->send_binary(std::make_shared<const std::string>(1000, 'v'), WsMessageClass::kVideo);
      conn_->send_binary(std::make_shared<const std::string>(1000, 'a'), WsMessageClass::kAudio);
      conn_->send_text("queued:" + std::to_string(conn_->queued_bytes()));
      return;
    }
    if (m.rfind("frames:", 0) == 0) {
      // N frames' audio and picture queued at once, then a text: they leave in batches.
      const int n = std::stoi(std::string(m.substr(7)));
      for (int i = 0; i < n; ++i) {
        conn_->send_binary(std::make_shared<const std::string>(100, 'a'), WsMessageClass::kAudio);
        conn_->send_binary(std::make_shared<const std::string>(900, 'v'), WsMessageClass::kVideo);
      }
      conn_->send_text("frames-done");
      return;
    }
    if (m.rfind("burst:", 0) == 0) {
      // Messages queued back to back from another thread, as a room's thread queues a frame's
      // audio and video: each must go out, in order, although they share wake-ups.
      const int n = std::stoi(std::string(m.substr(6)));
      if (burst_.joinable()) burst_.join();
      burst_ = std::thread([c = conn_, n] {
        for (int i = 0; i < n; ++i) {
          c->send_binary(std::make_shared<const std::string>(std::to_string(i)),
                         i % 3 == 2 ? WsMessageClass::kVideo : WsMessageClass::kAudio);
          if (i % 7 == 0) std::this_thread::yield();
        }
        c->send_text("burst-done");
      });
      return;
    }
    conn_->send_text("echo:" + std::string(m));
  }
  ~EchoHandler() override {
    if (burst_.joinable()) burst_.join();
  }
  void on_binary(std::string_view b) override {
    conn_->send_binary(std::make_shared<const std::string>(b), WsMessageClass::kAudio);
  }
  void on_close(uint16_t code) override {
    conn_.reset();
    std::lock_guard lock(s_->mu);
    s_->closes.push_back(code);
    s_->cv.notify_all();
  }

 private:
  std::shared_ptr<Shared> s_;
  std::shared_ptr<WebSocketConnection> conn_;
  std::thread burst_;
};

class WebSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("imago_ws_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    auto st = open_stores("sqlite:" + (dir_ / "db.sqlite").string(), SystemClock::instance());
    ASSERT_TRUE(st.ok()) << st.status().message();
    stores_ = std::move(st).value();
    auto acct = create_account_with_key(*stores_.accounts, "ws", Plan::kPro, 1000);
    ASSERT_TRUE(acct.ok());
    secret_ = acct.value().first_key.secret;
    auth_ = std::make_unique<Authenticator>(*stores_.accounts, SystemClock::instance());
    limiter_ = make_memory_rate_limiter(SystemClock::instance());
    windows_ = make_memory_window_counter(SystemClock::instance());
    shared_ = std::make_shared<EchoHandler::Shared>();

    WebSocketOptions token_opts;
    token_opts.max_message_bytes = 1024;
    token_opts.max_queued_bytes = 8 * 1024;
    router_.add_websocket("/ws/rooms/{room}", token_opts, [this](WebSocketUpgrade& u) {
      if (u.bearer_token != "good-token") {
        return WebSocketAccept::reject(Response::error(401, "UNAUTHORIZED", "bad token"));
      }
      if (u.request.param("room") == "missing") {
        return WebSocketAccept::reject(Response::error(404, "NOT_FOUND", "no such room"));
      }
      return WebSocketAccept::upgrade(std::make_shared<EchoHandler>(shared_));
    });
    WebSocketOptions key_opts;
    key_opts.auth = WebSocketOptions::Auth::kApiKey;
    router_.add_websocket("/ws/keyed", key_opts, [this](WebSocketUpgrade& u) {
      if (!u.request.principal)
        return WebSocketAccept::reject(Response::error(500, "INTERNAL_ERROR", "no principal"));
      return WebSocketAccept::upgrade(std::make_shared<EchoHandler>(shared_));
    });
    router_.add(
        "GET", "/plain", [](Request&) { return Response::bytes(200, "text/plain", "plain"); },
        RouteOptions{.auth = AuthMode::kNone});

    PipelineOptions po;
    po.failed_auth_per_minute = 5;
    pipeline_ = std::make_unique<Pipeline>(router_, *auth_, *limiter_, *windows_, metrics_, po);
    ServerOptions so;
    so.port = 0;
    so.io_threads = 2;
    so.worker_threads = 4;
    so.handle_signals = false;
    so.shutdown_grace_s = 2;
    server_ = std::make_unique<Server>(so, *pipeline_);
    ASSERT_TRUE(server_->listen().ok());
    port_ = server_->port();
    thread_ = std::thread([this] { server_->run(); });
  }

  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
    pipeline_.reset();
    stores_ = {};
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  using Ws = websocket::stream<tcp::socket>;
  std::unique_ptr<Ws> connect_tcp() {
    auto ws = std::make_unique<Ws>(ioc_);
    ws->next_layer().connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)));
    ws->set_option(websocket::stream_base::timeout{std::chrono::seconds(5), std::chrono::seconds(10), false});
    return ws;
  }

  // Handshake with extra request headers; returns the HTTP response either way.
  std::unique_ptr<Ws> handshake(const std::string& target,
                                std::vector<std::pair<std::string, std::string>> headers,
                                websocket::response_type& res, beast::error_code& ec) {
    auto ws = connect_tcp();
    ws->set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
      for (const auto& [k, v] : headers) req.set(k, v);
    }));
    ws->handshake(res, "127.0.0.1", target, ec);
    return ws;
  }

  // Joins room r1 with the good token and reads the handler's "hello"; null (and a failure
  // recorded) when the upgrade fails.
  std::unique_ptr<Ws> join_room() {
    websocket::response_type res;
    beast::error_code ec;
    auto ws = handshake("/ws/rooms/r1", {{"Authorization", "Bearer good-token"}}, res, ec);
    EXPECT_FALSE(ec) << ec.message();
    if (ec) return nullptr;
    EXPECT_EQ(read_text(*ws), "hello");
    return ws;
  }

  std::string read_text(Ws& ws) {
    beast::flat_buffer b;
    ws.read(b);
    return beast::buffers_to_string(b.data());
  }

  uint16_t wait_close_code() {
    std::unique_lock lock(shared_->mu);
    shared_->cv.wait_for(lock, std::chrono::seconds(5), [&] { return !shared_->closes.empty(); });
    return shared_->closes.empty() ? 0 : shared_->closes.back();
  }

  static inline int counter_ = 0;
  std::filesystem::path dir_;
  Stores stores_;
  std::string secret_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<RateLimiter> limiter_;
  std::unique_ptr<WindowCounter> windows_;
  Metrics metrics_;
  Router router_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::shared_ptr<EchoHandler::Shared> shared_;
  net::io_context ioc_;
};

TEST_F(WebSocketTest, AuthorizationBearerUpgradesAndEchoes) {
  websocket::response_type res;
  beast::error_code ec;
  auto ws = handshake("/ws/rooms/r1", {{"Authorization", "Bearer good-token"}, {"X-Request-Id", "rid-ws-1"}},
                      res, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(res.result_int(), 101);
  EXPECT_EQ(res["X-Request-Id"], "rid-ws-1");
  EXPECT_EQ(read_text(*ws), "hello");
  ws->write(net::buffer(std::string("ping me")));
  EXPECT_EQ(read_text(*ws), "echo:ping me");
  ws->binary(true);
  ws->write(net::buffer(std::string("\x01\x02\x00\x03", 4)));
  beast::flat_buffer b;
  ws->read(b);
  EXPECT_TRUE(ws->got_binary());
  EXPECT_EQ(beast::buffers_to_string(b.data()), std::string("\x01\x02\x00\x03", 4));
  ws->close(websocket::close_code::normal);
  EXPECT_EQ(wait_close_code(), 1000);
  std::lock_guard lock(shared_->mu);
  EXPECT_EQ(shared_->last_ip, "127.0.0.1");
}

TEST_F(WebSocketTest, SubprotocolBearerUpgradesAndAnswersImagoV1Only) {
  websocket::response_type res;
  beast::error_code ec;
  auto ws = handshake("/ws/rooms/r1", {{"Sec-WebSocket-Protocol", "imago.v1, bearer.good-token"}}, res, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(res[beast::http::field::sec_websocket_protocol], "imago.v1");
  EXPECT_EQ(read_text(*ws), "hello");
  ws->close(websocket::close_code::normal);
}

TEST_F(WebSocketTest, BadTokenIs401AndQueryStringTokenIsNotAccepted) {
  websocket::response_type res;
  beast::error_code ec;
  handshake("/ws/rooms/r1", {{"Authorization", "Bearer wrong"}}, res, ec);
  EXPECT_EQ(ec, websocket::error::upgrade_declined);
  EXPECT_EQ(res.result_int(), 401);
  EXPECT_NE(res.body().find("\"UNAUTHORIZED\""), std::string::npos) << res.body();
  EXPECT_FALSE(res["X-Request-Id"].empty());

  handshake("/ws/rooms/r1?token=good-token&access_token=good-token", {}, res, ec);
  EXPECT_EQ(res.result_int(), 401);
}

TEST_F(WebSocketTest, FactoryRejectionIsAPlainResponse) {
  websocket::response_type res;
  beast::error_code ec;
  handshake("/ws/rooms/missing", {{"Authorization", "Bearer good-token"}}, res, ec);
  EXPECT_EQ(res.result_int(), 404);
  handshake("/ws/nothing-here", {{"Authorization", "Bearer good-token"}}, res, ec);
  EXPECT_EQ(res.result_int(), 404);
}

TEST_F(WebSocketTest, FailedTokenAuthIsThrottledPerIp) {
  websocket::response_type res;
  beast::error_code ec;
  for (int i = 0; i < 5; ++i) {
    handshake("/ws/rooms/r1", {{"Authorization", "Bearer wrong"}}, res, ec);
    ASSERT_EQ(res.result_int(), 401) << i;
  }
  handshake("/ws/rooms/r1", {{"Authorization", "Bearer wrong"}}, res, ec);
  EXPECT_EQ(res.result_int(), 429);
  EXPECT_FALSE(res["Retry-After"].empty());
}

TEST_F(WebSocketTest, ApiKeyRouteAcceptsHeaderOrSubprotocolSecret) {
  websocket::response_type res;
  beast::error_code ec;
  auto ws = handshake("/ws/keyed", {{"api-secret", secret_}}, res, ec);
  ASSERT_FALSE(ec) << ec.message() << " " << res.result_int();
  EXPECT_EQ(read_text(*ws), "hello");
  ws->close(websocket::close_code::normal);

  auto ws2 = handshake("/ws/keyed", {{"Sec-WebSocket-Protocol", "imago.v1, bearer." + secret_}}, res, ec);
  ASSERT_FALSE(ec) << ec.message() << " " << res.result_int();
  ws2->close(websocket::close_code::normal);

  handshake("/ws/keyed", {}, res, ec);
  EXPECT_EQ(res.result_int(), 401);
  EXPECT_NE(res.body().find("MISSING_AUTH"), std::string::npos);
}

TEST_F(WebSocketTest, PlainGetOnWebSocketRouteIs426AndUpgradeOnPlainRouteIsIgnored) {
  tcp::socket s(ioc_);
  s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port_)));
  beast::http::request<beast::http::string_body> req{beast::http::verb::get, "/ws/rooms/r1", 11};
  req.set(beast::http::field::host, "127.0.0.1");
  req.set("Authorization", "Bearer good-token");
  beast::http::write(s, req);
  beast::flat_buffer b;
  beast::http::response<beast::http::string_body> res;
  beast::http::read(s, b, res);
  EXPECT_EQ(res.result_int(), 426);

  websocket::response_type wres;
  beast::error_code ec;
  handshake("/plain", {}, wres, ec);
  EXPECT_EQ(wres.result_int(), 200);
}

TEST_F(WebSocketTest, OversizedMessageClosesWith1009) {
  auto ws = join_room();
  ASSERT_TRUE(ws);
  beast::error_code ec;
  beast::error_code wec;
  ws->write(net::buffer(std::string(4096, 'x')), wec);
  if (!wec) {  // the server may drop the socket while the payload is still being sent (EPIPE)
    beast::flat_buffer b;
    ws->read(b, ec);
    if (ec == websocket::error::closed) {
      EXPECT_EQ(ws->reason().code, 1009);
    }
  }
  EXPECT_EQ(wait_close_code(), 1009);
}

TEST_F(WebSocketTest, ServerCloseHasCodeAndReason) {
  auto ws = join_room();
  ASSERT_TRUE(ws);
  beast::error_code ec;
  ws->write(net::buffer(std::string("bye")));
  beast::flat_buffer b;
  ws->read(b, ec);
  EXPECT_EQ(ec, websocket::error::closed);
  EXPECT_EQ(ws->reason().code, 1000);
  EXPECT_EQ(std::string(ws->reason().reason.c_str()), "bye");
  EXPECT_EQ(wait_close_code(), 1000);
}

TEST_F(WebSocketTest, FullSendQueueDropsVideoKeepsAudioInOrder) {
  auto ws = join_room();
  ASSERT_TRUE(ws);
  // 50 KB of video into an 8 KiB queue; the handler runs on the I/O thread, so nothing is written
  // while it enqueues: everything but about 8 KiB of video must be dropped.
  ws->write(net::buffer(std::string("video-then-audio:50")));
  int video = 0, audio = 0;
  std::string queued;
  for (int i = 0; i < 60 && queued.empty(); ++i) {
    beast::flat_buffer b;
    ws->read(b);
    std::string m = beast::buffers_to_string(b.data());
    if (ws->got_text()) {
      queued = m;
    } else if (m[0] == 'v') {
      EXPECT_EQ(audio, 0) << "video after audio: order broken";
      video++;
    } else {
      audio++;
    }
  }
  EXPECT_EQ(audio, 1);
  EXPECT_LE(video, 8);
  EXPECT_GE(video, 1);
  EXPECT_EQ(queued.rfind("queued:", 0), 0u);
  EXPECT_LE(std::stoul(queued.substr(7)), 8u * 1024);
  ws->close(websocket::close_code::normal);
}

TEST_F(WebSocketTest, MessagesQueuedFromAnotherThreadAllArriveInOrder) {
  auto ws = join_room();
  ASSERT_TRUE(ws);
  beast::error_code ec;
  for (int round = 0; round < 3; ++round) {
    ws->write(net::buffer(std::string("burst:300")));
    int next = 0;
    std::string done;
    while (done.empty()) {
      beast::flat_buffer b;
      ws->read(b, ec);  // a lost wake-up would leave messages queued: the read times out
      ASSERT_FALSE(ec) << ec.message() << " after " << next << " messages";
      std::string m = beast::buffers_to_string(b.data());
      if (ws->got_text()) {
        done = m;
      } else {
        ASSERT_EQ(m, std::to_string(next)) << "order broken";
        ++next;
      }
    }
    EXPECT_EQ(next, 300);
    EXPECT_EQ(done, "burst-done");
  }
  ws->close(websocket::close_code::normal);
}

TEST_F(WebSocketTest, MessagesQueuedTogetherLeaveInBatches) {
  auto ws = join_room();
  ASSERT_TRUE(ws);
  beast::error_code ec;
  const uint32_t segments = data_segments_in(ws->next_layer().native_handle());
  ws->write(net::buffer(std::string("frames:8")));
  int audio = 0, video = 0;
  for (;;) {
    beast::flat_buffer b;
    ws->read(b, ec);
    ASSERT_FALSE(ec) << ec.message();
    const std::string m = beast::buffers_to_string(b.data());
    if (ws->got_text()) {
      EXPECT_EQ(m, "frames-done");
      break;
    }
    ASSERT_EQ(m[0], audio == video ? 'a' : 'v') << "order broken";  // a, v, a, v, ...
    (m[0] == 'a' ? audio : video)++;
  }
  EXPECT_EQ(audio, 8);
  EXPECT_EQ(video, 8);
  // 17 messages: the first on its own (the queue was empty), then batches of four. One send each
  // (one segment, with no delay) would be 17 segments.
  EXPECT_LE(data_segments_in(ws->next_layer().native_handle()) - segments, 6u);
  ws->close(websocket::close_code::normal);
}

TEST_F(WebSocketTest, ShutdownClosesWithGoingAway) {
  auto ws = join_room();
  ASSERT_TRUE(ws);
  beast::error_code ec;
  server_->stop();
  beast::flat_buffer b;
  ws->read(b, ec);
  EXPECT_EQ(ec, websocket::error::closed);
  EXPECT_EQ(ws->reason().code, 1001);
  EXPECT_EQ(wait_close_code(), 1001);
  thread_.join();  // run() returns once the WebSocket is gone
}

}  // namespace
}  // namespace imago::http

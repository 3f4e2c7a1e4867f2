// http::Server with TLS (--tls-cert / --tls-key) over real loopback sockets, with a certificate
// made at test time: HTTPS requests (keep-alive, streamed), WSS, plain HTTP on the TLS port, a
// client that never finishes its handshake, the per-address connection cap, bad files at listen().
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "http/server.h"
#include "support/test_cert.h"

namespace imago::http {
namespace {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;
using net::ip::tcp;
using Clock = std::chrono::steady_clock;

class EchoWs final : public WebSocketHandler {
 public:
  void on_open(std::shared_ptr<WebSocketConnection> c) override {
    conn_ = std::move(c);
    conn_->send_text("hello");
  }
  void on_text(std::string_view m) override { conn_->send_text("echo:" + std::string(m)); }
  void on_binary(std::string_view) override {}
  void on_close(uint16_t) override { conn_.reset(); }

 private:
  std::shared_ptr<WebSocketConnection> conn_;
};

class TlsDispatcher : public Dispatcher {
 public:
  RouteInfo route_info(std::string_view, std::string_view) const override { return {}; }
  Response dispatch(Request& req) override {
    if (req.path == "/stream") {
      Response r = Response::bytes(200, "text/plain", "");
      r.stream = [i = 0]() mutable -> std::optional<std::string> {
        if (i == 3) return std::nullopt;
        return "chunk" + std::to_string(i++) + ";";
      };
      return r;
    }
    return Response::bytes(200, "text/plain", "path=" + req.path + " body=" + req.body);
  }
  UpgradeDecision upgrade(Request&) override {
    UpgradeDecision d;
    d.handler = std::make_shared<EchoWs>();
    return d;
  }
};

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("imago_tls_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    cert_ = testing::write_test_cert(dir_.string());
    client_ctx_.load_verify_file(cert_.cert_file);
    client_ctx_.set_verify_mode(ssl::verify_peer);
  }
  void TearDown() override {
    if (server_) {
      server_->stop();
      thread_.join();
    }
    std::filesystem::remove_all(dir_);
  }
  ServerOptions tls_options() {
    ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.handle_signals = false;
    o.io_threads = 2;
    o.worker_threads = 2;
    o.tls_cert_file = cert_.cert_file;
    o.tls_key_file = cert_.key_file;
    return o;
  }
  void start(ServerOptions o) {
    server_ = std::make_unique<Server>(o, dispatcher_);
    ASSERT_TRUE(server_->listen().ok());
    thread_ = std::thread([this] { server_->run(); });
  }
  tcp::endpoint endpoint() const {
    return {net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(server_->port())};
  }
  // A verified TLS connection (the certificate must match 127.0.0.1).
  std::unique_ptr<ssl::stream<tcp::socket>> tls_connect() {
    auto s = std::make_unique<ssl::stream<tcp::socket>>(ioc_, client_ctx_);
    s->next_layer().connect(endpoint());
    s->set_verify_callback(ssl::host_name_verification("127.0.0.1"));
    s->handshake(ssl::stream_base::client);
    return s;
  }

  static inline int counter_ = 0;
  std::filesystem::path dir_;
  testing::TestCert cert_;
  TlsDispatcher dispatcher_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  net::io_context ioc_;
  ssl::context client_ctx_{ssl::context::tls_client};
};

TEST_F(TlsTest, HttpsKeepAliveRequestsAndStreamedResponse) {
  start(tls_options());
  auto s = tls_connect();
  beast::flat_buffer buf;
  for (int i = 0; i < 3; ++i) {  // one connection, several requests
    bhttp::request<bhttp::string_body> req{bhttp::verb::post, "/hello", 11};
    req.set(bhttp::field::host, "127.0.0.1");
    req.body() = "n" + std::to_string(i);
    req.prepare_payload();
    bhttp::write(*s, req);
    bhttp::response<bhttp::string_body> res;
    bhttp::read(*s, buf, res);
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(res.body(), "path=/hello body=n" + std::to_string(i));
    EXPECT_TRUE(res.keep_alive());
  }
  bhttp::request<bhttp::string_body> req{bhttp::verb::get, "/stream", 11};
  req.set(bhttp::field::host, "127.0.0.1");
  bhttp::write(*s, req);
  bhttp::response<bhttp::string_body> res;
  bhttp::read(*s, buf, res);
  EXPECT_EQ(res.result_int(), 200u);
  EXPECT_TRUE(res.chunked());
  EXPECT_EQ(res.body(), "chunk0;chunk1;chunk2;");
}

TEST_F(TlsTest, OnlyTls12AndUpIsOffered) {
  start(tls_options());
  ssl::context old(ssl::context::tls_client);
  SSL_CTX_set_max_proto_version(old.native_handle(), TLS1_1_VERSION);
  SSL_CTX_set_security_level(old.native_handle(), 0);  // let this client even try TLS 1.1
  ssl::stream<tcp::socket> s(ioc_, old);
  s.next_layer().connect(endpoint());
  beast::error_code ec;
  s.handshake(ssl::stream_base::client, ec);
  EXPECT_TRUE(ec) << "a TLS 1.1 handshake succeeded";
  // And a normal client negotiates at least TLS 1.2, without compression.
  auto ok = tls_connect();
  EXPECT_GE(SSL_version(ok->native_handle()), TLS1_2_VERSION);
  EXPECT_EQ(SSL_get_current_compression(ok->native_handle()), nullptr);
}

TEST_F(TlsTest, WebSocketOverTls) {
  start(tls_options());
  auto s = tls_connect();
  websocket::stream<ssl::stream<tcp::socket>&> ws(*s);
  ws.handshake("127.0.0.1", "/ws");
  beast::flat_buffer buf;
  ws.read(buf);
  EXPECT_EQ(beast::buffers_to_string(buf.data()), "hello");
  buf.clear();
  ws.write(net::buffer(std::string("over tls")));
  ws.read(buf);
  EXPECT_EQ(beast::buffers_to_string(buf.data()), "echo:over tls");
  ws.close(websocket::close_code::normal);
}

TEST_F(TlsTest, PlainHttpOnTheTlsPortGetsAClear400AndIsClosed) {
  start(tls_options());
  tcp::socket sock(ioc_);
  sock.connect(endpoint());
  net::write(sock, net::buffer(std::string("GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")));
  beast::flat_buffer buf;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(sock, buf, res);
  EXPECT_EQ(res.result_int(), 400u);
  EXPECT_NE(res.body().find("BAD_REQUEST"), std::string::npos) << res.body();
  EXPECT_NE(res.body().find("HTTPS"), std::string::npos) << res.body();
  EXPECT_FALSE(res.keep_alive());
  beast::error_code ec;
  char c;
  sock.read_some(net::buffer(&c, 1), ec);  // then the server closes
  EXPECT_EQ(ec, net::error::eof);
}

TEST_F(TlsTest, ClientThatNeverHandshakesIsDroppedAtTheTimeout) {
  auto o = tls_options();
  o.tls_handshake_timeout_s = 1;
  start(o);
  tcp::socket idle(ioc_);
  idle.connect(endpoint());
  tcp::socket partial(ioc_);  // starts a ClientHello and stalls
  partial.connect(endpoint());
  const unsigned char hello_start[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
  net::write(partial, net::buffer(hello_start));
  // Meanwhile the server serves others.
  auto s = tls_connect();
  // Both are dropped by the handshake timer (how soon after it fires depends on the machine).
  for (tcp::socket* sock : {&idle, &partial}) {
    beast::error_code ec;
    char c;
    sock->read_some(net::buffer(&c, 1), ec);
    EXPECT_TRUE(ec == net::error::eof || ec == net::error::connection_reset) << ec.message();
  }
  for (int i = 0; i < 50 && server_->connection_count() > 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(server_->connection_count(), 1);  // only the finished handshake is left
}

TEST_F(TlsTest, PerAddressCapAppliesBeforeTheHandshake) {
  auto o = tls_options();
  o.max_connections_per_ip = 2;
  start(o);
  auto a = tls_connect();
  auto b = tls_connect();
  ssl::stream<tcp::socket> third(ioc_, client_ctx_);
  third.next_layer().connect(endpoint());
  beast::error_code ec;
  third.handshake(ssl::stream_base::client, ec);
  EXPECT_TRUE(ec) << "a third connection from one address completed its handshake";
  EXPECT_EQ(server_->connection_count(), 2);
}

TEST_F(TlsTest, ListenFailsClearlyOnBadFiles) {
  {
    auto o = tls_options();
    o.tls_cert_file = (dir_ / "missing.pem").string();
    Server s(o, dispatcher_);
    Status st = s.listen();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("missing.pem"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("No such file"), std::string::npos) << st.message();
  }
  {
    auto o = tls_options();
    std::ofstream((dir_ / "junk.pem").string()) << "not a certificate\n";
    o.tls_cert_file = (dir_ / "junk.pem").string();
    Server s(o, dispatcher_);
    Status st = s.listen();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("cannot load TLS certificate"), std::string::npos) << st.message();
  }
  {
    auto o = tls_options();
    // A key of another certificate.
    auto other_dir = dir_ / "other";
    std::filesystem::create_directories(other_dir);
    o.tls_key_file = testing::write_test_cert(other_dir.string()).key_file;
    Server s(o, dispatcher_);
    Status st = s.listen();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("does not match"), std::string::npos) << st.message();
  }
  {
    auto o = tls_options();
    o.tls_key_file.clear();
    Server s(o, dispatcher_);
    Status st = s.listen();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("--tls-key"), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace imago::http

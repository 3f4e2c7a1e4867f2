#include "http/websocket_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>
#include <mutex>
#include <thread>

namespace imago::http {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

// The connection's state behind the plain interface; one subclass per transport (plain, TLS).
struct WebSocketClient::Impl {
  virtual ~Impl() = default;
  virtual void start(Handlers handlers) = 0;
  virtual bool send(std::string message, bool binary) = 0;
  virtual void close() = 0;
};

namespace {

tcp::socket& lowest(websocket::stream<tcp::socket>& ws) {
  return ws.next_layer();
}
tcp::socket& lowest(websocket::stream<ssl::stream<tcp::socket>>& ws) {
  return ws.next_layer().next_layer();
}

// Every operation runs on one I/O thread (an OpenSSL stream must never be read and written from
// two threads at once): a read loop that calls the handlers, and writes taken one at a time from
// the outbox that send() fills from any thread.
template <class WS>
struct Connection final : WebSocketClient::Impl, std::enable_shared_from_this<Connection<WS>> {
  Connection() : ws(ioc) {}
  explicit Connection(std::shared_ptr<ssl::context> c) : ctx(std::move(c)), ws(ioc, *ctx) {}

  std::shared_ptr<ssl::context> ctx;  // TLS only; the stream uses it for its whole life
  boost::asio::io_context ioc;
  WS ws;
  WebSocketClient::Handlers handlers;
  std::thread io;
  beast::flat_buffer in;
  std::mutex mu;
  std::deque<std::pair<std::string, bool>> outbox;
  bool writing = false;  // a write is in flight (or posted)
  bool closing = false;  // close() was called: queued messages go out, then the socket is shut
  bool closed = false;   // the connection is gone (either side)

  void start(WebSocketClient::Handlers h) override {
    handlers = std::move(h);
    read_next();
    io = std::thread([self = this->shared_from_this()] { self->ioc.run(); });
  }

  void read_next() {
    ws.async_read(in, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) {
        uint16_t code = self->ws.reason().code;
        std::string reason(self->ws.reason().reason.c_str());
        if (code == 0) code = 1006;
        {
          std::lock_guard lock(self->mu);
          self->closed = true;
        }
        beast::error_code ignored;
        lowest(self->ws).close(ignored);  // ends a write that is still waiting for the peer
        if (self->handlers.closed) self->handlers.closed(code, reason);
        return;
      }
      std::string msg = beast::buffers_to_string(self->in.data());
      self->in.consume(self->in.size());
      if (self->handlers.message) self->handlers.message(std::move(msg), !self->ws.got_text());
      self->read_next();
    });
  }

  bool send(std::string message, bool binary) override {
    {
      std::lock_guard lock(mu);
      if (closed || closing) return false;
      outbox.emplace_back(std::move(message), binary);
      if (writing) return true;
      writing = true;
    }
    boost::asio::post(ioc, [self = this->shared_from_this()] { self->write_next(); });
    return true;
  }

  // On the I/O thread.
  void write_next() {
    std::pair<std::string, bool> next;
    {
      std::lock_guard lock(mu);
      if (closed || outbox.empty()) {
        writing = false;
        if (closing) shut();
        return;
      }
      next = std::move(outbox.front());
      outbox.pop_front();
    }
    auto msg = std::make_shared<std::string>(std::move(next.first));
    ws.binary(next.second);
    ws.async_write(boost::asio::buffer(*msg),
                   [self = this->shared_from_this(), msg](beast::error_code ec, size_t) {
                     if (ec) {
                       {
                         std::lock_guard lock(self->mu);
                         self->writing = false;
                       }
                       self->shut();  // the connection is broken: end the read too
                       return;
                     }
                     self->write_next();
                   });
  }

  // No close handshake: the socket is shut, the read ends, and the peer sees its viewer go away
  // (1006), as for a viewer who left.
  void shut() {
    beast::error_code ec;
    lowest(ws).shutdown(tcp::socket::shutdown_both, ec);
  }

  void close() override {
    bool flush;
    {
      std::lock_guard lock(mu);
      if (closing) return;
      closing = true;
      flush = writing;  // the write loop shuts the socket once the outbox is empty
    }
    if (!flush) boost::asio::post(ioc, [self = this->shared_from_this()] { self->shut(); });
    if (io.joinable() && io.get_id() == std::this_thread::get_id()) {
      // Called from a handler on the I/O thread: it ends by itself once the handler returns.
      io.detach();
      return;
    }
    if (io.joinable()) io.join();
    // What was posted after the I/O thread had ended (or before it started) runs here, so no
    // handler keeps this connection alive from an idle queue.
    ioc.restart();
    ioc.run();
  }
};

struct Target {
  bool tls = false;
  std::string host, port, hostport;
};

Result<Target> parse_node_url(const std::string& base_url) {
  Target t;
  std::string rest;
  if (base_url.rfind("http://", 0) == 0) {
    rest = base_url.substr(7);
  } else if (base_url.rfind("https://", 0) == 0) {
    rest = base_url.substr(8);
    t.tls = true;
  } else {
    return Status::Invalid("node URL must start with http:// or https://: " + base_url);
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || rest.find('/') != std::string::npos || colon + 1 == rest.size())
    return Status::Invalid("node URL must be http(s)://HOST:PORT: " + base_url);
  t.hostport = rest;
  t.host = rest.substr(0, colon);
  t.port = rest.substr(colon + 1);
  if (t.host.size() >= 2 && t.host.front() == '[' && t.host.back() == ']')
    t.host = t.host.substr(1, t.host.size() - 2);
  return t;
}

// A client context that verifies the peer: against the system's trust store, or only against
// `ca_file` when one is given (a cluster's private CA).
Result<std::shared_ptr<ssl::context>> client_context(const std::string& ca_file) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::no_compression);
  ctx->set_verify_mode(ssl::verify_peer);
  beast::error_code ec;
  if (ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec) return Status::Internal("cannot load the system's trusted certificates: " + ec.message());
  } else {
    ctx->load_verify_file(ca_file, ec);
    if (ec) return Status::Invalid("cannot load the node CA file " + ca_file + ": " + ec.message());
  }
  return ctx;
}

// Resolves, connects and runs `handshake` (the TLS and/or WebSocket handshakes), all bounded by
// the timeout. Returns what the handshakes reported; would_block on a timeout.
template <class WS, class Handshake>
beast::error_code connect_bounded(Connection<WS>& c, const Target& t, int timeout_ms, Handshake handshake) {
  tcp::resolver resolver(c.ioc);
  beast::error_code result = boost::asio::error::would_block;
  resolver.async_resolve(t.host, t.port, [&](beast::error_code ec, tcp::resolver::results_type eps) {
    if (ec) {
      result = ec;
      return;
    }
    boost::asio::async_connect(lowest(c.ws), eps, [&](beast::error_code ec2, const tcp::endpoint&) {
      if (ec2) {
        result = ec2;
        return;
      }
      handshake([&](beast::error_code ec3) { result = ec3; });
    });
  });
  c.ioc.run_for(std::chrono::milliseconds(timeout_ms));
  if (result == boost::asio::error::would_block) {
    // Timed out: cancel whatever is pending and let its handler run before the locals go.
    beast::error_code ignored;
    resolver.cancel();
    lowest(c.ws).close(ignored);
    c.ioc.restart();
    c.ioc.run();
    return boost::asio::error::would_block;
  }
  c.ioc.restart();  // run() stopped for lack of work; start() runs it again
  return result;
}

}  // namespace

WebSocketClient::WebSocketClient(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

WebSocketClient::~WebSocketClient() {
  close();
}

Result<std::unique_ptr<WebSocketClient>> WebSocketClient::connect(const std::string& base_url,
                                                                  const std::string& target,
                                                                  const Headers& headers, int timeout_ms,
                                                                  Refused* refused, const ClientTls& tls) {
  auto t = parse_node_url(base_url);
  if (!t.ok()) return t.status();
  auto decorate = [headers](websocket::request_type& req) {
    for (const auto& [k, v] : headers.all()) req.set(k, v);
  };
  websocket::response_type res;
  beast::error_code result;
  std::shared_ptr<Impl> impl;
  if (!t->tls) {
    auto c = std::make_shared<Connection<websocket::stream<tcp::socket>>>();
    c->ws.read_message_max(64 * 1024 * 1024);
    c->ws.set_option(websocket::stream_base::decorator(decorate));
    result = connect_bounded(*c, *t, timeout_ms,
                             [&](auto done) { c->ws.async_handshake(res, t->hostport, target, done); });
    impl = c;
  } else {
    auto ctx = client_context(tls.ca_file);
    if (!ctx.ok()) return ctx.status();
    auto c =
        std::make_shared<Connection<websocket::stream<ssl::stream<tcp::socket>>>>(std::move(ctx).value());
    c->ws.read_message_max(64 * 1024 * 1024);
    c->ws.set_option(websocket::stream_base::decorator(decorate));
    SSL* ssl = c->ws.next_layer().native_handle();
    // The certificate must name the host of the node URL: an IP address or a DNS name (with SNI).
    beast::error_code ip_ec;
    boost::asio::ip::make_address(t->host, ip_ec);
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    const bool named = ip_ec ? (SSL_set_tlsext_host_name(ssl, t->host.c_str()) == 1 &&
                                X509_VERIFY_PARAM_set1_host(param, t->host.c_str(), t->host.size()) == 1)
                             : X509_VERIFY_PARAM_set1_ip_asc(param, t->host.c_str()) == 1;
    if (!named) return Status::Internal("cannot set the TLS peer name " + t->host);
    result = connect_bounded(*c, *t, timeout_ms, [&](auto done) {
      c->ws.next_layer().async_handshake(ssl::stream_base::client, [&, done](beast::error_code ec) {
        if (ec) return done(ec);
        c->ws.async_handshake(res, t->hostport, target, done);
      });
    });
    impl = c;
  }
  if (result == boost::asio::error::would_block)
    return Status::Unavailable("the node at " + base_url + " did not answer within " +
                               std::to_string(timeout_ms) + " ms");
  if (result) {
    if (refused && res.result_int() != 0 && result == websocket::error::upgrade_declined) {
      refused->status = static_cast<int>(res.result_int());
      refused->body = res.body();
      refused->content_type = std::string(res[beast::http::field::content_type]);
    }
    return Status::Unavailable("relay to " + base_url + " failed: " + result.message());
  }
  return std::unique_ptr<WebSocketClient>(new WebSocketClient(std::move(impl)));
}

void WebSocketClient::start(Handlers handlers) {
  impl_->start(std::move(handlers));
}

bool WebSocketClient::send(std::string message, bool binary) {
  return impl_ && impl_->send(std::move(message), binary);
}

void WebSocketClient::close() {
  if (!impl_) return;
  impl_->close();
  impl_.reset();
}

}  // namespace imago::http

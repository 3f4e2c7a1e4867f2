#include "http/websocket_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace imago::http {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = boost::asio::ip::tcp;

struct WebSocketClient::Impl {
  boost::asio::io_context ioc;
  websocket::stream<tcp::socket> ws{ioc};
  Handlers handlers;
  std::thread reader, writer;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<std::string, bool>> outbox;
  bool closing = false;  // close() was called: the writer stops, the reader is being shut down
  bool closed = false;   // the connection is gone (either side)

  void read_loop() {
    for (;;) {
      beast::flat_buffer buf;
      beast::error_code ec;
      ws.read(buf, ec);
      if (ec) {
        uint16_t code = ws.reason().code;
        std::string reason(ws.reason().reason.c_str());
        if (code == 0) code = 1006;
        {
          std::lock_guard lock(mu);
          closed = true;
        }
        cv.notify_all();
        if (handlers.closed) handlers.closed(code, reason);
        return;
      }
      if (handlers.message) handlers.message(beast::buffers_to_string(buf.data()), !ws.got_text());
    }
  }

  void write_loop() {
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return closing || closed || !outbox.empty(); });
      if (closed) return;
      if (outbox.empty()) return;  // closing with nothing left to send
      auto [msg, binary] = std::move(outbox.front());
      outbox.pop_front();
      lock.unlock();
      beast::error_code ec;
      ws.binary(binary);
      ws.write(boost::asio::buffer(msg), ec);
      lock.lock();
      if (ec) return;
    }
  }
};

WebSocketClient::WebSocketClient(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

WebSocketClient::~WebSocketClient() {
  close();
}

Result<std::unique_ptr<WebSocketClient>> WebSocketClient::connect(const std::string& base_url,
                                                                  const std::string& target,
                                                                  const Headers& headers, int timeout_ms,
                                                                  Refused* refused) {
  // http://HOST:PORT only: node URLs name peers on the cluster's private network.
  if (base_url.rfind("http://", 0) != 0)
    return Status::Invalid("node URL must start with http://: " + base_url);
  std::string hostport = base_url.substr(7);
  while (!hostport.empty() && hostport.back() == '/') hostport.pop_back();
  const size_t colon = hostport.rfind(':');
  if (colon == std::string::npos || hostport.find('/') != std::string::npos) {
    return Status::Invalid("node URL must be http://HOST:PORT: " + base_url);
  }
  std::string host = hostport.substr(0, colon), port = hostport.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);

  auto impl = std::make_shared<Impl>();
  Impl& c = *impl;
  c.ws.read_message_max(64 * 1024 * 1024);
  c.ws.set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
    for (const auto& [k, v] : headers.all()) req.set(k, v);
  }));
  // Connect and handshake asynchronously so both are bounded by the timeout; later reads and
  // writes are synchronous on the reader and writer threads.
  tcp::resolver resolver(c.ioc);
  websocket::response_type res;
  beast::error_code result = boost::asio::error::would_block;
  resolver.async_resolve(host, port, [&](beast::error_code ec, tcp::resolver::results_type eps) {
    if (ec) {
      result = ec;
      return;
    }
    boost::asio::async_connect(c.ws.next_layer(), eps, [&](beast::error_code ec2, const tcp::endpoint&) {
      if (ec2) {
        result = ec2;
        return;
      }
      c.ws.async_handshake(res, hostport, target, [&](beast::error_code ec3) { result = ec3; });
    });
  });
  c.ioc.run_for(std::chrono::milliseconds(timeout_ms));
  if (result == boost::asio::error::would_block) {
    // Timed out: cancel whatever is pending and let its handler run before the locals go.
    beast::error_code ignored;
    resolver.cancel();
    c.ws.next_layer().close(ignored);
    c.ioc.restart();
    c.ioc.run();
    return Status::Unavailable("the node at " + base_url + " did not answer within " +
                               std::to_string(timeout_ms) + " ms");
  }
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
  Impl& c = *impl_;
  c.handlers = std::move(handlers);
  // The threads share the state, so a handler may end the relay from the reader thread itself.
  c.reader = std::thread([keep = impl_] { keep->read_loop(); });
  c.writer = std::thread([keep = impl_] { keep->write_loop(); });
}

bool WebSocketClient::send(std::string message, bool binary) {
  Impl& c = *impl_;
  {
    std::lock_guard lock(c.mu);
    if (c.closed || c.closing) return false;
    c.outbox.emplace_back(std::move(message), binary);
  }
  c.cv.notify_all();
  return true;
}

void WebSocketClient::close() {
  if (!impl_) return;
  Impl& c = *impl_;
  {
    std::lock_guard lock(c.mu);
    c.closing = true;
  }
  c.cv.notify_all();
  if (c.writer.joinable()) c.writer.join();
  // No close handshake (a synchronous close would read concurrently with the reader thread): the
  // socket is shut, the reader ends, and the peer sees its viewer go away.
  beast::error_code ec;
  c.ws.next_layer().shutdown(tcp::socket::shutdown_both, ec);
  if (c.reader.joinable()) {
    // Called from a handler on the reader thread: it ends by itself once the handler returns.
    if (c.reader.get_id() == std::this_thread::get_id()) {
      c.reader.detach();
    } else {
      c.reader.join();
    }
  }
  impl_.reset();
}

}  // namespace imago::http

#include "support/ws_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/json.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace imago::testing {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = boost::asio::ip::tcp;

namespace ssl = boost::asio::ssl;

struct WsClient::Impl {
  boost::asio::io_context ioc;
  std::optional<ssl::context> tls_ctx;
  std::optional<websocket::stream<tcp::socket>> plain;
  std::optional<websocket::stream<ssl::stream<tcp::socket>>> tls;
  std::thread reader;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<WsMessage> inbox;
  bool closed = false;
  int close_code = 0;
  std::mutex write_mu;

  // Calls f with whichever stream this client uses.
  template <class F>
  decltype(auto) with_ws(F&& f) {
    if (tls) return f(*tls);
    return f(*plain);
  }
  tcp::socket& socket() {
    if (tls) return tls->next_layer().next_layer();
    return plain->next_layer();
  }

  void read_loop() {
    with_ws([this](auto& ws) { read_loop(ws); });
  }

  template <class Ws>
  void read_loop(Ws& ws) {
    for (;;) {
      beast::flat_buffer buf;
      beast::error_code ec;
      ws.read(buf, ec);
      std::lock_guard l(mu);
      if (ec) {
        closed = true;
        close_code = ws.reason().code;
        if (close_code == 0) close_code = 1006;
        cv.notify_all();
        return;
      }
      inbox.push_back(
          {ws.got_text(), beast::buffers_to_string(buf.data()), std::chrono::steady_clock::now()});
      cv.notify_all();
    }
  }
};

WsClient::WsClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WsClient::~WsClient() {
  close();
}

std::unique_ptr<WsClient> WsClient::connect(int port, const std::string& target, const Options& o,
                                            int* http_status, std::string* http_body,
                                            std::string* subprotocol) {
  auto impl = std::make_unique<Impl>();
  beast::error_code ec;
  if (!o.ca_file.empty()) {
    impl->tls_ctx.emplace(ssl::context::tls_client);
    impl->tls_ctx->load_verify_file(o.ca_file, ec);
    if (ec) {
      if (http_status) *http_status = -1;
      if (http_body) *http_body = "cannot load " + o.ca_file + ": " + ec.message();
      return nullptr;
    }
    impl->tls_ctx->set_verify_mode(ssl::verify_peer);
    impl->tls.emplace(impl->ioc, *impl->tls_ctx);
  } else {
    impl->plain.emplace(impl->ioc);
  }
  tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  impl->socket().connect(ep, ec);
  if (ec) {
    if (http_status) *http_status = -1;
    return nullptr;
  }
  if (impl->tls) {
    impl->tls->next_layer().set_verify_callback(ssl::host_name_verification("127.0.0.1"));
    impl->tls->next_layer().handshake(ssl::stream_base::client, ec);
    if (ec) {
      if (http_status) *http_status = -1;
      if (http_body) *http_body = "TLS handshake: " + ec.message();
      return nullptr;
    }
  }
  websocket::response_type res;
  impl->with_ws([&](auto& ws) {
    ws.set_option(websocket::stream_base::decorator([o](websocket::request_type& req) {
      if (o.via_subprotocol) {
        req.set(beast::http::field::sec_websocket_protocol, "imago.v1, bearer." + o.bearer);
      } else if (!o.bearer.empty()) {
        req.set(beast::http::field::authorization, "Bearer " + o.bearer);
      }
      if (!o.origin.empty()) req.set(beast::http::field::origin, o.origin);
    }));
    ws.read_message_max(64 * 1024 * 1024);
    ws.handshake(res, "127.0.0.1:" + std::to_string(port), target, ec);
  });
  if (http_status) *http_status = static_cast<int>(res.result_int());
  if (ec) {
    if (http_body) *http_body = res.body();
    return nullptr;
  }
  if (subprotocol) *subprotocol = std::string(res[beast::http::field::sec_websocket_protocol]);
  Impl* raw = impl.get();
  impl->reader = std::thread([raw] { raw->read_loop(); });
  return std::unique_ptr<WsClient>(new WsClient(std::move(impl)));
}

bool WsClient::send_text(const std::string& m) {
  std::lock_guard l(impl_->write_mu);
  beast::error_code ec;
  impl_->with_ws([&](auto& ws) {
    ws.text(true);
    ws.write(boost::asio::buffer(m), ec);
  });
  return !ec;
}

bool WsClient::send_binary(const std::string& m) {
  std::lock_guard l(impl_->write_mu);
  beast::error_code ec;
  impl_->with_ws([&](auto& ws) {
    ws.binary(true);
    ws.write(boost::asio::buffer(m), ec);
    ws.text(true);
  });
  return !ec;
}

std::optional<WsMessage> WsClient::read(int timeout_ms) {
  std::unique_lock l(impl_->mu);
  impl_->cv.wait_for(l, std::chrono::milliseconds(timeout_ms),
                     [&] { return !impl_->inbox.empty() || impl_->closed; });
  if (impl_->inbox.empty()) return std::nullopt;
  WsMessage m = std::move(impl_->inbox.front());
  impl_->inbox.pop_front();
  return m;
}

std::optional<WsMessage> WsClient::read_event(const std::string& type, int timeout_ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < until) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now())
            .count());
    auto m = read(std::max(1, left));
    if (!m) return std::nullopt;
    if (!m->text) continue;
    boost::system::error_code ec;
    auto v = boost::json::parse(m->data, ec);
    if (!ec && v.is_object() && v.as_object().contains("type") && v.at("type").as_string() == type) return m;
  }
  return std::nullopt;
}

bool WsClient::closed() const {
  std::lock_guard l(impl_->mu);
  return impl_->closed;
}

int WsClient::close_code() const {
  std::lock_guard l(impl_->mu);
  return impl_->close_code;
}

void WsClient::close() {
  if (!impl_) return;
  // An abrupt drop (no close handshake): a sync close would race the reader thread's read, and
  // for the server a dropped viewer is the interesting case anyway.
  beast::error_code ec;
  impl_->socket().shutdown(tcp::socket::shutdown_both, ec);
  if (impl_->reader.joinable()) impl_->reader.join();
  impl_->socket().close(ec);
  impl_.reset();
}

}  // namespace imago::testing

#include "http/listener.h"

#include <boost/asio/ip/v6_only.hpp>
#include <boost/beast/core/bind_handler.hpp>

#include "http/session.h"
#include "util/log.h"

namespace imago::http::detail {

using net::ip::tcp;

Listener::Listener(ServerContext& ctx)
    : ctx_(ctx), strand_(net::make_strand(ctx.ioc)), acceptor_(strand_), retry_timer_(strand_) {}

Status Listener::open(const std::string& host, int port) {
  boost::system::error_code ec;
  net::ip::address addr = net::ip::make_address(host, ec);
  if (ec) {
    // A host name such as "localhost": listen on its first address.
    tcp::resolver resolver(ctx_.ioc);
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      return Status::Invalid("cannot resolve listen host '" + host + "': " + ec.message());
    }
    addr = results.begin()->endpoint().address();
  }
  if (port < 0 || port > 65535) return Status::Invalid("listen port out of range: " + std::to_string(port));
  tcp::endpoint ep(addr, static_cast<unsigned short>(port));
  std::string where = addr.to_string() + ":" + std::to_string(port);
  auto fail = [&](const char* what) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    return Status(Code::kUnavailable, std::string(what) + " " + where + ": " + ec.message());
  };
  if (acceptor_.open(ep.protocol(), ec)) return fail("open");
  if (acceptor_.set_option(net::socket_base::reuse_address(true), ec)) return fail("setsockopt");
  // "::" serves IPv4 clients too (they show up as IPv4-mapped addresses).
  if (addr.is_v6() && addr.to_v6().is_unspecified()) acceptor_.set_option(net::ip::v6_only(false), ec);
  if (acceptor_.bind(ep, ec)) return fail("bind");
  if (acceptor_.listen(net::socket_base::max_listen_connections, ec)) return fail("listen");
  port_ = acceptor_.local_endpoint(ec).port();
  return Status::Ok();
}

void Listener::start() {
  net::post(strand_, [self = shared_from_this()] { self->do_accept(); });
}

void Listener::stop() {
  net::post(strand_, [self = shared_from_this()] {
    boost::system::error_code ec;
    self->acceptor_.close(ec);
    self->retry_timer_.cancel();
  });
}

void Listener::refuse(tcp::socket& socket, bool per_ip) {
  // One non-blocking write of a complete response, then close: costs no state and no waiting.
  // (A client that has not sent its request yet still gets it; most read it before failing.)
  static const std::string kIp = canned_503("Too many connections from this address");
  static const std::string kAll = canned_503("Too many connections");
  const std::string& r = per_ip ? kIp : kAll;
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  // On a TLS port a plain-text answer would only be garbage to the client's TLS stack, and a
  // handshake would cost the CPU the cap protects: just close (the client sees a failed handshake).
  if (!ctx_.tls) socket.write_some(net::buffer(r), ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
  auto now = std::chrono::steady_clock::now();
  if (now - last_refusal_log_ > std::chrono::seconds(1)) {  // at most one line per second
    last_refusal_log_ = now;
    log::warn("connection_refused", {{"reason", per_ip ? "per_ip_limit" : "global_limit"},
                                     {"connections", ctx_.connections.load()}});
  }
}

std::string Listener::canned_503(const std::string& message) {
  std::string body = "{\"error\":{\"code\":\"SERVICE_UNAVAILABLE\",\"message\":\"" + message +
                     "\",\"httpStatus\":503},\"status\":\"error\",\"status_code\":503}";
  return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\n"
         "Connection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

void Listener::do_accept() {
  if (!acceptor_.is_open()) return;
  // A connection lives on one I/O thread's io_context (run by that thread alone), so its
  // handlers never run concurrently without a strand.
  acceptor_.async_accept(ctx_.next_connection_ioc().get_executor(),
                         boost::beast::bind_front_handler(&Listener::on_accept, shared_from_this()));
}

void Listener::on_accept(boost::system::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {
    // Typically EMFILE/ENFILE: back off briefly instead of spinning on the error.
    log::warn("accept_failed", {{"error", ec.message()}});
    retry_timer_.expires_after(std::chrono::milliseconds(100));
    retry_timer_.async_wait([self = shared_from_this()](boost::system::error_code wec) {
      if (!wec) self->do_accept();
    });
    return;
  }
  if (ctx_.stopping.load()) {
    socket.close(ec);
    return;
  }
  std::string ip;
  if (auto ep = socket.remote_endpoint(ec); !ec) ip = format_ip(ep.address());
  std::unique_ptr<ServerContext::Slot> slot;
  auto admit = ctx_.acquire(ip, &slot);
  if (admit != ServerContext::Admit::kOk) {
    refuse(socket, admit == ServerContext::Admit::kIpFull);
    do_accept();
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);  // small responses and stream chunks go out at once
  if (ctx_.tls) {
    std::make_shared<Session<TlsStream>>(TlsStream(std::move(socket), *ctx_.tls), ctx_, std::move(slot))
        ->start();
  } else {
    std::make_shared<Session<PlainStream>>(PlainStream(std::move(socket)), ctx_, std::move(slot))->start();
  }
  do_accept();
}

}  // namespace imago::http::detail

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

void Listener::do_accept() {
  if (!acceptor_.is_open()) return;
  // Each connection gets its own strand: its handlers never run concurrently.
  acceptor_.async_accept(net::make_strand(ctx_.ioc),
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
  socket.set_option(tcp::no_delay(true), ec);  // small responses and stream chunks go out at once
  std::make_shared<Session>(std::move(socket), ctx_)->start();
  do_accept();
}

}  // namespace imago::http::detail

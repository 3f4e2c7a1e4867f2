// Private to src/http: accepts connections and hands each to a new Session.
#pragma once
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <memory>

#include "http/server_internal.h"

namespace imago::http::detail {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  explicit Listener(ServerContext& ctx);
  // Opens, binds and listens; the bound port is then port().
  Status open(const std::string& host, int port);
  int port() const { return port_; }
  void start();  // begins accepting
  void stop();   // closes the acceptor (thread safe)

 private:
  void do_accept();
  void on_accept(boost::system::error_code ec, net::ip::tcp::socket socket);
  void refuse(net::ip::tcp::socket& socket, bool per_ip);
  static std::string canned_503(const std::string& message);

  ServerContext& ctx_;
  net::strand<net::io_context::executor_type> strand_;
  net::ip::tcp::acceptor acceptor_;
  net::steady_timer retry_timer_;  // backs off after accept errors such as EMFILE
  int port_ = 0;
  std::chrono::steady_clock::time_point last_refusal_log_{};
};

}  // namespace imago::http::detail

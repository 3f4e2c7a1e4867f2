// The HTTP/1.1 server (Boost.Beast): listener, one session per connection, timeouts, header and
// body limits, keep-alive and pipelining (answered in order), chunked streaming, graceful shutdown.
// Everything above it (routing, auth, limits, logging) lives behind the Dispatcher.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "http/message.h"
#include "util/status.h"

namespace imago::http {

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;
  // Called on the I/O thread as soon as the request header has arrived: the largest body this
  // request may carry (from the route table). Larger bodies are answered 413 without dispatching.
  virtual size_t body_limit(std::string_view method, std::string_view path) const = 0;
  // Called on a worker thread with the complete request; must not throw.
  virtual Response dispatch(Request& req) = 0;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 picks a free port
  int io_threads = 1;
  int worker_threads = 16;   // pool that runs Dispatcher::dispatch and streaming producers
  int read_timeout_s = 30;   // to receive a whole request once its first byte arrived
  int write_timeout_s = 60;  // to send a response (per chunk for streams)
  int idle_timeout_s = 60;   // keep-alive connection with no request in progress
  size_t header_limit = 16 * 1024;
  int shutdown_grace_s = 20;   // in-flight requests get this long after stop()
  bool handle_signals = true;  // SIGTERM / SIGINT trigger stop()
};

class Server {
 public:
  Server(ServerOptions options, Dispatcher& dispatcher);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens; after success port() is the bound port.
  Status listen();
  int port() const;
  // Serves until stop() (or a signal) and in-flight requests have finished; then returns.
  void run();
  // Graceful: stop accepting, let in-flight requests finish (up to shutdown_grace_s), close idle
  // keep-alive connections, then make run() return. Thread safe; idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace imago::http

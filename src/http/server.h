// The HTTP/1.1 server (Boost.Beast): listener, one session per connection, timeouts, header and
// body limits, keep-alive and pipelining (answered in order), chunked streaming, graceful shutdown.
// Everything above it (routing, auth, limits, logging) lives behind the Dispatcher.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.h"
#include "http/websocket.h"
#include "util/status.h"

namespace imago::http {

// The outcome of a WebSocket upgrade request: a handler to run the connection with, or the HTTP
// response to send instead.
struct UpgradeDecision {
  std::shared_ptr<WebSocketHandler> handler;
  WebSocketOptions options;
  std::string subprotocol;  // answered in Sec-WebSocket-Protocol when not empty
  std::string request_id;
  Response response;  // when handler is null
};

// Which thread pool runs a route's handler. Handlers that wait for CPU work done elsewhere
// (synthesis) or for other hosts (URL fetches, webhook pings) get their own bounded pools, so they
// never occupy the threads that serve everything else; a full pool answers 503 with Retry-After.
// kInline runs the whole dispatch on the connection's I/O thread, with no hand-off to a pool and
// back (two thread switches per request): only for dispatches that never wait on anything slow
// (the rule is in docs/http.md, "Where handlers run"). A blocked I/O thread stalls every connection
// it serves.
enum class HandlerPool { kRequest, kCpu, kOutbound, kInline };

struct RouteInfo {
  size_t body_limit = 1 << 20;  // larger bodies are answered 413 without dispatching
  HandlerPool pool = HandlerPool::kRequest;
  bool needs_auth = false;  // bodies above a small bound are read only after Dispatcher::precheck
  bool spool_body = false;  // a body above ServerOptions::spool_threshold is read into a SpoolFile
};

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;
  // Called on the I/O thread as soon as the request header has arrived (from the route table).
  virtual RouteInfo route_info(std::string_view method, std::string_view path) const = 0;
  // Called on a worker thread with the complete request (on the I/O thread itself when
  // route_info said HandlerPool::kInline); must not throw.
  virtual Response dispatch(Request& req) = 0;
  // Called on a worker thread with the header of a request whose (large) body has not been read:
  // a response to send instead (401, 429...), or nullopt to go on reading it. Must not throw.
  virtual std::optional<Response> precheck(Request& req) {
    (void)req;
    return std::nullopt;
  }
  // Called on a worker thread with a WebSocket upgrade request (GET, no body); must not throw.
  virtual UpgradeDecision upgrade(Request& req) {
    (void)req;
    UpgradeDecision d;
    d.response = Response::error(404, "NOT_FOUND", "No WebSocket endpoint here");
    return d;
  }
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 picks a free port
  int io_threads = 1;
  int worker_threads = 16;   // pool that runs Dispatcher::dispatch
  int stream_threads = 4;    // pool that calls the sources of streamed responses
  int cpu_threads = 8;       // handlers of HandlerPool::kCpu routes
  int cpu_queue = 32;        // ... waiting beyond this many: 503 at once
  int outbound_threads = 8;  // handlers of HandlerPool::kOutbound routes
  int outbound_queue = 64;
  int read_timeout_s = 30;   // to receive a whole request once its first byte arrived
  int write_timeout_s = 60;  // to send a response (per chunk for streams)
  int idle_timeout_s = 60;   // keep-alive connection with no request in progress
  size_t header_limit = 16 * 1024;
  // Request bodies of spooling routes (RouteInfo::spool_body) above the threshold are written to
  // nameless temporary files in spool_dir (empty: the system's temporary directory) as they
  // arrive, instead of being collected in memory.
  std::string spool_dir;
  size_t spool_threshold = 1 << 20;
  // Connection caps: beyond them a new connection gets a short 503 and is closed. The global cap
  // is also kept below the descriptor limit minus fd_reserve (database, blobs, outbound fetches).
  int max_connections = 10000;
  int max_connections_per_ip = 256;  // peers in per_ip_exempt (trusted proxies) are not capped
  int fd_reserve = 256;
  std::vector<std::string> per_ip_exempt;
  // TLS: with both files (PEM) every connection on the port is HTTPS / WSS; plain HTTP there gets
  // a 400 and is closed. Empty: plain HTTP. listen() fails with a clear message when they do not load.
  std::string tls_cert_file;
  std::string tls_key_file;
  int tls_handshake_timeout_s = 10;  // from accept to a finished TLS handshake
  int shutdown_grace_s = 20;         // in-flight requests get this long after stop()
  bool handle_signals = true;        // SIGTERM / SIGINT trigger stop()
  // Runs once when shutdown starts, before connections are closed (live sessions tell their
  // viewers `session.ended {reason: "shutdown"}` here). Runs on the control thread; keep it short.
  std::function<void()> before_shutdown;
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
  int connection_count() const;  // open client connections (for tests and metrics)
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

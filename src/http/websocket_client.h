// A WebSocket client for node-to-node relays in cluster mode (docs/live-protocol.md, "Viewers on
// another node"): a node that does not own a live room connects to the owner as a client and
// relays its viewer's messages both ways. Plain interface; Beast stays in the .cpp.
//
// Threads: one I/O thread per connection does every read and write (a TLS stream must never be
// used from two threads at once); messages from the peer go to the handlers from it, and send()
// only queues, so callers on other I/O threads never block on the peer.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "http/message.h"
#include "util/status.h"

namespace imago::http {

class WebSocketClient {
 public:
  struct Refused {
    int status = 0;  // the peer's HTTP status when it refused the upgrade, else 0
    std::string body;
    std::string content_type;
  };
  struct Handlers {
    std::function<void(std::string message, bool binary)> message;
    std::function<void(uint16_t code, const std::string& reason)> closed;  // once, last
  };

  // How a https:// peer is verified: its certificate must chain to the system's trusted CAs, or,
  // with ca_file (PEM), only to the CAs in that file (a cluster's private CA); and it must name
  // the host of the node URL (DNS name or IP address).
  struct ClientTls {
    std::string ca_file;
  };

  // Connects to `base_url` (http://HOST:PORT or https://HOST:PORT, no path) at `target`
  // ("/path?query") with `headers` added to the upgrade request; the connection and the TLS and
  // WebSocket handshakes take at most `timeout_ms`. When the peer answers the upgrade with an
  // HTTP error, kUnavailable and *refused filled in; a peer that fails verification, kUnavailable.
  static Result<std::unique_ptr<WebSocketClient>> connect(const std::string& base_url,
                                                          const std::string& target, const Headers& headers,
                                                          int timeout_ms, Refused* refused,
                                                          const ClientTls& tls = {});
  ~WebSocketClient();
  WebSocketClient(const WebSocketClient&) = delete;
  WebSocketClient& operator=(const WebSocketClient&) = delete;

  // Starts reading; call once.
  void start(Handlers handlers);
  // Queues a message for the peer; false once the connection is closed.
  bool send(std::string message, bool binary);
  // Drops the connection (the peer sees 1006, as for a viewer who left) and joins both threads;
  // idempotent. No handler runs after it returns, unless it is called from a handler.
  void close();

  struct Impl;

 private:
  explicit WebSocketClient(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace imago::http

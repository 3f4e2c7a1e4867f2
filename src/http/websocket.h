// WebSocket endpoints (RFC 6455) as plain interfaces: no Beast or Asio here, so handlers in
// src/live compile without them. The server (src/http/websocket_session.*) upgrades a connection
// when the route table has a WebSocket route for the path; the upgrade request goes through the
// same pipeline as any HTTP request (request id, client IP, failed-auth throttle, rate limits with
// the SPEC 8.2 exemptions) and the route's factory then decides: a handler (upgrade) or a normal
// HTTP response (401, 404, 503...) sent instead.
//
// Authentication: the bearer token comes from `Authorization: Bearer <t>` or, for browsers that
// cannot set headers, from the subprotocol list `Sec-WebSocket-Protocol: imago.v1, bearer.<t>`
// (the server then answers with the subprotocol `imago.v1`, never echoing the token). Never from
// the query string, which reaches logs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "http/message.h"
#include "limits/plan.h"

namespace imago::http {

// An outgoing message's bytes, immutable once made: a room's media message is built once and
// queued on every viewer's connection without a copy per connection.
using WsBytes = std::shared_ptr<const std::string>;

// How a queued binary message may be treated when a viewer falls behind.
enum class WsMessageClass { kControl, kAudio, kVideo };  // video is droppable, audio/control never

// Close codes the server uses (RFC 6455 7.4.1).
namespace ws_close {
inline constexpr uint16_t kNormal = 1000;
inline constexpr uint16_t kGoingAway = 1001;  // server shutdown
inline constexpr uint16_t kProtocolError = 1002;
inline constexpr uint16_t kPolicyViolation = 1008;  // e.g. missed pongs
inline constexpr uint16_t kMessageTooBig = 1009;    // an incoming message above the route's limit
inline constexpr uint16_t kInternalError = 1011;
inline constexpr uint16_t kTryAgainLater = 1013;  // send queue full of audio/control: viewer too slow
inline constexpr uint16_t kAbnormal = 1006;       // reported to on_close only: no close frame (drop, timeout)
}  // namespace ws_close

// Thread-safe handle to one upgraded connection. Never blocks the caller.
class WebSocketConnection {
 public:
  virtual ~WebSocketConnection() = default;
  virtual bool send_text(std::string message) = 0;                  // false when closed
  virtual bool send_binary(WsBytes bytes, WsMessageClass cls) = 0;  // false when closed; never null
  // Drops queued-but-unsent messages of the given class (e.g. on interrupt, flush audio+video).
  virtual void discard_queued(WsMessageClass cls) = 0;
  virtual size_t queued_bytes() const = 0;  // for back-pressure / look-ahead decisions
  virtual void close(uint16_t code, std::string reason) = 0;
  virtual const std::string& client_ip() const = 0;
};

// One per connection, created at upgrade. Callbacks for one connection are serialized (its I/O thread);
// they must not block (post heavy work elsewhere).
class WebSocketHandler {
 public:
  virtual ~WebSocketHandler() = default;
  virtual void on_open(std::shared_ptr<WebSocketConnection> connection) = 0;
  virtual void on_text(std::string_view message) = 0;
  virtual void on_binary(std::string_view bytes) = 0;
  virtual void on_close(uint16_t code) = 0;  // after this no more callbacks; drop the connection ptr
};

struct WebSocketOptions {
  // Who may connect. kToken: the factory authenticates with `bearer_token` itself (runtime and
  // embed tokens); a 401 it returns counts as a failed authentication for the per-IP throttle,
  // and a throttled IP gets 429 before the factory runs. kApiKey / kAdmin: the pipeline checks
  // the api-secret header (or the bearer token as an api-secret) / the admin token first.
  enum class Auth { kToken, kApiKey, kAdmin };
  Auth auth = Auth::kToken;
  // Rate-limit tier charged once per upgrade; unset means exempt (SPEC 8.2: runtime routes).
  std::optional<Tier> tier;
  size_t max_message_bytes = 64 * 1024;  // incoming; larger -> close 1009
  // Outgoing bytes queued but not yet written. Past the bound, queued video is dropped (oldest
  // first); if audio and control alone exceed it, the connection is closed with 1013.
  size_t max_queued_bytes = 4 * 1024 * 1024;
  int ping_interval_s = 20;  // a ping after this long without traffic; no pong within it -> close
};

// What a factory sees: the request after the pipeline (request_id, client_ip resolved through
// trusted proxies, params from the pattern, query, headers, principal for kApiKey routes).
struct WebSocketUpgrade {
  Request& request;
  std::string bearer_token;  // from Authorization: Bearer or the bearer.<t> subprotocol; may be empty
};

// Either a handler (the connection is upgraded) or the HTTP response to send instead.
struct WebSocketAccept {
  std::shared_ptr<WebSocketHandler> handler;
  Response rejection;  // used when handler is null

  static WebSocketAccept upgrade(std::shared_ptr<WebSocketHandler> h) { return {std::move(h), {}}; }
  static WebSocketAccept reject(Response r) { return {nullptr, std::move(r)}; }
};

// Runs on a worker thread (it may touch the database); must not throw.
using WebSocketFactory = std::function<WebSocketAccept(WebSocketUpgrade&)>;

}  // namespace imago::http

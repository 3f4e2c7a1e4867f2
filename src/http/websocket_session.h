// Private to src/http: one upgraded WebSocket connection, over plain TCP or TLS (the Stream
// parameter, see streams.h). The HTTP Session hands over its stream (like Beast's advanced server
// example); I/O runs on the connection's I/O thread, handler callbacks
// too, so they are serialized. send_*() may be called from any thread: the outgoing queue is
// guarded by a mutex. The connection takes a batch of queued messages (a few, see kBatchMessages)
// and writes them one after another, all but the last held by the stream layer below
// (gathering_stream.h), so the batch leaves in one send.
#pragma once
#include <atomic>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "http/gathering_stream.h"
#include "http/server_internal.h"
#include "http/streams.h"
#include "http/websocket.h"

namespace imago::http::detail {

namespace beast = boost::beast;

// Member definitions: websocket_session_impl.h, instantiated in websocket_session_plain.cpp and
// websocket_session_tls.cpp.
template <class Stream>
class WebSocketSession final : public WebSocketConnection,
                               public Connection,
                               public std::enable_shared_from_this<WebSocketSession<Stream>> {
 public:
  WebSocketSession(Stream&& stream, ServerContext& ctx, UpgradeDecision decision, std::string client_ip,
                   std::unique_ptr<ServerContext::Slot> slot);
  ~WebSocketSession() override;

  // Answers the upgrade request with 101 and starts reading.
  void start(beast::http::request<beast::http::empty_body> upgrade_request);

  // WebSocketConnection
  bool send_text(std::string message) override;
  bool send_binary(WsBytes bytes, WsMessageClass cls) override;
  void discard_queued(WsMessageClass cls) override;
  size_t queued_bytes() const override;
  void close(uint16_t code, std::string reason) override;
  const std::string& client_ip() const override { return client_ip_; }

  // Connection
  void begin_shutdown() override;
  void force_close() override;

 private:
  using std::enable_shared_from_this<WebSocketSession<Stream>>::shared_from_this;
  using std::enable_shared_from_this<WebSocketSession<Stream>>::weak_from_this;

  struct Outgoing {
    WsBytes data;
    WsMessageClass cls;
    bool text;
  };

  bool enqueue(WsBytes data, WsMessageClass cls, bool text);
  void wake();  // on the I/O thread: the wake-up enqueue posted
  void on_accept(beast::error_code ec);
  void do_read();
  void on_read(beast::error_code ec, std::size_t n);
  void maybe_write();          // on the I/O thread
  void write_front();          // on the I/O thread: the batch's next message
  size_t batch_bytes() const;  // under mu_
  void on_write(beast::error_code ec, std::size_t n);
  void start_close();  // on the I/O thread, once the queue is empty
  void finish(uint16_t code);

  ServerContext& ctx_;
  std::unique_ptr<ServerContext::Slot> slot_;  // counted against the connection caps
  beast::websocket::stream<GatheringStream<Stream>> ws_;
  beast::flat_buffer read_buffer_;
  std::shared_ptr<WebSocketHandler>
      handler_;  // reset after on_close (breaks the handler <-> connection cycle)
  const WebSocketOptions options_;
  const std::string subprotocol_;
  const std::string request_id_;
  const std::string client_ip_;

  mutable std::mutex mu_;
  std::deque<Outgoing> queue_;
  size_t queued_ = 0;  // bytes in queue_ and batch_
  // Taken from queue_ and being written, oldest first (written only on the I/O thread, under mu_;
  // its bytes stay counted in queued_ until each is written).
  std::deque<Outgoing> batch_;
  bool close_requested_ = false;  // no more sends; close once the queue is written
  bool close_started_ = false;
  // A wake-up (wake) is posted and has not run yet. Enqueue posts one only when neither it nor a
  // write is pending (a write's completion takes the next message itself), so the messages a room
  // queues back to back for one frame cost one cross-thread wake-up, not one each.
  bool wake_pending_ = false;
  beast::websocket::close_reason close_reason_;

  // I/O-thread-only state.
  bool opened_ = false;
  bool finished_ = false;
};

extern template class WebSocketSession<PlainStream>;
extern template class WebSocketSession<TlsStream>;

}  // namespace imago::http::detail

// Private to src/http: the member definitions of WebSocketSession<Stream>, included only by the
// files that instantiate it (websocket_session_plain.cpp, websocket_session_tls.cpp).
#pragma once
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/websocket/error.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include "http/websocket_session.h"
#include "util/log.h"

namespace imago::http::detail {

namespace websocket = boost::beast::websocket;

// A batch (maybe_write) is at most this many messages and, past its first, this many bytes: a
// frame's audio and picture and an event or two. Small, because an interrupt's discard_queued
// reaches only what is still queued.
constexpr size_t kBatchMessages = 4, kBatchBytes = 64 * 1024;

template <class Stream>
WebSocketSession<Stream>::WebSocketSession(Stream&& stream, ServerContext& ctx, UpgradeDecision decision,
                                           std::string client_ip, std::unique_ptr<ServerContext::Slot> slot)
    : ctx_(ctx),
      slot_(std::move(slot)),
      ws_(std::move(stream)),
      handler_(std::move(decision.handler)),
      options_(decision.options),
      subprotocol_(std::move(decision.subprotocol)),
      request_id_(std::move(decision.request_id)),
      client_ip_(std::move(client_ip)) {}

template <class Stream>
WebSocketSession<Stream>::~WebSocketSession() {
  ctx_.remove_session(this);
}

template <class Stream>
void WebSocketSession<Stream>::start(beast::http::request<beast::http::empty_body> upgrade_request) {
  ctx_.add_session(this, weak_from_this());
  // Beast's own timers replace the tcp_stream deadline: handshake, close and idle (with pings).
  beast::get_lowest_layer(ws_).expires_never();
  websocket::stream_base::timeout t;
  t.handshake_timeout = std::chrono::seconds(ctx_.options.write_timeout_s);
  const int ping = std::max(1, options_.ping_interval_s);
  t.idle_timeout = std::chrono::seconds(2 * ping);  // a ping after half of it, closed at the end
  t.keep_alive_pings = true;
  ws_.set_option(t);
  ws_.read_message_max(options_.max_message_bytes);
  ws_.auto_fragment(false);
  ws_.set_option(websocket::stream_base::decorator(
      [sub = subprotocol_, rid = request_id_](websocket::response_type& res) {
        res.set(beast::http::field::server, "imagod");
        if (!rid.empty()) res.set("X-Request-Id", rid);
        if (!sub.empty()) res.set(beast::http::field::sec_websocket_protocol, sub);
      }));
  ws_.async_accept(upgrade_request,
                   beast::bind_front_handler(&WebSocketSession<Stream>::on_accept, shared_from_this()));
}

template <class Stream>
void WebSocketSession<Stream>::on_accept(beast::error_code ec) {
  if (ec) {
    log::info("websocket_handshake_failed", {{"request_id", request_id_}, {"error", ec.message()}});
    finished_ = true;
    handler_.reset();
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
    return;
  }
  opened_ = true;
  if (ctx_.stopping.load()) {
    close(ws_close::kGoingAway, "server shutting down");
  }
  try {
    handler_->on_open(shared_from_this());
  } catch (const std::exception& e) {
    log::error("websocket_handler_threw", {{"request_id", request_id_}, {"error", e.what()}});
    close(ws_close::kInternalError, "internal error");
  }
  maybe_write();  // what on_open sent, or a close requested during the handshake
  do_read();
}

// ---- reading ----------------------------------------------------------------------------------

template <class Stream>
void WebSocketSession<Stream>::do_read() {
  ws_.async_read(read_buffer_,
                 beast::bind_front_handler(&WebSocketSession<Stream>::on_read, shared_from_this()));
}

template <class Stream>
void WebSocketSession<Stream>::on_read(beast::error_code ec, std::size_t) {
  if (ec) {
    uint16_t code = ws_close::kAbnormal;
    bool we_closed = false;
    {
      std::lock_guard lock(mu_);
      if (close_started_) {
        we_closed = true;
        code = static_cast<uint16_t>(close_reason_.code);
      }
    }
    if (we_closed) {
      // Our close handshake ended the read (Beast completes it with operation_aborted or closed).
    } else if (ec == websocket::error::closed) {
      code = static_cast<uint16_t>(ws_.reason().code);
      if (code == 0) code = 1005;  // close frame without a status (RFC 6455 7.1.5)
    } else if (ec == websocket::error::message_too_big || ec == websocket::error::buffer_overflow) {
      code = ws_close::kMessageTooBig;  // Beast has sent close 1009 already
    } else if (ec.category() == websocket::make_error_code(websocket::error::bad_opcode).category()) {
      code = ws_close::kProtocolError;  // Beast failed the connection with 1002
    }
    finish(code);
    return;
  }
  std::string_view data(static_cast<const char*>(read_buffer_.data().data()), read_buffer_.size());
  bool text = ws_.got_text();
  if (handler_ && !finished_) {
    try {
      if (text) {
        handler_->on_text(data);
      } else {
        handler_->on_binary(data);
      }
    } catch (const std::exception& e) {
      log::error("websocket_handler_threw", {{"request_id", request_id_}, {"error", e.what()}});
      close(ws_close::kInternalError, "internal error");
    }
  }
  read_buffer_.consume(read_buffer_.size());
  if (read_buffer_.capacity() > 256 * 1024) read_buffer_.shrink_to_fit();
  do_read();
}

template <class Stream>
void WebSocketSession<Stream>::finish(uint16_t code) {
  if (finished_) return;
  finished_ = true;
  {
    std::lock_guard lock(mu_);
    close_requested_ = true;
    queue_.clear();
    queued_ = batch_bytes();
  }
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().close(ignored);
  if (opened_ && handler_) {
    try {
      handler_->on_close(code);
    } catch (const std::exception& e) {
      log::error("websocket_handler_threw", {{"request_id", request_id_}, {"error", e.what()}});
    }
  }
  handler_.reset();
}

// ---- writing ----------------------------------------------------------------------------------

template <class Stream>
bool WebSocketSession<Stream>::send_text(std::string message) {
  return enqueue(std::make_shared<const std::string>(std::move(message)), WsMessageClass::kControl, true);
}

template <class Stream>
bool WebSocketSession<Stream>::send_binary(WsBytes bytes, WsMessageClass cls) {
  return enqueue(std::move(bytes), cls, false);
}

template <class Stream>
bool WebSocketSession<Stream>::enqueue(WsBytes data, WsMessageClass cls, bool text) {
  bool overflow = false;
  bool post = false;
  {
    std::lock_guard lock(mu_);
    if (close_requested_) return false;
    queued_ += data->size();
    queue_.push_back(Outgoing{std::move(data), cls, text});
    // Over the bound: stale video goes first (oldest first); audio and control are never dropped.
    for (auto it = queue_.begin(); queued_ > options_.max_queued_bytes && it != queue_.end();) {
      if (it->cls == WsMessageClass::kVideo) {
        queued_ -= it->data->size();
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    if (queued_ > options_.max_queued_bytes) {
      // The viewer cannot even keep up with audio: it is gone in all but name.
      overflow = true;
      queue_.clear();
      queued_ = batch_bytes();
      close_requested_ = true;
      close_reason_ = websocket::close_reason(static_cast<websocket::close_code>(ws_close::kTryAgainLater),
                                              "send queue full");
    }
    if (!wake_pending_ && batch_.empty()) {
      wake_pending_ = true;
      post = true;
    }
  }
  if (overflow) log::info("websocket_send_queue_full", {{"request_id", request_id_}});
  if (post) net::dispatch(ws_.get_executor(), [self = shared_from_this()] { self->wake(); });
  return !overflow;
}

template <class Stream>
void WebSocketSession<Stream>::wake() {
  {
    std::lock_guard lock(mu_);
    wake_pending_ = false;
  }
  maybe_write();
}

template <class Stream>
void WebSocketSession<Stream>::discard_queued(WsMessageClass cls) {
  std::lock_guard lock(mu_);
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (it->cls == cls) {
      queued_ -= it->data->size();
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

template <class Stream>
size_t WebSocketSession<Stream>::queued_bytes() const {
  std::lock_guard lock(mu_);
  return queued_;
}

template <class Stream>
void WebSocketSession<Stream>::close(uint16_t code, std::string reason) {
  {
    std::lock_guard lock(mu_);
    if (close_requested_) return;
    close_requested_ = true;
    if (reason.size() > 120) reason.resize(120);  // a close frame's payload is at most 125 bytes
    close_reason_ = websocket::close_reason(static_cast<websocket::close_code>(code), reason);
  }
  net::dispatch(ws_.get_executor(), [self = shared_from_this()] { self->maybe_write(); });
}

template <class Stream>
void WebSocketSession<Stream>::maybe_write() {
  if (finished_ || !opened_) return;
  bool close_now = false;
  {
    std::lock_guard lock(mu_);
    if (!batch_.empty() || close_started_) return;
    if (queue_.empty()) {
      if (!close_requested_) return;
      close_started_ = true;
      close_now = true;
    } else {
      size_t bytes = 0;
      while (!queue_.empty() && batch_.size() < kBatchMessages &&
             (batch_.empty() || bytes + queue_.front().data->size() <= kBatchBytes)) {
        bytes += queue_.front().data->size();
        batch_.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
  }
  if (close_now) {
    start_close();
    return;
  }
  write_front();
}

template <class Stream>
void WebSocketSession<Stream>::write_front() {
  // Only this thread changes batch_, so its front stays put while written.
  const Outgoing& m = batch_.front();
  ws_.next_layer().hold(batch_.size() > 1);  // the last one sends the batch
  ws_.text(m.text);
  ws_.async_write(net::buffer(*m.data),
                  beast::bind_front_handler(&WebSocketSession<Stream>::on_write, shared_from_this()));
}

template <class Stream>
void WebSocketSession<Stream>::on_write(beast::error_code ec, std::size_t) {
  bool more;
  {
    std::lock_guard lock(mu_);
    queued_ -= batch_.front().data->size();
    batch_.pop_front();
    if (ec || finished_) {
      queued_ -= batch_bytes();
      batch_.clear();
    }
    more = !batch_.empty();
  }
  if (!more) ws_.next_layer().hold(false);  // a batch cut short leaves nothing held
  if (ec) {
    // The read side notices too (the socket is closed) and reports the close.
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
    return;
  }
  if (more) {
    write_front();
  } else {
    maybe_write();
  }
}

template <class Stream>
size_t WebSocketSession<Stream>::batch_bytes() const {
  size_t n = 0;
  for (const auto& m : batch_) n += m.data->size();
  return n;
}

template <class Stream>
void WebSocketSession<Stream>::start_close() {
  websocket::close_reason reason;
  {
    std::lock_guard lock(mu_);
    reason = close_reason_;
  }
  // The pending read completes with error::closed once the peer answers (or the close timeout).
  ws_.async_close(reason, [self = shared_from_this()](beast::error_code ec) {
    if (ec) {
      beast::error_code ignored;
      beast::get_lowest_layer(self->ws_).socket().close(ignored);
    }
  });
}

// ---- shutdown ---------------------------------------------------------------------------------

template <class Stream>
void WebSocketSession<Stream>::begin_shutdown() {
  close(ws_close::kGoingAway, "server shutting down");
}

template <class Stream>
void WebSocketSession<Stream>::force_close() {
  net::post(ws_.get_executor(), [self = shared_from_this()] {
    beast::error_code ignored;
    beast::get_lowest_layer(self->ws_).socket().close(ignored);
    if (!self->opened_) self->finished_ = true;
  });
}

}  // namespace imago::http::detail

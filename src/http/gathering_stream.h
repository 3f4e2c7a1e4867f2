// Private to src/http: a stream layer under a WebSocket connection that lets several messages
// leave in one system call. While held, a write is copied aside and completes at once; the next
// write made when not held sends what was set aside and its own bytes together (one gathered
// write on the layer below). WebSocketSession holds every message of a batch it took from its
// queue but the last, so a frame's audio and picture reach a viewer in one send, not two: each
// send costs a system call and, on the receiving host, a TCP input and a reader's wake-up.
//
// Contract: one write at a time (Beast's WebSocket stream serializes its writes: messages, pings,
// pongs, close); hold() is called on the stream's own thread; whoever holds makes sure a write
// without hold follows (WebSocketSession: the batch's last message), or the bytes wait.
#pragma once
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/buffers_cat.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <string>
#include <utility>

namespace imago::http::detail {

template <class Next>
class GatheringStream {
 public:
  using next_layer_type = Next;
  using executor_type = typename Next::executor_type;

  explicit GatheringStream(Next&& next) : next_(std::move(next)) {}

  Next& next_layer() { return next_; }
  const Next& next_layer() const { return next_; }
  executor_type get_executor() noexcept { return next_.get_executor(); }

  // While on, writes are set aside and complete at once (see the contract above).
  void hold(bool on) { hold_ = on; }
  size_t held_bytes() const { return held_.size(); }

  template <class MutableBufferSequence, class ReadToken>
  auto async_read_some(const MutableBufferSequence& buffers, ReadToken&& token) {
    return next_.async_read_some(buffers, std::forward<ReadToken>(token));
  }

  template <class ConstBufferSequence, class WriteToken>
  auto async_write_some(const ConstBufferSequence& buffers, WriteToken&& token) {
    return boost::asio::async_initiate<WriteToken, void(boost::beast::error_code, std::size_t)>(
        [this](auto handler, const ConstBufferSequence& b) { start_write(b, std::move(handler)); }, token,
        buffers);
  }

 private:
  template <class ConstBufferSequence, class Handler>
  void start_write(const ConstBufferSequence& buffers, Handler handler) {
    namespace net = boost::asio;
    const std::size_t n = net::buffer_size(buffers);
    if (hold_) {
      const size_t at = held_.size();
      held_.resize(at + n);
      net::buffer_copy(net::buffer(held_.data() + at, n), buffers);
      // An asynchronous operation never completes inside its initiating call.
      auto ex = net::get_associated_executor(handler, next_.get_executor());
      net::post(ex, boost::beast::bind_handler(std::move(handler), boost::beast::error_code{}, n));
      return;
    }
    if (held_.empty()) {
      next_.async_write_some(buffers, std::move(handler));
      return;
    }
    // What was held goes first, in the same gathered write; the caller is told of its own bytes.
    std::string held = std::move(held_);
    held_.clear();
    auto sent = std::make_shared<std::string>(std::move(held));
    net::async_write(
        next_, boost::beast::buffers_cat(net::buffer(*sent), buffers),
        [sent, n, handler = std::move(handler)](boost::beast::error_code ec, std::size_t) mutable {
          std::move(handler)(ec, ec ? std::size_t{0} : n);
        });
  }

  Next next_;
  bool hold_ = false;
  std::string held_;
};

// Beast tears a WebSocket's transport down through these (found by argument-dependent lookup).
template <class Next>
void teardown(boost::beast::role_type role, GatheringStream<Next>& s, boost::beast::error_code& ec) {
  using boost::beast::websocket::teardown;
  teardown(role, s.next_layer(), ec);
}

template <class Next, class TeardownHandler>
void async_teardown(boost::beast::role_type role, GatheringStream<Next>& s, TeardownHandler&& handler) {
  using boost::beast::websocket::async_teardown;
  async_teardown(role, s.next_layer(), std::forward<TeardownHandler>(handler));
}

}  // namespace imago::http::detail

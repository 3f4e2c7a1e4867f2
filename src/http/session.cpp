#include "http/session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "util/clock.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::http::detail {

namespace {

constexpr std::size_t kReadChunk = 8192;
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr std::uint64_t kSlowBodyAllowance = 1 << 20;  // bytes per extra second of read time

bool is_http_error(const beast::error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category();
}

// Headers the session owns: framing and connection management are never taken from handlers.
bool is_managed_header(std::string_view name) {
  return iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding") ||
         iequals(name, "Connection") || iequals(name, "Keep-Alive");
}

// A header a client could be tricked with (response splitting) or that Beast cannot serialize.
bool is_safe_header(std::string_view name, std::string_view value) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c <= ' ' || c == ':' || c == 127) return false;
  }
  for (char c : value) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

template <class Body>
void copy_headers(const Response& from, bhttp::response<Body>& to) {
  for (const auto& [name, value] : from.headers.all()) {
    if (is_managed_header(name)) continue;
    if (!is_safe_header(name, value)) {
      log::warn("response_header_dropped", {{"header", name}});
      continue;
    }
    to.insert(name, value);
  }
}

bool wants_close(const Response& r) {
  auto c = r.headers.get("Connection");
  return c && iequals(trim(*c), "close");
}

class ChunkWriter final : public ResponseStream {
 public:
  explicit ChunkWriter(std::shared_ptr<Session> s) : session_(std::move(s)) {}
  bool write(std::string_view chunk) override {
    if (broken_) return false;
    if (chunk.empty()) return true;  // an empty chunk would end the chunked body
    broken_ = !session_->write_chunk_blocking(chunk);
    return !broken_;
  }
  bool broken() const { return broken_; }

 private:
  std::shared_ptr<Session> session_;
  bool broken_ = false;
};

}  // namespace

Session::Session(net::ip::tcp::socket&& socket, ServerContext& ctx) : ctx_(ctx), stream_(std::move(socket)) {
  beast::error_code ec;
  auto ep = stream_.socket().remote_endpoint(ec);
  if (!ec) client_ip_ = format_ip(ep.address());
}

Session::~Session() {
  ctx_.remove_session(this);
}

void Session::start() {
  ctx_.add_session(this, weak_from_this());
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->next_request(); });
}

void Session::begin_shutdown() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->idle_) self->close_now();
  });
}

void Session::force_close() {
  net::post(stream_.get_executor(), [self = shared_from_this()] { self->close_now(); });
}

// ---- reading ----------------------------------------------------------------------------------

void Session::next_request() {
  if (closed_) return;
  if (ctx_.stopping.load()) {
    close_now();
    return;
  }
  header_parser_.emplace();
  header_parser_->header_limit(static_cast<std::uint32_t>(ctx_.options.header_limit));
  // The real limit depends on the route and is applied once the header is known.
  header_parser_->body_limit(boost::none);
  body_parser_.reset();
  unread_input_ = false;
  if (buffer_.size() > 0) {  // a pipelined request is already buffered
    start_request();
    return;
  }
  // A large body grew the buffer; an idle keep-alive connection should not keep that memory.
  if (buffer_.capacity() > 4 * kReadChunk) buffer_.shrink_to_fit();
  // Idle keep-alive phase: wait for the first byte under the idle timeout; the read timeout for
  // the whole request starts only once it arrives.
  idle_ = true;
  stream_.expires_after(std::chrono::seconds(ctx_.options.idle_timeout_s));
  stream_.async_read_some(buffer_.prepare(kReadChunk),
                          beast::bind_front_handler(&Session::on_first_bytes, shared_from_this()));
}

void Session::on_first_bytes(beast::error_code ec, std::size_t n) {
  idle_ = false;
  if (ec) {  // idle timeout, client closed, or shutdown
    close_now();
    return;
  }
  buffer_.commit(n);
  start_request();
}

void Session::start_request() {
  received_us_ = SystemClock::instance().now_us();
  version_ = 11;  // until the header says otherwise (error responses before that use 1.1)
  keep_alive_ = false;
  head_ = false;
  stream_.expires_after(std::chrono::seconds(ctx_.options.read_timeout_s));
  bhttp::async_read_header(stream_, buffer_, *header_parser_,
                           beast::bind_front_handler(&Session::on_header, shared_from_this()));
}

void Session::on_header(beast::error_code ec, std::size_t) {
  if (ec) {
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      return reject(431, "HEADER_TOO_LARGE", "Request header too large");
    }
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message || !is_http_error(ec)) {
      close_now();  // the client went away or stalled (timeout): nobody to answer
      return;
    }
    return reject(400, "BAD_REQUEST", "Malformed HTTP request");
  }
  const auto& h = header_parser_->get();
  version_ = h.version();
  keep_alive_ = h.keep_alive();
  method_ = std::string(h.method_string());
  for (char& c : method_) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  head_ = method_ == "HEAD";
  path_.clear();
  query_.clear();
  if (!parse_target(h.target(), path_, query_)) {
    unread_input_ = true;
    return reject(400, "BAD_REQUEST", "Malformed request target");
  }

  std::size_t limit = 0;
  try {
    limit = ctx_.dispatcher.body_limit(method_, path_);
  } catch (const std::exception& e) {
    log::error("body_limit_failed", {{"error", e.what()}});
    unread_input_ = true;
    return reject(500, "INTERNAL_ERROR", "Internal server error");
  }
  auto content_length = header_parser_->content_length();
  if (content_length && *content_length > limit) {
    unread_input_ = true;
    return reject(413, "PAYLOAD_TOO_LARGE", "Request body too large");
  }
  bool expect_continue = iequals(trim(h[bhttp::field::expect]), "100-continue");
  if (content_length && *content_length > kSlowBodyAllowance) {
    // A 100 MB upload cannot arrive within a 30 s read timeout on an ordinary uplink: large
    // declared bodies get one more second per MiB (still bounded, so slow-loris stays bounded).
    stream_.expires_after(std::chrono::seconds(ctx_.options.read_timeout_s) +
                          std::chrono::seconds(*content_length / kSlowBodyAllowance));
  }

  try {
    body_parser_.emplace(std::move(*header_parser_));
  } catch (const std::exception& e) {  // "moved-from parser has a body": cannot happen after read_header
    log::error("parser_conversion_failed", {{"error", e.what()}});
    close_now();
    return;
  }
  header_parser_.reset();
  body_parser_->body_limit(static_cast<std::uint64_t>(limit));  // enforced per chunk for chunked bodies
  if (body_parser_->is_done()) {
    dispatch_request();
    return;
  }
  if (expect_continue && version_ >= 11) {
    // The client waits for this before sending the body (curl does for large uploads).
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     beast::bind_front_handler(&Session::on_continue_written, shared_from_this()));
    return;
  }
  read_body();
}

void Session::on_continue_written(beast::error_code ec, std::size_t) {
  if (ec) {
    close_now();
    return;
  }
  read_body();
}

void Session::read_body() {
  // Same deadline as the header: the read timeout covers the whole request.
  bhttp::async_read(stream_, buffer_, *body_parser_,
                    beast::bind_front_handler(&Session::on_body, shared_from_this()));
}

void Session::on_body(beast::error_code ec, std::size_t) {
  if (ec) {
    unread_input_ = true;
    if (ec == bhttp::error::body_limit) return reject(413, "PAYLOAD_TOO_LARGE", "Request body too large");
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message || !is_http_error(ec)) {
      close_now();
      return;
    }
    return reject(400, "BAD_REQUEST", "Malformed HTTP request body");
  }
  dispatch_request();
}

// ---- dispatching ------------------------------------------------------------------------------

void Session::dispatch_request() {
  auto msg = body_parser_->release();
  body_parser_.reset();
  Request req;
  req.method = method_;
  req.target = std::string(msg.target());
  req.path = std::move(path_);
  req.query = std::move(query_);
  for (const auto& f : msg) req.headers.add(std::string(f.name_string()), std::string(f.value()));
  req.body = std::move(msg.body());
  req.client_ip = client_ip_;
  req.received_us = received_us_;

  // The handler may block (database): it runs on the worker pool. The work guard keeps
  // io_context::run() from returning while a request is out there.
  ctx_.workers.post(
      [self = shared_from_this(), req = std::move(req), work = net::make_work_guard(ctx_.ioc)]() mutable {
        Response res;
        try {
          res = self->ctx_.dispatcher.dispatch(req);
        } catch (const std::exception& e) {
          log::error("dispatch_threw", {{"error", e.what()}, {"path", req.path}});
          res = Response::error(500, "INTERNAL_ERROR", "Internal server error");
        } catch (...) {
          log::error("dispatch_threw", {{"error", "unknown exception"}, {"path", req.path}});
          res = Response::error(500, "INTERNAL_ERROR", "Internal server error");
        }
        if (!res.headers.has("X-Request-Id")) {
          res.headers.set("X-Request-Id", req.request_id.empty() ? new_id("req") : req.request_id);
        }
        auto ex = self->stream_.get_executor();
        net::post(ex, [self = std::move(self), res = std::move(res)]() mutable {
          self->send_response(std::move(res));
        });
      });
}

// ---- writing ----------------------------------------------------------------------------------

void Session::send_response(Response res) {
  if (closed_) return;
  if (res.status < 200 || res.status > 599) {
    log::error("invalid_response_status", {{"status", res.status}});
    auto rid = res.headers.get("X-Request-Id");
    Response err = Response::error(500, "INTERNAL_ERROR", "Internal server error");
    err.headers.set("X-Request-Id", rid ? std::string(*rid) : new_id("req"));
    res = std::move(err);
  }
  bool close = !keep_alive_ || ctx_.stopping.load() || wants_close(res) || unread_input_;
  bool no_body = res.status == 204 || res.status == 304;
  if (res.stream && !no_body) {
    start_stream(std::move(res), close);
    return;
  }

  res_ = {};
  res_.version(version_ >= 11 ? 11 : 10);
  res_.result(static_cast<unsigned>(res.status));
  copy_headers(res, res_);
  if (no_body) {
    res_.content_length(boost::none);
  } else {
    res_.content_length(res.body.size());
    if (!head_) res_.body() = std::move(res.body);  // HEAD: the length of what GET would send
  }
  res_.keep_alive(!close);
  stream_.expires_after(std::chrono::seconds(ctx_.options.write_timeout_s));
  bhttp::async_write(stream_, res_, beast::bind_front_handler(&Session::on_write, shared_from_this(), close));
}

void Session::on_write(bool close, beast::error_code ec, std::size_t) {
  res_ = {};  // release the body now, not at the next response
  if (ec) {
    close_now();
    return;
  }
  if (close) {
    end_connection();
    return;
  }
  next_request();
}

void Session::reject(int status, const char* code, const char* message) {
  // After a framing error the rest of the input cannot be trusted: answer, drain and close.
  keep_alive_ = false;
  unread_input_ = true;
  header_parser_.reset();
  body_parser_.reset();
  Response res = server_error(status, code, message);
  log::info("request_rejected", {{"status", status},
                                 {"code", code},
                                 {"client_ip", client_ip_},
                                 {"request_id", *res.headers.get("X-Request-Id")}});
  send_response(std::move(res));
}

// ---- streaming --------------------------------------------------------------------------------

void Session::start_stream(Response res, bool close) {
  // HTTP/1.0 has no chunked encoding: the body ends when the connection does.
  stream_close_ = close || version_ < 11;
  stream_res_ = {};
  stream_res_.version(version_ >= 11 ? 11 : 10);
  stream_res_.result(static_cast<unsigned>(res.status));
  copy_headers(res, stream_res_);
  if (version_ >= 11) stream_res_.chunked(true);
  stream_res_.keep_alive(!stream_close_);
  stream_sr_.emplace(stream_res_);
  stream_.expires_after(std::chrono::seconds(ctx_.options.write_timeout_s));
  bhttp::async_write_header(stream_, *stream_sr_,
                            [self = shared_from_this(), producer = std::move(res.stream)](
                                beast::error_code ec, std::size_t) mutable {
                              self->stream_sr_.reset();
                              if (ec) {
                                self->close_now();
                                return;
                              }
                              if (self->head_) {  // HEAD: headers only, the producer never runs
                                self->finish_stream(true);
                                return;
                              }
                              self->run_producer(std::move(producer));
                            });
}

void Session::run_producer(std::function<void(ResponseStream&)> producer) {
  ctx_.workers.post([self = shared_from_this(), producer = std::move(producer),
                     work = net::make_work_guard(ctx_.ioc)]() mutable {
    ChunkWriter writer(self);
    bool ok = true;
    try {
      producer(writer);
    } catch (const std::exception& e) {
      // Headers are gone already: the only honest signal left is a truncated body.
      log::error("stream_producer_threw", {{"error", e.what()}});
      ok = false;
    } catch (...) {
      log::error("stream_producer_threw", {{"error", "unknown exception"}});
      ok = false;
    }
    ok = ok && !writer.broken();
    auto ex = self->stream_.get_executor();
    net::post(ex, [self = std::move(self), ok] { self->finish_stream(ok); });
  });
}

bool Session::write_chunk_blocking(std::string_view chunk) {
  std::promise<bool> done;
  auto result = done.get_future();
  // The producer blocks here until the chunk is on the wire, so `chunk` outlives the write.
  net::post(stream_.get_executor(),
            [self = shared_from_this(), chunk, p = &done] { self->write_chunk(chunk, p); });
  return result.get();
}

void Session::write_chunk(std::string_view chunk, std::promise<bool>* done) {
  if (closed_) {
    done->set_value(false);
    return;
  }
  stream_.expires_after(std::chrono::seconds(ctx_.options.write_timeout_s));
  auto on_done = [self = shared_from_this(), done](beast::error_code ec, std::size_t) {
    if (ec) self->close_now();
    done->set_value(!ec);
  };
  net::const_buffer data(chunk.data(), chunk.size());
  if (version_ >= 11) {
    net::async_write(stream_, bhttp::make_chunk(data), std::move(on_done));
  } else {
    net::async_write(stream_, data, std::move(on_done));
  }
}

void Session::finish_stream(bool ok) {
  if (closed_) return;
  if (!ok) {
    close_now();
    return;
  }
  if (version_ < 11 || head_) {
    if (stream_close_) {
      end_connection();
    } else {
      next_request();
    }
    return;
  }
  stream_.expires_after(std::chrono::seconds(ctx_.options.write_timeout_s));
  net::async_write(stream_, bhttp::make_chunk_last(),
                   [self = shared_from_this()](beast::error_code ec, std::size_t) {
                     if (ec) {
                       self->close_now();
                     } else if (self->stream_close_ || self->ctx_.stopping.load()) {
                       self->end_connection();
                     } else {
                       self->next_request();
                     }
                   });
}

// ---- closing ----------------------------------------------------------------------------------

void Session::end_connection() {
  if (unread_input_ || buffer_.size() > 0) {
    linger_close();
  } else {
    beast::error_code ec;
    stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
    close_now();
  }
}

void Session::linger_close() {
  // Closing with unread input makes the kernel send RST, which can destroy the response we just
  // sent before the client reads it. Half-close and drain for a moment instead (like nginx's
  // lingering_close), so a 413 or 400 actually reaches the client.
  beast::error_code ec;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  if (ec) {
    close_now();
    return;
  }
  buffer_.clear();
  stream_.expires_after(kLingerTime);
  drain();
}

void Session::drain() {
  if (closed_) return;
  stream_.async_read_some(net::buffer(drain_buf_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            if (ec) {
                              self->close_now();
                            } else {
                              self->drain();
                            }
                          });
}

void Session::close_now() {
  if (closed_) return;
  closed_ = true;
  idle_ = false;
  stream_.close();
}

}  // namespace imago::http::detail

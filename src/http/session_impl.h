// Private to src/http: the member definitions of Session<Stream>, included only by the files
// that instantiate it (session_plain.cpp, session_tls.cpp).
#pragma once
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <charconv>

#include "http/session.h"
#include "http/websocket_session.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::http::detail {

namespace session_util {

inline constexpr std::size_t kReadChunk = 8192;
inline constexpr auto kLingerTime = std::chrono::seconds(2);
inline constexpr std::uint64_t kSlowBodyAllowance = 1 << 20;  // bytes per extra second of read time
// A streamed response's source runs only while less than this waits to be written.
inline constexpr std::size_t kStreamHighWater = 256 * 1024;
// Bodies up to this size are read before authentication (one round trip less); larger ones only
// after the header's credentials were checked.
inline constexpr std::uint64_t kPreauthBodyBytes = 64 * 1024;

inline bool is_http_error(const beast::error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category();
}

// Headers the session owns: framing and connection management are never taken from handlers.
inline bool is_managed_header(std::string_view name) {
  return iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding") ||
         iequals(name, "Connection") || iequals(name, "Keep-Alive");
}

// A header a client could be tricked with (response splitting) or that Beast cannot serialize.
inline bool is_safe_header(std::string_view name, std::string_view value) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c <= ' ' || c == ':' || c == 127) return false;
  }
  for (char c : value) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

// Response bodies up to this size are written from the same buffer as the header.
inline constexpr std::size_t kInlineBodyBytes = 16 * 1024;

// The handler's headers as "Name: value\r\n" lines, with the same filtering as copy_headers.
inline void append_headers(const Response& from, std::string& out) {
  for (const auto& [name, value] : from.headers.all()) {
    if (is_managed_header(name)) continue;
    if (!is_safe_header(name, value)) {
      log::warn("response_header_dropped", {{"header", name}});
      continue;
    }
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
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

// Destroys an unused stream source on the stream pool: a speech stream's destructor may wait for
// its synthesis, which must not happen on an I/O thread.
inline void dispose_stream_source(ServerContext& ctx, StreamSource source) {
  if (source) ctx.streams.post([s = std::move(source)]() mutable { s = nullptr; });
}

inline bool wants_close(const Response& r) {
  auto c = r.headers.get("Connection");
  return c && iequals(trim(*c), "close");
}

}  // namespace session_util

using namespace session_util;

template <class Stream>
Session<Stream>::Session(Stream&& stream, ServerContext& ctx, std::unique_ptr<ServerContext::Slot> slot)
    : ctx_(ctx), slot_(std::move(slot)), stream_(std::move(stream)) {
  beast::error_code ec;
  auto ep = tcp().socket().remote_endpoint(ec);
  if (!ec) client_ip_ = format_ip(ep.address());
}

template <class Stream>
Session<Stream>::~Session() {
  release_source();
  ctx_.remove_session(this);
}

template <class Stream>
void Session<Stream>::start() {
  ctx_.add_session(this, weak_from_this());
  if constexpr (kIsTls<Stream>) {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      // Until the handshake is done the connection is as good as idle: shutdown may close it.
      // The whole detection and handshake run under one deadline, so a client that never
      // finishes it costs a descriptor for at most that long (and never a thread).
      self->idle_ = true;
      self->tcp().expires_after(std::chrono::seconds(self->ctx_.options.tls_handshake_timeout_s));
      beast::async_detect_ssl(self->tcp(), self->buffer_,
                              beast::bind_front_handler(&Session<Stream>::on_detect, self));
    });
  } else {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->next_request(); });
  }
}

template <class Stream>
void Session<Stream>::on_detect(beast::error_code ec, bool tls) {
  idle_ = false;
  if (ec || closed_) {  // handshake timeout, client gone, shutdown
    close_now();
    return;
  }
  if (!tls) {
    refuse_plain_http();
    return;
  }
  if constexpr (kIsTls<Stream>) {
    // The bytes the detector read are the start of the ClientHello: hand them to OpenSSL.
    stream_.async_handshake(net::ssl::stream_base::server, buffer_.data(),
                            beast::bind_front_handler(&Session<Stream>::on_handshake, shared_from_this()));
  }
}

template <class Stream>
void Session<Stream>::on_handshake(beast::error_code ec, std::size_t used) {
  if (ec) {
    log::debug("tls_handshake_failed", {{"client_ip", client_ip_}, {"error", ec.message()}});
    close_now();
    return;
  }
  buffer_.consume(used);
  next_request();
}

template <class Stream>
void Session<Stream>::refuse_plain_http() {
  // Plain HTTP on the TLS port: one clear answer in plain HTTP (like nginx's "plain HTTP request
  // was sent to HTTPS port"), then close. Written on the raw TCP stream, under the same deadline.
  Response err = server_error(400, "BAD_REQUEST", "This port speaks HTTPS; use an https:// or wss:// URL");
  auto canned = std::make_shared<std::string>(
      "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nX-Request-Id: " +
      std::string(*err.headers.get("X-Request-Id")) +
      "\r\nConnection: close\r\nContent-Length: " + std::to_string(err.body.size()) + "\r\n\r\n" + err.body);
  log::info("request_rejected", {{"status", 400},
                                 {"code", "BAD_REQUEST"},
                                 {"reason", "plain_http_on_tls_port"},
                                 {"client_ip", client_ip_}});
  unread_input_ = true;
  net::async_write(tcp(), net::buffer(*canned),
                   [self = shared_from_this(), canned](beast::error_code ec, std::size_t) {
                     if (ec) {
                       self->close_now();
                       return;
                     }
                     self->linger_close();
                   });
}

template <class Stream>
void Session<Stream>::begin_shutdown() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->idle_) self->close_now();
  });
}

template <class Stream>
void Session<Stream>::force_close() {
  net::post(stream_.get_executor(), [self = shared_from_this()] { self->close_now(); });
}

// ---- reading ----------------------------------------------------------------------------------

template <class Stream>
void Session<Stream>::next_request() {
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
  int idle_s = ctx_.options.idle_timeout_s;
  // Near the connection cap, idle keep-alive connections make room sooner.
  if (ctx_.connections.load() > ctx_.connection_limit / 4 * 3) idle_s = std::min(idle_s, 5);
  tcp().expires_after(std::chrono::seconds(idle_s));
  stream_.async_read_some(buffer_.prepare(kReadChunk),
                          beast::bind_front_handler(&Session<Stream>::on_first_bytes, shared_from_this()));
}

template <class Stream>
void Session<Stream>::on_first_bytes(beast::error_code ec, std::size_t n) {
  idle_ = false;
  if (ec) {  // idle timeout, client closed, or shutdown
    close_now();
    return;
  }
  buffer_.commit(n);
  start_request();
}

template <class Stream>
void Session<Stream>::start_request() {
  version_ = 11;  // until the header says otherwise (error responses before that use 1.1)
  keep_alive_ = false;
  head_ = false;
  tcp().expires_after(std::chrono::seconds(ctx_.options.read_timeout_s));
  read_header_section();
}

// The header section is collected here rather than by beast::http::async_read_header so that
// the raw bytes can be checked before Beast normalizes them: Beast silently unfolds obs-fold
// lines, which RFC 9112 5.2 tells a server to reject (a classic smuggling primitive).
template <class Stream>
void Session<Stream>::read_header_section() {
  for (;;) {
    std::string_view data(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    // RFC 9112 2.2: empty lines before the request-line are ignored.
    std::size_t skip = 0;
    while (skip + 1 < data.size() && data[skip] == '\r' && data[skip + 1] == '\n') skip += 2;
    if (skip > 0) {
      buffer_.consume(skip);
      continue;
    }
    auto end = data.find("\r\n\r\n");
    if (end == std::string_view::npos) {
      if (data.size() > ctx_.options.header_limit)
        return reject(431, "HEADER_TOO_LARGE", "Request header too large");
      stream_.async_read_some(buffer_.prepare(kReadChunk),
                              [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                                if (ec) {  // the client went away or stalled (timeout): nobody to answer
                                  self->close_now();
                                  return;
                                }
                                self->buffer_.commit(n);
                                self->read_header_section();
                              });
      return;
    }
    const std::size_t header_size = end + 4;
    if (header_size > ctx_.options.header_limit)
      return reject(431, "HEADER_TOO_LARGE", "Request header too large");
    std::string_view header = data.substr(0, end + 2);
    if (header.find("\r\n ") != std::string_view::npos || header.find("\r\n\t") != std::string_view::npos) {
      unread_input_ = true;
      return reject(400, "BAD_REQUEST", "Obsolete line folding in the request header");
    }
    beast::error_code ec;
    header_parser_->eager(false);
    std::size_t used = header_parser_->put(net::buffer(data.data(), header_size), ec);
    if (!ec && !header_parser_->is_header_done()) ec = bhttp::error::partial_message;
    buffer_.consume(used);
    on_header(ec, used);
    return;
  }
}

template <class Stream>
void Session<Stream>::on_header(beast::error_code ec, std::size_t) {
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
  head_ = method_ == "HEAD";
  if (const char* framing_error = check_framing(h)) {
    return reject(framing_status_, framing_status_ == 501 ? "NOT_IMPLEMENTED" : "BAD_REQUEST", framing_error);
  }
  path_.clear();
  query_.clear();
  if (!parse_target(h.target(), path_, query_)) {
    unread_input_ = true;
    return reject(400, "BAD_REQUEST", "Malformed request target");
  }

  if (boost::beast::websocket::is_upgrade(h)) {
    if (header_parser_->content_length().value_or(0) > 0 || header_parser_->chunked()) {
      unread_input_ = true;
      return reject(400, "BAD_REQUEST", "A WebSocket upgrade request carries no body");
    }
    start_upgrade();
    return;
  }

  std::size_t limit = 0;
  bool needs_auth = false;
  bool spool = false;
  try {
    RouteInfo info = ctx_.dispatcher.route_info(method_, path_);
    limit = info.body_limit;
    pool_ = info.pool;
    needs_auth = info.needs_auth;
    spool = info.spool_body;
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
    tcp().expires_after(std::chrono::seconds(ctx_.options.read_timeout_s) +
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
  if (spool) {
    // Read into a nameless temporary file past the threshold (spool_body.h); the reader is
    // created when the first body byte is parsed, after this.
    body_parser_->get().body().threshold = ctx_.options.spool_threshold;
    body_parser_->get().body().dir = ctx_.options.spool_dir;
  }
  if (body_parser_->is_done()) {
    dispatch_request();
    return;
  }
  if (needs_auth && (!content_length || *content_length > kPreauthBodyBytes)) {
    // Authenticate (and apply the failed-auth throttle) before reading a body that could be
    // large: an unauthenticated client never makes the server buffer more than kPreauthBodyBytes.
    precheck(expect_continue);
    return;
  }
  continue_body(expect_continue);
}

template <class Stream>
void Session<Stream>::precheck(bool expect_continue) {
  Request req;
  const auto& h = body_parser_->get();
  req.method = method_;
  req.target = std::string(h.target());
  req.path = path_;
  req.query = query_;
  for (const auto& f : h) req.headers.add(std::string(f.name_string()), std::string(f.value()));
  req.client_ip = client_ip_;
  ctx_.workers.post([self = shared_from_this(), req = std::move(req), expect_continue,
                     work = net::make_work_guard(stream_.get_executor())]() mutable {
    std::optional<Response> refusal;
    try {
      refusal = self->ctx_.dispatcher.precheck(req);
    } catch (const std::exception& e) {
      log::error("precheck_threw", {{"error", e.what()}, {"path", req.path}});
      refusal = Response::error(500, "INTERNAL_ERROR", "Internal server error");
    }
    if (refusal && !refusal->headers.has("X-Request-Id")) {
      refusal->headers.set("X-Request-Id", req.request_id.empty() ? new_id("req") : req.request_id);
    }
    auto ex = self->stream_.get_executor();
    net::post(ex, [self = std::move(self), refusal = std::move(refusal), expect_continue]() mutable {
      if (self->closed_) return;
      if (!refusal) {
        self->continue_body(expect_continue);
        return;
      }
      // The body stays unread: answer, then linger-close (the client may still be sending it).
      self->body_parser_.reset();
      self->unread_input_ = true;
      self->keep_alive_ = false;
      self->send_response(std::move(*refusal));
    });
  });
}

template <class Stream>
void Session<Stream>::continue_body(bool expect_continue) {
  if (expect_continue && version_ >= 11) {
    // The client waits for this before sending the body (curl does for large uploads).
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     beast::bind_front_handler(&Session<Stream>::on_continue_written, shared_from_this()));
    return;
  }
  read_body();
}

template <class Stream>
void Session<Stream>::on_continue_written(beast::error_code ec, std::size_t) {
  if (ec) {
    close_now();
    return;
  }
  read_body();
}

template <class Stream>
void Session<Stream>::read_body() {
  // Same deadline as the header: the read timeout covers the whole request.
  bhttp::async_read(stream_, buffer_, *body_parser_,
                    beast::bind_front_handler(&Session<Stream>::on_body, shared_from_this()));
}

template <class Stream>
void Session<Stream>::on_body(beast::error_code ec, std::size_t) {
  if (ec) {
    unread_input_ = true;
    if (ec == bhttp::error::body_limit) return reject(413, "PAYLOAD_TOO_LARGE", "Request body too large");
    if (body_parser_->get().body().spool_failed)  // logged by the spool: the disk, not the client
      return reject(503, "SERVICE_UNAVAILABLE", "The request body could not be stored; try again later");
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message || !is_http_error(ec)) {
      body_parser_.reset();  // the read has ended: a partial body (and its spool file) goes now
      close_now();
      return;
    }
    return reject(400, "BAD_REQUEST", "Malformed HTTP request body");
  }
  dispatch_request();
}

// RFC 9110 / 9112 rules Beast leaves to the application. Returns an error message (and sets
// framing_status_) when the request must be refused and the connection closed.
template <class Stream>
const char* Session<Stream>::check_framing(const bhttp::request_parser<bhttp::empty_body>::value_type& h) {
  framing_status_ = 400;
  // Methods are case-sensitive (RFC 9110 9.1): "get" is not GET.
  for (char c : method_) {
    if (!((c >= 'A' && c <= 'Z') || c == '-' || c == '_')) return "Method names are upper case";
  }
  std::size_t hosts = 0;
  for (auto it = h.find(bhttp::field::host); it != h.end() && it->name() == bhttp::field::host; ++it) ++hosts;
  if (hosts > 1) return "Duplicate Host header";
  if (hosts == 0 && version_ >= 11) return "Missing Host header";  // RFC 9112 3.2

  // Transfer-Encoding (RFC 9112 6.1, 6.3): only a lone, final "chunked" is accepted. Anything else
  // leaves the body length undeterminable; answering and closing prevents request smuggling.
  std::vector<std::string> codings;
  bool has_te = false;
  for (const auto& f : h) {
    if (f.name() != bhttp::field::transfer_encoding) continue;
    has_te = true;
    for (std::string_view c : split(f.value(), ',')) {
      c = trim(c);
      if (!c.empty()) codings.emplace_back(c);
    }
  }
  if (!has_te) return nullptr;
  if (version_ < 11) return "Transfer-Encoding is not allowed in HTTP/1.0";
  if (h.find(bhttp::field::content_length) != h.end()) return "Both Transfer-Encoding and Content-Length";
  if (codings.size() == 1 && iequals(codings[0], "chunked")) return nullptr;
  if (!codings.empty() && iequals(codings.back(), "chunked")) {
    framing_status_ = 501;  // RFC 9112 6.1: a coding the server does not understand
    return "Only the chunked transfer coding is supported";
  }
  return "Transfer-Encoding must end with chunked";
}

// ---- dispatching ------------------------------------------------------------------------------

// Dispatcher::dispatch with the server's guarantees: never throws, always an X-Request-Id.
inline Response run_dispatch(Dispatcher& dispatcher, Request& req) {
  Response res;
  try {
    res = dispatcher.dispatch(req);
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
  return res;
}

template <class Stream>
void Session<Stream>::dispatch_request() {
  auto msg = body_parser_->release();
  body_parser_.reset();
  Request req;
  req.method = std::move(method_);
  req.target = std::string(msg.target());
  req.path = std::move(path_);
  req.query = std::move(query_);
  req.headers.reserve(static_cast<std::size_t>(std::distance(msg.begin(), msg.end())));
  for (const auto& f : msg) req.headers.add(std::string(f.name_string()), std::string(f.value()));
  req.body = std::move(msg.body().mem);
  req.body_file = std::move(msg.body().file);
  req.client_ip = client_ip_;

  if (pool_ == HandlerPool::kInline) {
    // Cheap, non-blocking dispatch (see HandlerPool): answered right here, on the connection's I/O thread.
    send_response(run_dispatch(ctx_.dispatcher, req));
    return;
  }
  const std::string path_for_log = pool_ == HandlerPool::kRequest ? std::string() : req.path;

  // The handler may block (database): it runs on a worker pool. The work guard keeps
  // io_context::run() from returning while a request is out there.
  auto task = [self = shared_from_this(), req = std::move(req),
               work = net::make_work_guard(stream_.get_executor())]() mutable {
    Response res = run_dispatch(self->ctx_.dispatcher, req);
    auto ex = self->stream_.get_executor();
    net::post(ex, [self = std::move(self), res = std::move(res)]() mutable {
      self->send_response(std::move(res));
    });
  };
  bool queued = true;
  switch (pool_) {
    case HandlerPool::kRequest:
    case HandlerPool::kInline:  // handled above
      ctx_.workers.post(std::move(task));
      break;
    case HandlerPool::kCpu:
      queued = ctx_.cpu.try_post(std::move(task), static_cast<std::size_t>(ctx_.options.cpu_queue));
      break;
    case HandlerPool::kOutbound:
      queued = ctx_.outbound.try_post(std::move(task), static_cast<std::size_t>(ctx_.options.outbound_queue));
      break;
  }
  if (!queued) {
    // Fast refusal instead of an unbounded queue: the client retries later.
    Response res = server_error(503, "SERVICE_UNAVAILABLE", "The server is busy; retry shortly");
    res.headers.set("Retry-After", "1");
    log::info("request_rejected",
              {{"status", 503},
               {"code", "SERVICE_UNAVAILABLE"},
               {"reason", pool_ == HandlerPool::kCpu ? "cpu_pool_full" : "outbound_pool_full"},
               {"path", path_for_log},
               {"client_ip", client_ip_},
               {"request_id", *res.headers.get("X-Request-Id")}});
    send_response(std::move(res));
  }
}

// ---- WebSocket upgrade -----------------------------------------------------------------------

template <class Stream>
void Session<Stream>::start_upgrade() {
  upgrade_request_.emplace(header_parser_->release());
  header_parser_.reset();
  Request req;
  req.method = method_;
  req.target = std::string(upgrade_request_->target());
  req.path = std::move(path_);
  req.query = std::move(query_);
  for (const auto& f : *upgrade_request_)
    req.headers.add(std::string(f.name_string()), std::string(f.value()));
  req.client_ip = client_ip_;
  // Authentication may read the database: on the worker pool, like any request.
  ctx_.workers.post([self = shared_from_this(), req = std::move(req),
                     work = net::make_work_guard(stream_.get_executor())]() mutable {
    UpgradeDecision d;
    try {
      d = self->ctx_.dispatcher.upgrade(req);
    } catch (const std::exception& e) {
      log::error("upgrade_threw", {{"error", e.what()}, {"path", req.path}});
      d = {};
      d.response = Response::error(500, "INTERNAL_ERROR", "Internal server error");
    }
    if (!d.handler && !d.response.headers.has("X-Request-Id")) {
      d.response.headers.set("X-Request-Id", req.request_id.empty() ? new_id("req") : req.request_id);
    }
    auto ex = self->stream_.get_executor();
    net::post(ex,
              [self = std::move(self), d = std::move(d)]() mutable { self->finish_upgrade(std::move(d)); });
  });
}

template <class Stream>
void Session<Stream>::finish_upgrade(UpgradeDecision decision) {
  if (closed_) return;
  if (!decision.handler) {
    upgrade_request_.reset();
    keep_alive_ = false;  // the client expected a protocol switch; start over on a new connection
    send_response(std::move(decision.response));
    return;
  }
  if (ctx_.stopping.load()) {
    upgrade_request_.reset();
    close_now();
    return;
  }
  // Hand the socket over; this session is done (its destructor unregisters it).
  closed_ = true;
  auto ws = std::make_shared<WebSocketSession<Stream>>(std::move(stream_), ctx_, std::move(decision),
                                                       client_ip_, std::move(slot_));
  auto request = std::move(*upgrade_request_);
  upgrade_request_.reset();
  ws->start(std::move(request));
}

// ---- writing ----------------------------------------------------------------------------------

template <class Stream>
void Session<Stream>::send_response(Response res) {
  if (closed_) {
    dispose_stream_source(ctx_, std::move(res.stream));
    return;
  }
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
  dispose_stream_source(ctx_, std::move(res.stream));  // 204/304: never called

  // Serialized here into a reused buffer rather than through a beast::http::response: Beast's
  // header fields are one allocation each, and this is every plain response's path.
  std::string& out = out_;
  out.clear();
  out += version_ >= 11 ? "HTTP/1.1 " : "HTTP/1.0 ";
  char num[24];
  auto digits = [&num](auto v) {
    return std::string_view(num, static_cast<std::size_t>(std::to_chars(num, num + sizeof num, v).ptr - num));
  };
  out += digits(res.status);
  out += ' ';
  out += bhttp::obsolete_reason(bhttp::int_to_status(static_cast<unsigned>(res.status)));
  out += "\r\n";
  append_headers(res, out);
  if (!no_body) {
    out += "Content-Length: ";
    out += digits(res.body.size());
    out += "\r\n";
  }
  if (version_ >= 11) {
    if (close) out += "Connection: close\r\n";
  } else if (!close) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  out_body_.clear();
  if (!no_body && !head_) {  // HEAD: the length of what GET would send, no body
    // Small bodies go in the same buffer (one write, one TLS record); large ones are not copied.
    if (res.body.size() <= kInlineBodyBytes) {
      out += res.body;
    } else {
      out_body_ = std::move(res.body);
    }
  }
  tcp().expires_after(std::chrono::seconds(ctx_.options.write_timeout_s));
  std::array<net::const_buffer, 2> bufs{net::buffer(out_), net::buffer(out_body_)};
  net::async_write(stream_, bufs,
                   beast::bind_front_handler(&Session<Stream>::on_write, shared_from_this(), close));
}

template <class Stream>
void Session<Stream>::on_write(bool close, beast::error_code ec, std::size_t) {
  // Release a large body now, not at the next response; keep a small buffer for reuse.
  if (out_body_.capacity() > 0) std::string().swap(out_body_);
  if (out_.capacity() > 4 * kInlineBodyBytes) std::string().swap(out_);
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

template <class Stream>
void Session<Stream>::reject(int status, const char* code, const char* message) {
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
//
// The source runs on the stream pool and its pieces queue here, on the connection's I/O thread, until
// written. It is called again only while less than kStreamHighWater bytes wait: a client that stops reading
// costs at most that much memory and no thread, until the write timeout closes the connection.

template <class Stream>
void Session<Stream>::start_stream(Response res, bool close) {
  // HTTP/1.0 has no chunked encoding: the body ends when the connection does.
  stream_close_ = close || version_ < 11;
  stream_res_ = {};
  stream_res_.version(version_ >= 11 ? 11 : 10);
  stream_res_.result(static_cast<unsigned>(res.status));
  copy_headers(res, stream_res_);
  if (version_ >= 11) stream_res_.chunked(true);
  stream_res_.keep_alive(!stream_close_);
  stream_sr_.emplace(stream_res_);
  stream_out_.clear();
  stream_buffered_ = 0;
  stream_producing_ = false;
  stream_done_ = false;
  stream_writing_ = true;  // the header
  source_ = std::make_shared<StreamSource>(std::move(res.stream));
  tcp().expires_after(std::chrono::seconds(ctx_.options.write_timeout_s));
  bhttp::async_write_header(stream_, *stream_sr_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              self->stream_sr_.reset();
                              self->stream_writing_ = false;
                              if (ec) {
                                self->close_now();
                                return;
                              }
                              if (self->head_) {  // HEAD: headers only, the source never runs
                                self->release_source();
                                self->stream_done_ = true;
                              }
                              self->write_stream();
                              self->pump_stream();
                            });
}

template <class Stream>
void Session<Stream>::pump_stream() {
  if (closed_ || stream_done_ || stream_producing_ || !source_ || stream_buffered_ >= kStreamHighWater)
    return;
  stream_producing_ = true;
  // The producer owns a reference to the source for the whole call: release_source() may drop
  // the session's reference meanwhile (the client left), and the call must not lose its object.
  ctx_.streams.post([self = shared_from_this(), source = source_,
                     work = net::make_work_guard(stream_.get_executor())]() mutable {
    std::optional<std::string> piece;
    bool ok = true;
    try {
      piece = (*source)();
    } catch (const std::exception& e) {
      // Headers are gone already: the only honest signal left is a truncated body.
      log::error("stream_source_threw", {{"error", e.what()}});
      ok = false;
    } catch (...) {
      log::error("stream_source_threw", {{"error", "unknown exception"}});
      ok = false;
    }
    // Dropped here, on the stream pool: when the session let go meanwhile, this is the last
    // reference and the source's destructor (which may wait for synthesis) runs on this thread.
    source.reset();
    auto ex = self->stream_.get_executor();
    net::post(ex, [self = std::move(self), ok, piece = std::move(piece)]() mutable {
      self->on_stream_piece(ok, std::move(piece));
    });
  });
}

template <class Stream>
void Session<Stream>::on_stream_piece(bool ok, std::optional<std::string> piece) {
  stream_producing_ = false;
  if (closed_) {
    release_source();
    return;
  }
  if (!ok) {
    release_source();
    close_now();
    return;
  }
  if (!piece) {
    stream_done_ = true;
    release_source();
  } else if (!piece->empty()) {  // an empty chunk would end the chunked body
    stream_buffered_ += piece->size();
    stream_out_.push_back(std::move(*piece));
  }
  write_stream();
  pump_stream();
}

template <class Stream>
void Session<Stream>::release_source() {
  // A speech stream's destructor may wait for its synthesis to stop: not on an I/O thread. A
  // producer still running holds its own reference and drops it on the stream pool too.
  if (source_) ctx_.streams.post([s = std::move(source_)]() mutable { s.reset(); });
  source_.reset();
}

template <class Stream>
void Session<Stream>::write_stream() {
  if (closed_ || stream_writing_) return;
  if (stream_out_.empty()) {
    if (stream_done_) {
      stream_writing_ = true;
      finish_stream();
    }
    return;
  }
  stream_writing_ = true;
  tcp().expires_after(std::chrono::seconds(ctx_.options.write_timeout_s));
  auto on_done = [self = shared_from_this()](beast::error_code ec, std::size_t) {
    self->stream_writing_ = false;
    if (ec) {
      self->release_source();
      self->close_now();
      return;
    }
    self->stream_buffered_ -= self->stream_out_.front().size();
    self->stream_out_.pop_front();
    self->write_stream();
    self->pump_stream();
  };
  net::const_buffer data(stream_out_.front().data(), stream_out_.front().size());
  if (version_ >= 11) {
    net::async_write(stream_, bhttp::make_chunk(data), std::move(on_done));
  } else {
    net::async_write(stream_, data, std::move(on_done));
  }
}

template <class Stream>
void Session<Stream>::finish_stream() {
  if (closed_) return;
  if (version_ < 11 || head_) {
    stream_writing_ = false;
    if (stream_close_) {
      end_connection();
    } else {
      next_request();
    }
    return;
  }
  tcp().expires_after(std::chrono::seconds(ctx_.options.write_timeout_s));
  net::async_write(stream_, bhttp::make_chunk_last(),
                   [self = shared_from_this()](beast::error_code ec, std::size_t) {
                     self->stream_writing_ = false;
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

template <class Stream>
void Session<Stream>::end_connection() {
  if (unread_input_ || buffer_.size() > 0) {
    linger_close();
  } else if constexpr (kIsTls<Stream>) {
    // close_notify, so the client can tell the end from a truncation; bounded by the linger time
    // (clients often just close without answering it, which ends the wait too).
    tcp().expires_after(kLingerTime);
    stream_.async_shutdown([self = shared_from_this()](beast::error_code) { self->close_now(); });
  } else {
    beast::error_code ec;
    tcp().socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
    close_now();
  }
}

template <class Stream>
void Session<Stream>::linger_close() {
  // Closing with unread input makes the kernel send RST, which can destroy the response we just
  // sent before the client reads it. Half-close and drain for a moment instead (like nginx's
  // lingering_close), so a 413 or 400 actually reaches the client.
  beast::error_code ec;
  tcp().socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  if (ec) {
    close_now();
    return;
  }
  buffer_.clear();
  tcp().expires_after(kLingerTime);
  drain();
}

template <class Stream>
void Session<Stream>::drain() {
  if (closed_) return;
  // On the raw TCP stream: under TLS, what the client still sends is only thrown away.
  tcp().async_read_some(net::buffer(drain_buf_),
                        [self = shared_from_this()](beast::error_code ec, std::size_t) {
                          if (ec) {
                            self->close_now();
                          } else {
                            self->drain();
                          }
                        });
}

template <class Stream>
void Session<Stream>::close_now() {
  if (closed_) return;
  closed_ = true;
  idle_ = false;
  // Every way a stream ends early comes through here (write error, timeout, forced shutdown).
  release_source();
  tcp().close();
}

}  // namespace imago::http::detail

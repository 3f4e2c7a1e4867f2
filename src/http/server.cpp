#include "http/server.h"

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/url/parse.hpp>
#include <csignal>
#include <filesystem>
#include <thread>

#include "http/listener.h"
#include "http/server_internal.h"
#include "http/session.h"
#include "http/tls.h"
#include "util/cpu_cores.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"
#include "util/thread_name.h"

namespace imago::http {

namespace detail {

ServerContext::ServerContext(ServerOptions opts, Dispatcher& d)
    : options(std::move(opts)),
      dispatcher(d),
      ioc(1),
      control(net::make_strand(ioc)),
      grace_timer(control),
      // About one awake worker per core; more wake up only when handlers block (see WorkerPool).
      workers(static_cast<std::size_t>(options.worker_threads),
              std::min<std::size_t>(static_cast<std::size_t>(options.worker_threads),
                                    static_cast<std::size_t>(usable_cores()))),
      // These pools' threads mostly wait (for synthesis, for other hosts): all may be awake.
      streams(static_cast<std::size_t>(options.stream_threads),
              static_cast<std::size_t>(options.stream_threads)),
      cpu(static_cast<std::size_t>(options.cpu_threads), static_cast<std::size_t>(options.cpu_threads)),
      outbound(static_cast<std::size_t>(options.outbound_threads),
               static_cast<std::size_t>(options.outbound_threads)) {
  for (int i = 1; i < options.io_threads; ++i) {
    extra_iocs.push_back(std::make_unique<net::io_context>(1));
    extra_guards.push_back(net::make_work_guard(*extra_iocs.back()));
  }
}

net::io_context& ServerContext::next_connection_ioc() {
  const unsigned k = next_io.fetch_add(1, std::memory_order_relaxed) % (extra_iocs.size() + 1);
  return k == 0 ? ioc : *extra_iocs[k - 1];
}

ServerContext::Slot::~Slot() {
  if (!ctx) return;
  ctx->connections.fetch_sub(1);
  std::lock_guard lock(ctx->conn_mu);
  auto it = ctx->per_ip.find(ip);
  if (it != ctx->per_ip.end() && --it->second <= 0) ctx->per_ip.erase(it);
}

ServerContext::Admit ServerContext::acquire(const std::string& ip, std::unique_ptr<Slot>* slot) {
  if (connections.load() >= connection_limit) return Admit::kGlobalFull;
  bool exempt = std::find(options.per_ip_exempt.begin(), options.per_ip_exempt.end(), ip) !=
                options.per_ip_exempt.end();
  {
    std::lock_guard lock(conn_mu);
    int& n = per_ip[ip];
    if (!exempt && n >= options.max_connections_per_ip) {
      if (n == 0) per_ip.erase(ip);
      return Admit::kIpFull;
    }
    ++n;
  }
  connections.fetch_add(1);
  *slot = std::make_unique<Slot>();
  (*slot)->ctx = this;
  (*slot)->ip = ip;
  return Admit::kOk;
}

void ServerContext::add_session(Connection* s, std::weak_ptr<Connection> w) {
  std::lock_guard lock(mu);
  sessions.emplace(s, std::move(w));
}

void ServerContext::remove_session(Connection* s) {
  std::lock_guard lock(mu);
  sessions.erase(s);
  if (sessions.empty() && stopping.load()) net::post(control, [this] { finish_shutdown(); });
}

std::vector<std::shared_ptr<Connection>> ServerContext::live_sessions() {
  std::vector<std::shared_ptr<Connection>> out;
  std::lock_guard lock(mu);
  out.reserve(sessions.size());
  for (auto& [_, w] : sessions) {
    if (auto s = w.lock()) out.push_back(std::move(s));
  }
  return out;
}

void ServerContext::shutdown_pools(bool drain) {
  for (WorkerPool* p : {&workers, &streams, &cpu, &outbound}) p->shutdown(drain);
  for (WorkerPool* p : {&workers, &streams, &cpu, &outbound}) p->join();
}

void ServerContext::finish_shutdown() {
  // Nothing else keeps io_context::run() busy once the acceptor is closed and the connections
  // are gone: cancelling these lets run() return.
  finished = true;
  for (auto& g : extra_guards) g.reset();
  grace_timer.cancel();
  if (signals) {
    boost::system::error_code ec;
    signals->cancel(ec);
  }
}

Response server_error(int status, const char* code, const char* message) {
  Response r = Response::error(status, code, message);
  r.headers.set("X-Request-Id", new_id("req"));
  return r;
}

bool parse_target(std::string_view target, std::string& path, std::map<std::string, std::string>& query) {
  if (target.empty()) return false;
  std::string_view resource = target;
  if (target[0] != '/') {
    // absolute-form (RFC 9112 3.2.2) must be accepted; only its path and query matter here.
    auto u = boost::urls::parse_absolute_uri(target);
    if (!u || (u->scheme_id() != boost::urls::scheme::http && u->scheme_id() != boost::urls::scheme::https)) {
      return false;
    }
    resource = u->encoded_target();
    if (resource.empty()) resource = "/";
    if (resource[0] != '/') return false;
  }
  // Decoding is deliberately lenient about characters RFC 3986 wants escaped ('|', '{', '"'...),
  // which real clients send raw; only broken %-escapes and NUL bytes are refused.
  std::string_view raw_path = resource, raw_query;
  if (auto q = resource.find('?'); q != std::string_view::npos) {
    raw_path = resource.substr(0, q);
    raw_query = resource.substr(q + 1);
  }
  if (auto f = raw_query.find('#'); f != std::string_view::npos) raw_query = raw_query.substr(0, f);
  if (auto f = raw_path.find('#'); f != std::string_view::npos) raw_path = raw_path.substr(0, f);
  auto decoded = url_decode(raw_path, /*form=*/false);
  if (!decoded || decoded->find('\0') != std::string::npos) return false;
  path = std::move(*decoded);
  auto q = parse_form_urlencoded(raw_query);
  if (!q) return false;
  query = std::move(*q);
  return true;
}

std::string format_ip(const net::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6()).to_string();
  }
  return a.to_string();
}

}  // namespace detail

using detail::ServerContext;
namespace net = boost::asio;

struct Server::Impl {
  std::unique_ptr<ServerContext> ctx;
  std::shared_ptr<detail::Listener> listener;
  std::atomic<bool> stop_requested{false};

  void do_stop();  // runs on ctx->control
  void force_close_all();
  void wait_signal();
  void run_io(net::io_context& io);
};

namespace {
ServerOptions normalized(ServerOptions o) {
  if (o.io_threads <= 0) o.io_threads = usable_cores();
  if (o.worker_threads <= 0) o.worker_threads = 1;
  if (o.stream_threads <= 0) o.stream_threads = 1;
  if (o.cpu_threads <= 0) o.cpu_threads = 1;
  if (o.outbound_threads <= 0) o.outbound_threads = 1;
  if (o.cpu_queue < 0) o.cpu_queue = 0;
  if (o.outbound_queue < 0) o.outbound_queue = 0;
  if (o.read_timeout_s <= 0) o.read_timeout_s = 30;
  if (o.write_timeout_s <= 0) o.write_timeout_s = 60;
  if (o.idle_timeout_s <= 0) o.idle_timeout_s = 60;
  if (o.shutdown_grace_s < 0) o.shutdown_grace_s = 0;
  if (o.tls_handshake_timeout_s <= 0) o.tls_handshake_timeout_s = 10;
  if (o.header_limit < 256) o.header_limit = 256;
  if (o.spool_threshold == 0) o.spool_threshold = 1;
  if (o.spool_dir.empty()) {
    std::error_code ec;
    auto tmp = std::filesystem::temp_directory_path(ec);
    o.spool_dir = ec ? "/tmp" : tmp.string();
  }
  if (o.max_connections <= 0) o.max_connections = 1;
  if (o.max_connections_per_ip <= 0) o.max_connections_per_ip = 1;
  if (o.fd_reserve < 0) o.fd_reserve = 0;
  return o;
}
}  // namespace

Server::Server(ServerOptions options, Dispatcher& dispatcher) : impl_(std::make_unique<Impl>()) {
  impl_->ctx = std::make_unique<ServerContext>(normalized(std::move(options)), dispatcher);
  auto& ctx = *impl_->ctx;
  // Descriptors: raise the soft limit to the hard one, then keep fd_reserve of them for
  // everything that is not a client connection (database, blob files, fetches, webhooks).
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    if (rl.rlim_cur < rl.rlim_max) {
      rlimit want = rl;
      want.rlim_cur = std::min<rlim_t>(rl.rlim_max, 1 << 20);
      if (setrlimit(RLIMIT_NOFILE, &want) == 0) rl = want;
    }
  }
  const long fds = rl.rlim_cur == RLIM_INFINITY ? (1L << 20) : static_cast<long>(rl.rlim_cur);
  const long by_fds = std::max(16L, fds - ctx.options.fd_reserve);
  ctx.connection_limit = static_cast<int>(std::min<long>(ctx.options.max_connections, by_fds));
  if (ctx.connection_limit < ctx.options.max_connections) {
    log::warn("connection_limit_reduced", {{"max_connections", ctx.options.max_connections},
                                           {"effective", ctx.connection_limit},
                                           {"descriptors", fds},
                                           {"fd_reserve", ctx.options.fd_reserve}});
  }
}

int Server::connection_count() const {
  return impl_->ctx->connections.load();
}

Server::~Server() {
  // Normally run() has returned. If it never ran, drop the queued work: the worker pool is
  // joined first, then the listener and the io_context (which destroys any pending session).
  impl_->ctx->shutdown_pools(/*drain=*/false);
  impl_->listener.reset();
  impl_->ctx.reset();
}

Status Server::listen() {
  if (impl_->listener) return Status(Code::kConflict, "already listening");
  auto& opts = impl_->ctx->options;
  if (!opts.tls_cert_file.empty() || !opts.tls_key_file.empty()) {
    if (opts.tls_cert_file.empty() || opts.tls_key_file.empty())
      return Status::Invalid("TLS needs both --tls-cert and --tls-key");
    auto tls = detail::make_tls_context(opts.tls_cert_file, opts.tls_key_file);
    if (!tls.ok()) return tls.status();
    impl_->ctx->tls = std::move(*tls);
  }
  auto l = std::make_shared<detail::Listener>(*impl_->ctx);
  Status st = l->open(impl_->ctx->options.host, impl_->ctx->options.port);
  if (!st.ok()) return st;
  impl_->listener = std::move(l);
  return Status::Ok();
}

int Server::port() const {
  return impl_->listener ? impl_->listener->port() : 0;
}

void Server::run() {
  auto& ctx = *impl_->ctx;
  if (!impl_->listener) {
    Status st = listen();
    if (!st.ok()) {
      log::error("listen_failed", {{"error", st.message()}});
      return;
    }
  }
  impl_->listener->start();
  if (ctx.options.handle_signals) {
    ctx.signals.emplace(ctx.control, SIGINT, SIGTERM);
    impl_->wait_signal();
  }
  std::vector<std::thread> threads;
  for (auto& extra : ctx.extra_iocs)
    threads.emplace_back([this, io = extra.get()] {
      name_this_thread("io");
      impl_->run_io(*io);
    });
  impl_->run_io(ctx.ioc);
  for (auto& t : threads) t.join();
  // Every worker task holds a work guard on the io_context, so none is left at this point.
  ctx.shutdown_pools(/*drain=*/true);
}

void Server::stop() {
  if (impl_->stop_requested.exchange(true)) return;
  net::post(impl_->ctx->control, [impl = impl_.get()] { impl->do_stop(); });
}

void Server::Impl::run_io(net::io_context& io) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      // A handler threw (allocation failure, a Beast invariant): keep serving the others.
      log::error("io_handler_threw", {{"error", e.what()}});
    }
  }
}

void Server::Impl::wait_signal() {
  ctx->signals->async_wait([this](boost::system::error_code ec, int signo) {
    if (ec || ctx->finished) return;
    log::info("signal_received", {{"signal", signo}});
    if (!stop_requested.exchange(true)) {
      do_stop();
    } else {
      force_close_all();  // a second signal: stop waiting for in-flight requests
    }
    if (!ctx->finished) wait_signal();
  });
}

void Server::Impl::do_stop() {
  if (ctx->stopping.exchange(true)) return;
  log::info("shutdown_started", {{"grace_s", ctx->options.shutdown_grace_s}});
  if (listener) listener->stop();
  if (ctx->options.before_shutdown) ctx->options.before_shutdown();
  auto live = ctx->live_sessions();
  for (auto& s : live) s->begin_shutdown();
  live.clear();  // a Session destroyed here takes ctx->mu: release before locking below
  std::lock_guard lock(ctx->mu);
  if (ctx->sessions.empty()) {
    ctx->finish_shutdown();
    return;
  }
  ctx->grace_timer.expires_after(std::chrono::seconds(ctx->options.shutdown_grace_s));
  ctx->grace_timer.async_wait([this](boost::system::error_code ec) {
    if (ec || ctx->finished) return;
    log::warn("shutdown_grace_expired", {});
    force_close_all();
  });
}

void Server::Impl::force_close_all() {
  for (auto& s : ctx->live_sessions()) s->force_close();
}

}  // namespace imago::http

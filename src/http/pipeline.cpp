#include "http/pipeline.h"

#include <charconv>
#include <chrono>

#include "util/crypto.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago::http {

namespace {

constexpr size_t kUnknownRouteBodyLimit = 64 * 1024;

bool sane_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
              c == '_' || c == '.' || c == ':';
    if (!ok) return false;
  }
  return true;
}

bool looks_like_ip(std::string_view s) {
  if (s.empty() || s.size() > 45) return false;
  for (char c : s) {
    bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> bearer_token(const Request& req) {
  auto h = req.headers.get("Authorization");
  if (!h) return std::nullopt;
  std::string_view v = trim(*h);
  if (v.size() < 7 || !iequals(v.substr(0, 7), "bearer ")) return std::string();
  return std::string(trim(v.substr(7)));
}

// Sec-WebSocket-Protocol: "imago.v1, bearer.<token>" (browsers cannot set Authorization).
struct Subprotocols {
  bool imago_v1 = false;
  std::string bearer;
};
Subprotocols parse_subprotocols(const Request& req) {
  Subprotocols out;
  for (const auto& [name, value] : req.headers.all()) {
    if (!iequals(name, "Sec-WebSocket-Protocol")) continue;
    for (std::string_view p : split(value, ',')) {
      p = trim(p);
      if (p == "imago.v1") out.imago_v1 = true;
      if (p.size() > 7 && p.substr(0, 7) == "bearer.") out.bearer = std::string(p.substr(7));
    }
  }
  return out;
}

Response too_many(std::string message, int retry_after_s) {
  Response r = Response::error(429, "RATE_LIMITED", std::move(message));
  r.headers.set("Retry-After", std::to_string(retry_after_s));
  return r;
}

}  // namespace

Pipeline::Pipeline(const Router& router, Authenticator& auth, RateLimiter& limiter, WindowCounter& windows,
                   Metrics& metrics, PipelineOptions options)
    : router_(router),
      auth_(auth),
      limiter_(limiter),
      windows_(windows),
      metrics_(metrics),
      options_(std::move(options)),
      outbound_share_(options_.outbound_per_account) {}

RouteMatch Pipeline::match(std::string_view method, std::string_view path, bool* via_session) const {
  *via_session = false;
  RouteMatch m = router_.match(method, path);
  if (m.route || m.path_known || !path.starts_with(kDashboardApiPrefix)) return m;
  std::string_view inner = path.substr(kDashboardApiPrefix.size());
  if (!inner.starts_with("/v")) return m;
  RouteMatch api = router_.match(method, inner);
  // Only key-authenticated routes: admin and public routes keep their own doors.
  if (api.route && api.route->options.auth != AuthMode::kApiKey) return m;
  if (!api.route && !api.path_known) return m;
  *via_session = true;
  return api;
}

RouteInfo Pipeline::route_info(std::string_view method, std::string_view path) const {
  bool via_session = false;
  RouteMatch m = match(method, path, &via_session);
  RouteInfo info;
  info.body_limit = m.route ? m.route->options.body_limit : kUnknownRouteBodyLimit;
  if (m.route) {
    const RouteOptions& o = m.route->options;
    info.pool = o.pool;
    info.needs_auth = via_session || o.auth != AuthMode::kNone;
    info.spool_body = o.spool_body;
    if (info.pool == HandlerPool::kInline) {
      // Dashboard sessions write to the member store; with a database server, keys, rate limits
      // and throttles are network round trips. Neither may run on an I/O thread.
      const bool uses_backend = info.needs_auth || o.anon_ip_limited;
      if (via_session || (options_.network_backend && uses_backend)) info.pool = HandlerPool::kRequest;
    }
  }
  return info;
}

std::string Pipeline::client_ip(const Request& req) const {
  const std::string& peer = req.client_ip;
  auto trusted = [&](std::string_view ip) {
    for (const auto& p : options_.trusted_proxies) {
      if (p == ip) return true;
    }
    return false;
  };
  if (!trusted(peer)) return peer;
  auto xff = req.headers.get("X-Forwarded-For");
  if (!xff) return peer;
  // Walk right to left: the nearest hop not run by us is the client.
  auto hops = split(*xff, ',');
  for (auto it = hops.rbegin(); it != hops.rend(); ++it) {
    std::string_view hop = trim(*it);
    if (!looks_like_ip(hop)) return peer;
    if (!trusted(hop)) return std::string(hop);
  }
  return peer;
}

Response Pipeline::throttled_or(Request& req, Response unauthorized) {
  const std::string key = "authfail:" + req.client_ip;
  auto state = windows_.peek(key, options_.failed_auth_per_minute, 60);
  if (state.blocked) {
    metrics_.count_auth_rejected("throttled");
    return too_many("Too many failed authentication attempts from this address; retry after " +
                        std::to_string(state.retry_after_s) + " seconds",
                    state.retry_after_s);
  }
  windows_.hit(key, options_.failed_auth_per_minute, 60);
  metrics_.count_auth_rejected(unauthorized.error_code == "MISSING_AUTH" ? "missing" : "invalid");
  return unauthorized;
}

std::optional<Response> Pipeline::refuse_key(Request& req, const Route& route, const Status& status) {
  if (status.code() != Code::kUnauthenticated) {
    log::error("auth_backend_error", {{"request_id", req.request_id}, {"error", status.message()}});
    Response r = Response::error(503, "SERVICE_UNAVAILABLE", "Authentication is temporarily unavailable");
    r.headers.set("Retry-After", "1");
    return r;
  }
  Response unauthorized = Response::error(401, "UNAUTHORIZED", "Invalid api-secret");
  if (!route.options.invalid_key_reaches_handler) return throttled_or(req, std::move(unauthorized));
  Response gate = throttled_or(req, std::move(unauthorized));
  if (gate.status == 429) return gate;
  return std::nullopt;  // handler runs without a principal
}

std::optional<Response> Pipeline::authenticate(Request& req, const Route& route, bool via_session,
                                               PendingKey* pending) {
  switch (via_session ? AuthMode::kSession : route.options.auth) {
    case AuthMode::kNone:
      break;
    case AuthMode::kSession: {
      Response r = authenticate_session(req);
      if (!req.principal) return r;
      break;
    }
    case AuthMode::kAdmin: {
      auto token = bearer_token(req);
      if (!token)
        return throttled_or(req,
                            Response::error(401, "MISSING_AUTH", "Missing Authorization: Bearer header"));
      if (options_.admin_token.empty() || !constant_time_equal(*token, options_.admin_token)) {
        return throttled_or(req, Response::error(401, "UNAUTHORIZED", "Invalid admin token"));
      }
      break;
    }
    case AuthMode::kApiKey: {
      std::optional<std::string> secret;
      if (auto h = req.headers.get("api-secret")) secret = std::string(trim(*h));
      if (!secret && route.options.accept_bearer) {
        if (auto b = bearer_token(req); b && !b->empty()) secret = *b;
      }
      if (!secret && route.websocket) {
        if (auto sp = parse_subprotocols(req); !sp.bearer.empty()) secret = sp.bearer;
      }
      if (!secret)
        return throttled_or(req, Response::error(401, "MISSING_AUTH", "Missing api-secret header"));
      auto p =
          pending ? auth_.authenticate_deferred(*secret, &pending->unconfirmed) : auth_.authenticate(*secret);
      if (p.ok()) {
        req.principal = std::move(p).value();
        if (pending && pending->unconfirmed) pending->secret = std::move(*secret);
        break;
      }
      return refuse_key(req, route, p.status());
    }
  }

  return std::nullopt;
}

std::optional<Response> Pipeline::precheck(Request& req) {
  const auto started = std::chrono::steady_clock::now();
  assign_ids(req);
  bool via_session = false;
  RouteMatch m = match(req.method, req.path, &via_session);
  if (!m.route) return std::nullopt;
  // A remembered key lookup passes unconfirmed here: this only refuses early, and the full
  // pipeline authenticates again (and confirms) once the body is in.
  PendingKey pending;
  auto refused = authenticate(req, *m.route, via_session, &pending);
  req.principal.reset();
  if (!refused) return std::nullopt;
  refused->headers.set("X-Request-Id", req.request_id);
  finish(req, m.route->name, *refused, started);
  return refused;
}

Response Pipeline::authenticate_session(Request& req) {
  std::optional<std::string> token;
  if (auto c = req.headers.get("Cookie")) token = cookie_value(*c, kSessionCookie);
  if (!token || token->empty() || !options_.members) {
    return Response::error(401, "MISSING_AUTH", "Not signed in");
  }
  std::string_view csrf = req.headers.get("X-CSRF-Token").value_or("");
  auto p = options_.members->authenticate(*token, req.method, csrf);
  if (p.ok()) {
    req.principal = std::move(p).value();
    return Response{};
  }
  switch (p.status().code()) {
    case Code::kUnauthenticated:
      return throttled_or(req, Response::error(401, "UNAUTHORIZED", p.status().message()));
    case Code::kForbidden:
      return Response::error(403, "CSRF_FAILED", p.status().message());
    default: {
      log::error("session_backend_error", {{"request_id", req.request_id}, {"error", p.status().message()}});
      Response r = Response::error(503, "SERVICE_UNAVAILABLE", "Authentication is temporarily unavailable");
      r.headers.set("Retry-After", "1");
      return r;
    }
  }
}

Response Pipeline::run(Request& req, const RouteMatch& m, bool via_session, std::string* route_name,
                       std::optional<RateDecision>* rate, const std::function<Response(const Route&)>& last) {
  if (!m.route) {
    if (m.path_known) {
      *route_name = "method_not_allowed";
      Response r = Response::error(405, "METHOD_NOT_ALLOWED",
                                   "Method " + req.method + " is not allowed on " + req.path);
      std::string allow;
      for (std::string_view a : m.allowed) {
        if (!allow.empty()) allow += ", ";
        allow += a;
      }
      r.headers.set("Allow", allow);
      return r;
    }
    *route_name = "unmatched";
    return Response::error(404, "NOT_FOUND", "No route for " + req.method + " " + req.path);
  }
  const Route& route = *m.route;
  *route_name =
      via_session ? route.method + " " + std::string(kDashboardApiPrefix) + route.pattern : route.name;
  req.params = m.params;

  if (route.options.anon_ip_limited) {
    auto w = windows_.hit("anon:" + req.client_ip, options_.anon_per_minute, 60);
    if (w.blocked) {
      metrics_.count_rate_limited("anonymous");
      return too_many("Too many requests to this endpoint from this address; retry after " +
                          std::to_string(w.retry_after_s) + " seconds",
                      w.retry_after_s);
    }
  }

  // Routes with a rate limit may authenticate a key from a remembered answer: the limit's
  // statement reads the key-change counter in the same round trip, and confirms it below.
  const bool limited = route.tier() != Tier::kExempt;
  PendingKey pending;
  if (auto refused = authenticate(req, route, via_session, limited ? &pending : nullptr)) {
    return std::move(*refused);
  }

  if (req.principal && limited) {
    const Tier tier = route.tier();
    auto per_minute_of = [&](const Principal& p) {
      const PlanLimits limits = p.custom_limits ? *p.custom_limits : default_limits(p.plan);
      return std::max(1, limits.for_tier(tier));
    };
    auto bucket_of = [&](const Principal& p) {
      return "acct:" + p.account_id + ":" + std::string(tier_name(tier));
    };
    auto take = [&](const Principal& p) { return limiter_.take(bucket_of(p), per_minute_of(p)); };
    // A remembered answer's plan chose the bucket: the take counts only while the counter still
    // equals the answer's tag, so a plan change never spends the refill at the old plan's rate.
    RateDecision d = pending.unconfirmed
                         ? limiter_.take_if_unchanged(bucket_of(*req.principal),
                                                      per_minute_of(*req.principal), *pending.unconfirmed)
                         : take(*req.principal);
    if (pending.unconfirmed) {
      // The counter was read after the request arrived: equal to the answer's, no key changed
      // since the answer was read, and the answer is what a read now would give. Otherwise the key
      // is read again (docs/http.md, "Authentication cache").
      auto fresh = auth_.confirm(pending.secret, *req.principal, *pending.unconfirmed, d.key_changes);
      if (!fresh.ok()) {
        req.principal.reset();
        if (auto refused = refuse_key(req, route, fresh.status())) return std::move(*refused);
        return last(route);  // invalid_key_reaches_handler: no principal, no account bucket
      }
      if (*fresh) {
        // Read again: the request counts in the bucket of what it read, unless the take above
        // already counted it there (a limiter without the counter takes unconditionally).
        const bool same_bucket = (*fresh)->account_id == req.principal->account_id &&
                                 per_minute_of(**fresh) == per_minute_of(*req.principal);
        req.principal = std::move(**fresh);
        if (!same_bucket || !d.taken) d = take(*req.principal);
      }
    }
    const int per_minute = per_minute_of(*req.principal);
    *rate = d;
    if (!d.allowed) {
      metrics_.count_rate_limited(std::string(tier_name(tier)));
      return Response::error(429, "RATE_LIMITED",
                             "Rate limit exceeded for the " + std::string(tier_name(tier)) + " tier (" +
                                 std::to_string(per_minute) + " requests per minute); retry after " +
                                 std::to_string(d.retry_after_s) + " seconds");
    }
  }

  // Handlers that wait on other hosts: one account holds at most its share of the outbound
  // threads (a slow target of its choosing must not delay other accounts' fetches and pings).
  AccountShare::Lease outbound;
  if (route.options.pool == HandlerPool::kOutbound && req.principal) {
    outbound = outbound_share_.try_acquire(req.principal->account_id);
    if (!outbound) {
      metrics_.count_rate_limited("outbound_share");
      Response r =
          Response::error(503, "SERVICE_UNAVAILABLE",
                          "This account already has " + std::to_string(outbound_share_.per_account()) +
                              " requests waiting on other hosts; retry shortly");
      r.headers.set("Retry-After", "1");
      return r;
    }
  }
  return last(route);
}

Response Pipeline::dispatch(Request& req) {
  return process(req, [&](const Route& route) {
    if (route.websocket) {
      Response r = Response::error(426, "UPGRADE_REQUIRED", "This endpoint speaks WebSocket only");
      r.headers.set("Upgrade", "websocket");
      r.headers.set("Connection", "Upgrade");
      return r;
    }
    return route.handler(req);
  });
}

UpgradeDecision Pipeline::upgrade(Request& req) {
  UpgradeDecision d;
  d.response = process(req, [&](const Route& route) {
    if (!route.websocket) return route.handler(req);  // Upgrade ignored on plain routes (RFC 9110 7.8)
    Subprotocols sp = parse_subprotocols(req);
    WebSocketUpgrade u{req, {}};
    if (auto b = bearer_token(req); b && !b->empty()) {
      u.bearer_token = *b;
    } else {
      u.bearer_token = sp.bearer;
    }
    const bool token_auth = route.options.auth == AuthMode::kNone;
    if (token_auth && !u.bearer_token.empty()) {
      // Token-authenticated upgrades share the failed-auth throttle of key-authenticated routes.
      auto state = windows_.peek("authfail:" + req.client_ip, options_.failed_auth_per_minute, 60);
      if (state.blocked) {
        metrics_.count_auth_rejected("throttled");
        return too_many("Too many failed authentication attempts from this address; retry after " +
                            std::to_string(state.retry_after_s) + " seconds",
                        state.retry_after_s);
      }
    }
    WebSocketAccept a = route.websocket(u);
    if (!a.handler) {
      if (a.rejection.status == 401 && token_auth) return throttled_or(req, std::move(a.rejection));
      return std::move(a.rejection);
    }
    d.handler = std::move(a.handler);
    d.options = route.websocket_options;
    if (sp.imago_v1) d.subprotocol = "imago.v1";
    Response ok;
    ok.status = 101;
    return ok;
  });
  d.request_id = req.request_id;
  if (d.handler) d.response = {};
  return d;
}

Response Pipeline::process(Request& req, const std::function<Response(const Route&)>& last) {
  const auto started = std::chrono::steady_clock::now();
  assign_ids(req);
  bool via_session = false;
  RouteMatch m = match(req.method, req.path, &via_session);
  std::string route_name;
  std::optional<RateDecision> rate;
  Response resp;
  try {
    resp = run(req, m, via_session, &route_name, &rate, last);
  } catch (const std::exception& e) {
    log::error("handler_exception",
               {{"request_id", req.request_id}, {"route", route_name}, {"error", e.what()}});
    resp = Response::error(500, "INTERNAL_ERROR", "Internal server error");
  }

  resp.headers.set("X-Request-Id", req.request_id);
  if (rate) {
    resp.headers.set("X-RateLimit-Limit", std::to_string(rate->limit));
    resp.headers.set("X-RateLimit-Remaining", std::to_string(rate->remaining));
    resp.headers.set("X-RateLimit-Reset", std::to_string(rate->reset_unix_s));
    if (!rate->allowed) resp.headers.set("Retry-After", std::to_string(rate->retry_after_s));
  }

  finish(req, route_name, resp, started);
  return resp;
}

void Pipeline::assign_ids(Request& req) const {
  if (auto incoming = req.headers.get("X-Request-Id"); incoming && sane_request_id(*incoming)) {
    req.request_id = std::string(*incoming);
  } else {
    req.request_id = new_unique_id("req");
  }
  req.client_ip = client_ip(req);
}

void Pipeline::finish(const Request& req, const std::string& route_name, const Response& resp,
                      std::chrono::steady_clock::time_point started) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  metrics_.observe_request(route_name, resp.status, seconds);
  if (!log::enabled(log::Level::kInfo)) return;
  // One line per request: formatted straight into a reused per-thread buffer (no JSON tree, no
  // allocation once the buffer has grown), same fields and escaping as log::info would produce.
  thread_local std::string line;
  line.clear();
  log::begin_line(line, log::Level::kInfo, "request");
  auto field = [&](std::string_view name, std::string_view value) {
    line += ",\"";
    line += name;
    line += "\":";
    log::append_json_string(line, value);
  };
  char num[32];
  auto number = [&](std::string_view name, long long v) {
    line += ",\"";
    line += name;
    line += "\":";
    line.append(num, static_cast<size_t>(std::to_chars(num, num + sizeof num, v).ptr - num));
  };
  field("request_id", req.request_id);
  field("method", req.method);
  field("route", route_name);
  field("path", req.path);
  number("status", resp.status);
  const auto hundredths = static_cast<long long>(seconds * 1e5);
  number("latency_ms", hundredths / 100);  // then ".hh": two decimals, like the former rounding
  line += '.';
  line += static_cast<char>('0' + hundredths / 10 % 10);
  line += static_cast<char>('0' + hundredths % 10);
  field("ip", req.client_ip);
  if (req.principal) field("account", req.principal->account_id);
  if (!resp.error_code.empty()) field("error", resp.error_code);
  if (resp.stream) line += ",\"streamed\":true";
  if (resp.status == 101) line += ",\"websocket\":true";
  line += '}';
  log::write_line(line);
}

}  // namespace imago::http

// The middleware between the socket and the handlers, in order:
//   request id -> client IP -> route match (404/405) -> per-IP cap on anonymous endpoints ->
//   authentication with the failed-auth throttle -> rate limit of the route's tier ->
//   handler -> X-Request-Id / X-RateLimit-* headers -> metrics and one access-log line.
// The dashboard reaches every api-secret route under /dashboard/api (GET /dashboard/api/v1/agents
// runs the handler of GET /v1/agents) with a member's session cookie and CSRF token instead of a
// key: the same handlers, limits and envelopes, while /v1 itself stays api-secret only.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "auth/authenticator.h"
#include "auth/members.h"
#include "http/account_share.h"
#include "http/metrics.h"
#include "http/router.h"
#include "http/server.h"
#include "limits/rate_limiter.h"

namespace imago::http {

struct PipelineOptions {
  std::string admin_token;
  std::vector<std::string> trusted_proxies;
  int failed_auth_per_minute = 30;  // SPEC 8.3
  int anon_per_minute = 120;        // SPEC 8.3
  MemberAuth* members = nullptr;    // dashboard sessions; null: session routes answer 401
  // Requests of one account that may run at once on the outbound pool (HandlerPool::kOutbound);
  // more get 503 SERVICE_UNAVAILABLE with Retry-After while other accounts are served.
  int outbound_per_account = 2;
  // The authenticator, rate limiter and throttles wait on a database server (PostgreSQL): a
  // HandlerPool::kInline route then runs inline only when it needs none of them (GET /healthz);
  // the others go to the request pool. See docs/http.md, "Where handlers run".
  bool network_backend = false;
};

inline constexpr std::string_view kDashboardApiPrefix = "/dashboard/api";

class Pipeline final : public Dispatcher {
 public:
  Pipeline(const Router& router, Authenticator& auth, RateLimiter& limiter, WindowCounter& windows,
           Metrics& metrics, PipelineOptions options);

  RouteInfo route_info(std::string_view method, std::string_view path) const override;
  Response dispatch(Request& req) override;
  UpgradeDecision upgrade(Request& req) override;
  std::optional<Response> precheck(Request& req) override;

 private:
  std::string client_ip(const Request& req) const;
  Response throttled_or(Request& req, Response unauthorized);
  void assign_ids(Request& req) const;  // request id, client IP (through trusted proxies)
  // The route for a request, with API routes mapped under kDashboardApiPrefix (*via_session).
  RouteMatch match(std::string_view method, std::string_view path, bool* via_session) const;
  // A key authentication that rests on a remembered answer not confirmed yet (PostgreSQL): the
  // request's rate-limit statement reads the key-change counter that confirms it.
  struct PendingKey {
    std::string secret;
    std::optional<uint64_t> unconfirmed;  // Authenticator::authenticate_deferred
  };
  // Authentication of the route's mode (a member's session when `via_session`) with the failed-auth
  // throttle: the refusal, or nullopt. With `pending`, a key may be authenticated deferred.
  std::optional<Response> authenticate(Request& req, const Route& route, bool via_session,
                                       PendingKey* pending = nullptr);
  // A key that did not authenticate: 503 when the database failed, else the throttled 401, or
  // nullopt when the route's handler runs without a principal (invalid_key_reaches_handler).
  std::optional<Response> refuse_key(Request& req, const Route& route, const Status& status);
  Response authenticate_session(Request& req);
  // Metrics and the access-log line.
  void finish(const Request& req, const std::string& route_name, const Response& resp,
              std::chrono::steady_clock::time_point started);
  // The whole pipeline around `last` (the handler, or the WebSocket factory): ids, auth, limits, log.
  Response process(Request& req, const std::function<Response(const Route&)>& last);
  Response run(Request& req, const RouteMatch& m, bool via_session, std::string* route_name,
               std::optional<RateDecision>* rate, const std::function<Response(const Route&)>& last);

  const Router& router_;
  Authenticator& auth_;
  RateLimiter& limiter_;
  WindowCounter& windows_;
  Metrics& metrics_;
  PipelineOptions options_;
  AccountShare outbound_share_;
};

}  // namespace imago::http

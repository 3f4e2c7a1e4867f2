// Liveness, readiness and metrics: no API key, never rate limited.
#include "api/routes.h"
#include "http/metrics.h"
#include "store/account_store.h"

namespace imago::api {

void register_health_routes(http::Router& router, Services& s) {
  const http::RouteOptions open{.auth = http::AuthMode::kNone, .tier = Tier::kExempt};

  router.add(
      "GET", "/healthz",
      [](http::Request&) {
        return http::Response::json(200, {{"status", "ok"}});
      },
      open);

  router.add(
      "GET", "/readyz",
      [&s](http::Request&) {
        Status db = s.accounts->ping();
        if (!db.ok()) {
          http::Response r = http::Response::error(503, "SERVICE_UNAVAILABLE", "Database unreachable");
          r.headers.set("Retry-After", "5");
          return r;
        }
        return http::Response::json(200, {{"status", "ready"}});
      },
      open);

  router.add("GET", "/metrics",
             [&s](http::Request&) {
               return http::Response::bytes(200, "text/plain; version=0.0.4; charset=utf-8",
                                            s.metrics->render());
             },
             {.auth = http::AuthMode::kAdmin, .tier = Tier::kExempt});
}

}  // namespace imago::api

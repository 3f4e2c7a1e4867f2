// Liveness, readiness and metrics: no API key, never rate limited.
#include <chrono>
#include <cmath>

#include "api/routes.h"
#include "http/metrics.h"
#include "store/account_store.h"

namespace imago::api {

void register_health_routes(http::Router& router, Services& s) {
  const http::RouteOptions open{.auth = http::AuthMode::kNone, .tier = Tier::kExempt};

  // Answered on the I/O thread: a liveness probe must not wait behind busy handler threads.
  router.add("GET", "/healthz",
             [](http::Request&) {
               return http::Response::json(200, {{"status", "ok"}});
             },
             {.auth = http::AuthMode::kNone, .tier = Tier::kExempt, .pool = http::HandlerPool::kInline});

  router.add(
      "GET", "/readyz",
      [&s](http::Request&) {
        // Which backend (never its URL: that may hold a password) and how long it took to answer.
        const bool pg = s.config && s.config->database_url.rfind("sqlite:", 0) != 0;
        const auto start = std::chrono::steady_clock::now();
        Status db = s.accounts->ping();
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (!db.ok()) {
          http::Response r = http::Response::error(
              503, "SERVICE_UNAVAILABLE",
              std::string("Database unreachable (") + (pg ? "postgres" : "sqlite") + ")");
          r.headers.set("Retry-After", "5");
          return r;
        }
        return http::Response::json(200, {{"status", "ready"},
                                          {"database",
                                           {{"backend", pg ? "postgres" : "sqlite"},
                                            {"ok", true},
                                            {"latency_ms", std::round(ms * 100) / 100}}}});
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

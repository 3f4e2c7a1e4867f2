// POST /v1/validate and GET /v1/me: who am I, and is this key good. Both run on the HTTP I/O
// thread (HandlerPool::kInline): authentication plus a small JSON body, nothing that waits.
#include "api/routes.h"

namespace imago::api {

void register_account_routes(http::Router& router, Services&) {
  // SPEC 4.1: costs no credits; a present but invalid key is 200 {"valid": false}.
  router.add(
      "POST", "/v1/validate",
      [](http::Request& req) {
        return http::Response::json(200, {{"valid", req.principal.has_value()}});
      },
      {.body_limit = 64 * 1024, .pool = http::HandlerPool::kInline, .invalid_key_reaches_handler = true});

  // SPEC 8.3 names /v1/me among the anonymous self-authenticating endpoints: per-IP cap too.
  router.add("GET", "/v1/me",
             [](http::Request& req) {
               const Principal& p = *req.principal;
               return http::Response::json(200, {{"success", true},
                                                 {"data",
                                                  {{"user_id", p.account_id},
                                                   {"name", p.account_name},
                                                   {"plan", plan_name(p.plan)},
                                                   {"key_id", p.key_id},
                                                   {"key_alias", p.key_alias}}}});
             },
             {.pool = http::HandlerPool::kInline, .anon_ip_limited = true});
}

}  // namespace imago::api

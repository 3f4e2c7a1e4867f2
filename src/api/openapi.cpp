// The published API description: GET /openapi.json (docs/openapi.yaml compiled in) and its human
// reference page GET /docs/api (web/api-reference.*, rendered in the browser from that document).
#include "api/openapi_document.h"
#include "api/routes.h"
#include "api/web_assets.h"

namespace imago::api {

namespace {

http::Response asset(std::string_view name) {
  const WebAsset* a = find_web_asset(name);
  if (!a) return http::Response::error(404, "NOT_FOUND", "Page not found");
  http::Response r = http::Response::bytes(200, std::string(a->content_type), std::string(a->body));
  r.headers.set("Cache-Control", "no-cache");
  // The page loads only its own script and the document from this server.
  r.headers.set("Content-Security-Policy",
                "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                "frame-ancestors 'none'; base-uri 'none'");
  return r;
}

}  // namespace

void register_openapi_routes(http::Router& router, Services&) {
  // Public and never rate limited, like the health checks: tools fetch it to build clients.
  const http::RouteOptions open{
      .auth = http::AuthMode::kNone, .tier = Tier::kExempt, .pool = http::HandlerPool::kInline};
  router.add(
      "GET", "/openapi.json",
      [](http::Request&) {
        http::Response r =
            http::Response::bytes(200, "application/json", std::string(openapi_document_json()));
        r.headers.set("Cache-Control", "no-cache");
        r.headers.set("Access-Control-Allow-Origin", "*");
        return r;
      },
      open);
  router.add(
      "GET", "/docs/api", [](http::Request&) { return asset("api-reference.html"); }, open);
  router.add(
      "GET", "/docs/api/reference.js", [](http::Request&) { return asset("api-reference.js"); }, open);
  router.add(
      "GET", "/docs/api/reference.css", [](http::Request&) { return asset("api-reference.css"); }, open);
}

}  // namespace imago::api

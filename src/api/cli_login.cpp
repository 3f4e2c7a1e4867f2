// The anonymous side of the CLI's sign-in (SPEC 5.5, docs/cli.md): RFC 8628 device authorization
// and token polling, and redeeming a browser login code with its PKCE verifier. Both end in a key
// aliased cli@<hostname>. The member's side (approving) is in dashboard_devices.cpp.
#include "api/routes.h"
#include "auth/device_login.h"
#include "util/json.h"

namespace imago::api {

namespace {

constexpr std::string_view kDeviceGrantType = "urn:ietf:params:oauth:grant-type:device_code";

// RFC 8628 error codes travel as the envelope's code (400, or 403 for access_denied), so clients
// branch on error.code exactly as an OAuth client branches on "error".
http::Response token_response(const TokenOutcome& t, int interval) {
  if (t.key) {
    http::Response r = http::Response::json(200, {{"success", true},
                                                  {"data",
                                                   {{"api_secret", t.key->secret},
                                                    {"key_id", t.key->key.id},
                                                    {"alias", t.key->key.alias},
                                                    {"account_id", t.key->key.account_id}}}});
    r.headers.set("Cache-Control", "no-store");
    return r;
  }
  if (t.error == "server_error") return http::Response::error(503, "server_error", t.description);
  http::Response r = http::Response::error(t.error == "access_denied" ? 403 : 400, t.error, t.description);
  if (t.error == "slow_down") r.headers.set("Retry-After", std::to_string(t.interval));
  if (t.error == "authorization_pending") r.headers.set("Retry-After", std::to_string(interval));
  r.headers.set("Cache-Control", "no-store");
  return r;
}

Result<std::string> required_string(const boost::json::object& o, std::string_view field) {
  auto v = get_string(o, field);
  if (!v.ok()) return v.status();
  if (!v->has_value() || (*v)->empty())
    return Status::Invalid("Field '" + std::string(field) + "' is required");
  return **v;
}

}  // namespace

void register_cli_login_routes(http::Router& router, Services& s) {
  const http::RouteOptions open{
      .auth = http::AuthMode::kNone, .body_limit = 16 * 1024, .anon_ip_limited = true};

  router.add(
      "POST", "/v1/cli/device/code",
      [&s](http::Request& req) {
        auto body = parse_json_object(req.body, true);
        if (!body.ok()) return http::Response::from_status(body.status());
        auto host = required_string(*body, "hostname");
        if (!host.ok()) return http::Response::from_status(host.status());
        auto d = s.device_login->start_device(*host);
        if (!d.ok()) return http::Response::from_status(d.status());
        const std::string uri = s.absolute_url("/device");
        http::Response r =
            http::Response::json(200, {{"device_code", d->device_code},
                                       {"user_code", d->user_code},
                                       {"verification_uri", uri},
                                       {"verification_uri_complete", uri + "?user_code=" + d->user_code},
                                       {"expires_in", d->expires_in},
                                       {"interval", d->interval}});
        r.headers.set("Cache-Control", "no-store");
        return r;
      },
      open);

  router.add(
      "POST", "/v1/cli/device/token",
      [&s](http::Request& req) {
        auto body = parse_json_object(req.body);
        if (!body.ok()) return http::Response::from_status(body.status());
        auto grant = required_string(*body, "grant_type");
        if (!grant.ok()) return http::Response::error(400, "invalid_request", grant.status().message());
        if (*grant != kDeviceGrantType) {
          return http::Response::error(400, "unsupported_grant_type",
                                       "grant_type must be " + std::string(kDeviceGrantType));
        }
        auto code = required_string(*body, "device_code");
        if (!code.ok()) return http::Response::error(400, "invalid_request", code.status().message());
        return token_response(s.device_login->poll_device(*code), 5);
      },
      open);

  router.add(
      "POST", "/v1/cli/token",
      [&s](http::Request& req) {
        auto body = parse_json_object(req.body);
        if (!body.ok()) return http::Response::from_status(body.status());
        auto code = required_string(*body, "code");
        if (!code.ok()) return http::Response::error(400, "invalid_request", code.status().message());
        auto verifier = required_string(*body, "code_verifier");
        if (!verifier.ok()) return http::Response::error(400, "invalid_request", verifier.status().message());
        return token_response(s.device_login->redeem_browser(*code, *verifier), 0);
      },
      open);
}

}  // namespace imago::api

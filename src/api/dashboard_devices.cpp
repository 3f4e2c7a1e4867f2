// The member's side of CLI sign-in and the key list the dashboard shows: approve or deny a device
// code typed at /device, approve a browser login (returns the one-time code for the CLI's loopback
// callback), and keys marked as device keys.
#include "api/dashboard_common.h"
#include "api/routes.h"
#include "api/views.h"
#include "auth/device_login.h"
#include "store/device_grant_store.h"
#include "util/json.h"

namespace imago::api {

void register_dashboard_device_routes(http::Router& router, Services& s) {
  const http::RouteOptions member{.auth = http::AuthMode::kSession, .body_limit = 16 * 1024};

  router.add(
      "GET", "/dashboard/api/keys",
      [&s](http::Request& req) {
        auto keys = s.accounts->list_keys(req.principal->account_id);
        if (!keys.ok()) return http::Response::from_status(keys.status());
        auto device = s.device_grants->device_key_ids(req.principal->account_id);
        if (!device.ok()) return http::Response::from_status(device.status());
        boost::json::array arr;
        for (const auto& k : *keys) {
          boost::json::object o = key_json(k);
          o["device"] = std::find(device->begin(), device->end(), k.id) != device->end();
          arr.push_back(std::move(o));
        }
        return http::Response::json(200, {{"success", true}, {"data", std::move(arr)}});
      },
      member);

  router.add(
      "POST", "/dashboard/api/device/approve",
      [&s](http::Request& req) {
        auto body = parse_json_object(req.body);
        if (!body.ok()) return http::Response::from_status(body.status());
        auto code = get_string(*body, "user_code");
        auto approve = get_bool(*body, "approve");
        if (!code.ok()) return http::Response::from_status(code.status());
        if (!approve.ok()) return http::Response::from_status(approve.status());
        if (!code->has_value())
          return http::Response::error(400, "VALIDATION_ERROR", "Field 'user_code' is required");
        const bool yes = approve->value_or(true);
        auto host = s.device_login->decide_user_code(**code, yes, req.principal->account_id,
                                                     req.principal->member_id);
        if (!host.ok()) return http::Response::from_status(host.status());
        return http::Response::json(
            200, {{"success", true}, {"approved", yes}, {"hostname", *host}, {"alias", "cli@" + *host}});
      },
      member);

  router.add(
      "POST", "/dashboard/api/cli-login/approve",
      [&s](http::Request& req) {
        auto body = parse_json_object(req.body);
        if (!body.ok()) return http::Response::from_status(body.status());
        auto challenge = get_string(*body, "challenge");
        auto host = get_string(*body, "hostname");
        auto port = get_integer(*body, "port");
        auto state = get_string(*body, "state");
        if (!challenge.ok()) return http::Response::from_status(challenge.status());
        if (!host.ok()) return http::Response::from_status(host.status());
        if (!port.ok()) return http::Response::from_status(port.status());
        if (!state.ok()) return http::Response::from_status(state.status());
        if (!challenge->has_value() || !host->has_value() || !port->has_value() || !state->has_value()) {
          return http::Response::error(400, "VALIDATION_ERROR",
                                       "Fields 'challenge', 'hostname', 'port' and 'state' are required");
        }
        if (**port < 1024 || **port > 65535) {
          return http::Response::error(400, "VALIDATION_ERROR", "Field 'port' must be 1024 to 65535");
        }
        const std::string& st = **state;
        if (st.empty() || st.size() > 128 ||
            st.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
                std::string::npos) {
          return http::Response::error(400, "VALIDATION_ERROR",
                                       "Field 'state' must be 1 to 128 URL-safe characters");
        }
        auto code = s.device_login->start_browser(**challenge, **host, req.principal->account_id,
                                                  req.principal->member_id);
        if (!code.ok()) return http::Response::from_status(code.status());
        // Only ever the loopback address: the code goes to the CLI on this person's machine.
        const std::string redirect =
            "http://127.0.0.1:" + std::to_string(**port) + "/callback?code=" + *code + "&state=" + st;
        return http::Response::json(
            200,
            {{"success", true}, {"code", *code}, {"redirect_url", redirect}, {"alias", "cli@" + **host}});
      },
      member);
}

}  // namespace imago::api

// The operator's side of members: create a member (email + password) on an account, list them.
#include "api/dashboard_common.h"
#include "api/routes.h"
#include "auth/members.h"
#include "util/json.h"

namespace imago::api {

void register_member_admin_routes(http::Router& router, Services& s) {
  const http::RouteOptions admin{
      .auth = http::AuthMode::kAdmin, .tier = Tier::kExempt, .body_limit = 16 * 1024};

  router.add(
      "POST", "/admin/v1/accounts/{id}/members",
      [&s](http::Request& req) {
        auto body = parse_json_object(req.body);
        if (!body.ok()) return http::Response::from_status(body.status());
        auto email = get_string(*body, "email");
        auto password = get_string(*body, "password");
        if (!email.ok()) return http::Response::from_status(email.status());
        if (!password.ok()) return http::Response::from_status(password.status());
        if (!email->has_value() || !password->has_value()) {
          return http::Response::error(400, "VALIDATION_ERROR", "Fields 'email' and 'password' are required");
        }
        auto m = s.member_auth->create_member(req.param("id"), **email, **password);
        if (!m.ok()) return http::Response::from_status(m.status());
        return http::Response::json(201, {{"success", true}, {"data", member_json(*m)}});
      },
      admin);

  router.add(
      "GET", "/admin/v1/accounts/{id}/members",
      [&s](http::Request& req) {
        auto a = s.accounts->get_account(req.param("id"));
        if (!a.ok()) return http::Response::from_status(a.status());
        auto list = s.members->list_members(a->id);
        if (!list.ok()) return http::Response::from_status(list.status());
        boost::json::array arr;
        for (const auto& m : *list) arr.push_back(member_json(m));
        return http::Response::json(200, {{"success", true}, {"data", std::move(arr)}});
      },
      admin);
}

}  // namespace imago::api

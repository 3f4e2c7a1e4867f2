// The account holder's API keys: list, create (secret shown once), revoke, rotate.
#include "api/requests.h"
#include "api/routes.h"
#include "api/views.h"
#include "auth/provisioning.h"
#include "util/json.h"

namespace imago::api {

Result<std::string> parse_alias(const http::Request& req) {
  auto body = parse_json_object_with(req.body, {"alias"}, true);
  if (!body.ok()) return body.status();
  auto alias = get_string(*body, "alias");
  if (!alias.ok()) return alias.status();
  if (!alias->has_value()) return Status::Invalid("Field 'alias' is required");
  const std::string& a = **alias;
  if (a.empty() || a.size() > 100) return Status::Invalid("Field 'alias' must be 1 to 100 characters");
  for (unsigned char c : a) {
    if (c < 0x20 || c == 0x7f) return Status::Invalid("Field 'alias' must not contain control characters");
  }
  return a;
}

namespace {

http::Response key_with_secret(int status, const ApiKey& k, const std::string& secret,
                               std::optional<std::string> replaces = std::nullopt) {
  boost::json::object data = key_json(k);
  data["api_secret"] = secret;
  if (replaces) data["replaces"] = *replaces;
  return http::Response::json(status, {{"success", true}, {"data", std::move(data)}});
}

}  // namespace

void register_key_routes(http::Router& router, Services& s) {
  router.add("GET", "/v1/keys", [&s](http::Request& req) {
    auto keys = s.accounts->list_keys(req.principal->account_id);
    if (!keys.ok()) return http::Response::from_status(keys.status());
    boost::json::array arr;
    for (const auto& k : *keys) arr.push_back(key_json(k));
    return http::Response::json(200, {{"success", true}, {"data", std::move(arr)}});
  });

  router.add("POST", "/v1/keys", [&s](http::Request& req) {
    auto alias = parse_alias(req);
    if (!alias.ok()) return http::Response::from_status(alias.status());
    auto k = issue_key(*s.accounts, req.principal->account_id, *alias);
    if (!k.ok()) return http::Response::from_status(k.status());
    return key_with_secret(201, k->key, k->secret);
  });

  router.add("DELETE", "/v1/keys/{id}", [&s](http::Request& req) {
    const std::string& id = req.param("id");
    Status st = s.accounts->revoke_key(req.principal->account_id, id);
    if (!st.ok()) return http::Response::from_status(st);
    return http::Response::json(200, {{"success", true}, {"id", id}, {"revoked", true}});
  });

  router.add("POST", "/v1/keys/{id}/rotate", [&s](http::Request& req) {
    const std::string& id = req.param("id");
    auto k = rotate_key(*s.accounts, req.principal->account_id, id);
    if (!k.ok()) return http::Response::from_status(k.status());
    return key_with_secret(201, k->key, k->secret, id);
  });
}

}  // namespace imago::api

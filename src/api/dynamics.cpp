// Dynamics (SPEC 2.2, 3.2, 3.3, 4.10-4.12): generate gesture clips, read them, update the
// configuration (keyword mapping, enablement) and regenerate background movements.
#include <boost/json.hpp>

#include "agents/agent_service.h"
#include "api/routes.h"
#include "limits/storage_quota.h"
#include "store/file_store.h"
#include "util/json.h"

namespace imago::api {

namespace {

namespace json = boost::json;

std::string url_of(Services& s, const std::string& account, const std::string& file_id) {
  auto f = s.files->get(account, file_id);
  if (!f.ok()) return "";
  return s.absolute_url(file_url_path(f->id, f->ext));
}

http::Response generate(Services& s, http::Request& req) {
  auto body = parse_json_object_with(req.body, {"agent_id", "duration", "model", "image_url"});
  if (!body.ok()) return http::Response::from_status(body.status());
  agents::DynamicsRequest r;
  for (auto [field, slot] :
       {std::pair{"agent_id", &r.agent_id}, {"model", &r.model}, {"image_url", &r.image_url}}) {
    auto v = get_string(*body, field);
    if (!v.ok()) return http::Response::from_status(v.status());
    *slot = std::move(v).value();
  }
  auto duration = get_number(*body, "duration");
  if (!duration.ok()) return http::Response::from_status(duration.status());
  r.duration = *duration;
  r.storage_quota_bytes =
      effective_storage_quota(*s.storage_quotas, req.principal->plan, req.principal->custom_limits);
  auto code = s.agent_service->start_dynamics(req.principal->account_id, r);
  if (!code.ok()) return http::Response::from_status(code.status());
  return http::Response::json(200, {{"success", true},
                                    {"message", "Dynamics generation started"},
                                    {"agent_id", *code},
                                    {"status", "processing"}});
}

http::Response get(Services& s, http::Request& req) {
  const std::string& account = req.principal->account_id;
  auto a = s.agent_service->get(account, req.param("agent_id"));
  if (!a.ok()) return http::Response::from_status(a.status());
  json::value url = nullptr;
  json::object gestures;
  std::string status = "ready";
  if (a->dynamics_status && *a->dynamics_status == "generating") {
    status = "generating";
  } else if (a->dynamics_file) {
    // Ready, or a later regeneration failed and the previous result still stands.
    url = url_of(s, account, *a->dynamics_file);
    boost::system::error_code ec;
    auto g = json::parse(a->dynamics_gestures, ec);
    if (!ec && g.is_object()) {
      for (const auto& kv : g.as_object()) {
        if (kv.value().is_string())
          gestures[kv.key()] = url_of(s, account, std::string(kv.value().as_string()));
      }
    }
  }
  return http::Response::json(200, {{"success", true},
                                    {"data", json::object{{"url", url},
                                                          {"status", status},
                                                          {"agent_id", a->code},
                                                          {"gestures", std::move(gestures)}}}});
}

http::Response update(Services& s, http::Request& req) {
  auto body = parse_json_object_with(req.body, {"dynamics", "toggle_enabled"});
  if (!body.ok()) return http::Response::from_status(body.status());
  auto patch = get_object(*body, "dynamics");
  if (!patch.ok()) return http::Response::from_status(patch.status());
  auto toggle = get_bool(*body, "toggle_enabled");
  if (!toggle.ok()) return http::Response::from_status(toggle.status());
  auto u =
      s.agent_service->update_dynamics(req.principal->account_id, req.param("agent_id"), {*patch, *toggle});
  if (!u.ok()) return http::Response::from_status(u.status());
  json::object out{{"success", true}, {"agent_id", u->agent_id}};
  if (u->regeneration_started) {
    out["message"] = "Dynamics updated successfully and movements regeneration started";
    out["regeneration_status"] = "started";
  } else {
    out["message"] = "Dynamics updated successfully; movements regeneration could not start";
    out["regeneration_status"] = "failed";
    out["regeneration_error"] = u->regeneration_error;
  }
  return http::Response::json(200, out);
}

}  // namespace

void register_dynamics_routes(http::Router& router, Services& s) {
  http::RouteOptions gen;
  gen.tier = Tier::kGenerate;
  gen.body_limit = 16u << 20;  // an inline image_url (10 MB as base64)
  router.add(
      "POST", "/v1/dynamics/generate", [&s](http::Request& req) { return generate(s, req); }, gen);
  router.add("GET", "/v1/dynamics/{agent_id}", [&s](http::Request& req) { return get(s, req); });
  router.add("PUT", "/v1/dynamics/{agent_id}", [&s](http::Request& req) { return update(s, req); });
}

}  // namespace imago::api

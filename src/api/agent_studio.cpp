// What the agent studio needs besides the agent resource (docs/api/agents.md): the free face
// check of a picture before a generation is paid for, the price list the dashboard shows before a
// button is pressed, and the agent's own knowledge. Parse, call the agent service, render.
#include <boost/json.hpp>

#include "agents/agent_service.h"
#include "api/routes.h"
#include "billing/operations.h"
#include "billing/prices.h"
#include "fetch/multipart.h"
#include "limits/storage_quota.h"
#include "util/json.h"
#include "util/strings.h"

namespace imago::api {

namespace {

namespace json = boost::json;

// A 10 MB image as base64 inside JSON, with room for the envelope.
constexpr size_t kFaceCheckBodyLimit = 15u << 20;
// A 1 MB document as multipart or JSON, with room for the envelope.
constexpr size_t kKnowledgeBodyLimit = 2u << 20;

json::object knowledge_json(const agents::KnowledgeItem& k) {
  return {{"id", k.id},
          {"object", "knowledge"},
          {"title", k.title},
          {"bytes", k.bytes},
          {"created_at", format_rfc3339(k.created_at)}};
}

http::Response face_check(Services& s, http::Request& req) {
  auto body = parse_json_object_with(req.body, {"image"});
  if (!body.ok()) return http::Response::from_status(body.status());
  auto image = get_string(*body, "image");
  if (!image.ok()) return http::Response::from_status(image.status());
  if (!*image) return http::Response::error(400, "VALIDATION_ERROR", "Field 'image' is required");
  auto c = s.agent_service->check_face_of(req.principal->account_id, **image);
  if (!c.ok()) return http::Response::from_status(c.status());
  json::object d{{"face_found", c->found}};
  d["reason"] = c->found ? json::value(nullptr) : json::value(c->reason);
  if (c->found) {
    d["image"] = {{"width", c->image_width}, {"height", c->image_height}};
    d["face"] = {{"x", c->x}, {"y", c->y}, {"width", c->width}, {"height", c->height}};
  } else {
    d["image"] = nullptr;
    d["face"] = nullptr;
  }
  return http::Response::json(200, {{"success", true}, {"data", std::move(d)}});
}

http::Response pricing() {
  json::object live;
  for (const auto& p : billing::kPerMinutePrices) live[p.feature] = p.credits_per_minute;
  json::object d{
      {"unit", "credits"},
      {"credits_per_dollar", billing::kCreditsPerDollar},
      {"agent_generation",
       {{"unit", "credits"},
        {"by_model",
         {{"essence", billing::kAgentGenerationCredits}, {"expression", billing::kAgentGenerationCredits}}}}},
      {"dynamics_generation", {{"unit", "credits"}, {"flat", billing::kDynamicsGenerationCredits}}},
      {"talking_video",
       {{"unit", "credits_per_minute"},
        {"billing", "ceil(minutes) * rate, minimum 1 minute"},
        {"rates",
         {{"essence", billing::credits_per_minute(billing::MinuteRate::kEssenceCloud)},
          {"expression", billing::credits_per_minute(billing::MinuteRate::kExpressionCloud)}}}}},
      {"live_session",
       {{"unit", "credits_per_minute"}, {"billing", "every started minute"}, {"rates", live}}},
      {"free", json::array{"face check", "voice preview", "agent knowledge", "status and listing calls"}},
  };
  return http::Response::json(200, {{"success", true}, {"data", std::move(d)}});
}

http::Response add_knowledge(Services& s, http::Request& req) {
  agents::NewKnowledge k;
  if (req.content_type() == "multipart/form-data") {
    auto ct = req.headers.get("content-type");
    auto boundary = fetch::multipart_boundary(ct ? *ct : "");
    if (!boundary)
      return http::Response::error(400, "VALIDATION_ERROR", "multipart/form-data without a boundary");
    auto parts = fetch::parse_multipart(req.body, *boundary);
    if (!parts.ok()) return http::Response::from_status(parts.status());
    for (const auto& p : *parts) {
      if (p.name == "file") {
        k.document = std::string(p.data);
        k.document_name = p.filename.value_or("document.txt");
      } else if (p.name == "title") {
        k.title = std::string(p.data);
      } else if (p.name == "text") {
        k.text = std::string(p.data);
      } else {
        return http::Response::error(400, "VALIDATION_ERROR",
                                     "Unknown field '" + p.name + "' (known fields: file, title, text)");
      }
    }
  } else {
    // Any other body is read as JSON, as on every JSON endpoint (curl -d sends a form type).
    auto body = parse_json_object_with(req.body, {"title", "text"});
    if (!body.ok()) return http::Response::from_status(body.status());
    auto title = get_string(*body, "title");
    auto text = get_string(*body, "text");
    if (!title.ok()) return http::Response::from_status(title.status());
    if (!text.ok()) return http::Response::from_status(text.status());
    k.title = *title;
    k.text = *text;
  }
  k.storage_quota_bytes =
      effective_storage_quota(*s.storage_quotas, req.principal->plan, req.principal->custom_limits);
  auto item = s.agent_service->add_knowledge(req.principal->account_id, req.param("agent_code"), k);
  if (!item.ok()) return http::Response::from_status(item.status());
  return http::Response::json(201, {{"success", true}, {"data", knowledge_json(*item)}});
}

}  // namespace

void register_agent_studio_routes(http::Router& router, Services& s) {
  http::RouteOptions check;
  check.body_limit = kFaceCheckBodyLimit;
  check.pool = http::HandlerPool::kCpu;  // decodes the picture and runs the face detector
  router.add(
      "POST", "/v1/studio/face-check", [&s](http::Request& req) { return face_check(s, req); }, check);

  router.add("GET", "/v1/pricing", [](http::Request&) { return pricing(); });

  router.add("GET", "/v1/agent/{agent_code}/knowledge", [&s](http::Request& req) {
    auto items = s.agent_service->list_knowledge(req.principal->account_id, req.param("agent_code"));
    if (!items.ok()) return http::Response::from_status(items.status());
    json::array data;
    int64_t bytes = 0;
    for (const auto& k : *items) {
      data.push_back(knowledge_json(k));
      bytes += k.bytes;
    }
    return http::Response::json(200, {{"success", true},
                                      {"data", std::move(data)},
                                      {"limits",
                                       {{"items", agents::kMaxKnowledgeItems},
                                        {"bytes", agents::kMaxKnowledgeBytes},
                                        {"bytes_used", bytes}}}});
  });

  http::RouteOptions add;
  add.body_limit = kKnowledgeBodyLimit;
  router.add(
      "POST", "/v1/agent/{agent_code}/knowledge", [&s](http::Request& req) { return add_knowledge(s, req); },
      add);

  router.add("DELETE", "/v1/agent/{agent_code}/knowledge/{id}", [&s](http::Request& req) {
    Status st = s.agent_service->remove_knowledge(req.principal->account_id, req.param("agent_code"),
                                                  req.param("id"));
    if (!st.ok()) return http::Response::from_status(st);
    return http::Response::json(200, {{"success", true}, {"id", req.param("id")}, {"deleted", true}});
  });
}

}  // namespace imago::api

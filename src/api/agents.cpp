// Agents (SPEC 4.2-4.7): generate, status, get, list, update prompt, delete. Parse, call the agent
// service (src/agents), render.
#include <boost/json.hpp>

#include "agents/agent_service.h"
#include "agents/agent_voice.h"
#include "api/pagination.h"
#include "api/routes.h"
#include "api/tts_common.h"
#include "limits/storage_quota.h"
#include "store/file_store.h"
#include "util/json.h"
#include "util/strings.h"

namespace imago::api {

namespace {

namespace json = boost::json;

// Inline base64 of every medium at its limit (10 + 100 + 25 MB) plus JSON overhead.
constexpr size_t kGenerateBodyLimit = 190u << 20;

std::string file_url(Services& s, const std::string& account, const std::optional<std::string>& id) {
  if (!id) return "";
  auto f = s.files->get(account, *id);
  if (!f.ok()) return "";
  return s.absolute_url(file_url_path(f->id, f->ext));
}

json::object agent_json(Services& s, const AgentRecord& a, bool with_status) {
  std::string image = a.image_file ? file_url(s, a.account_id, a.image_file) : a.image_source.value_or("");
  std::string video = a.video_file ? file_url(s, a.account_id, a.video_file) : a.video_source.value_or("");
  json::object o{{"agent_id", a.code}, {"status", a.status}};
  if (with_status) {
    o["progress"] = a.progress;
    o["progress_msg"] = a.progress_msg;
    o["current_step"] = a.current_step;
    o["error_message"] = a.error_message ? json::value(*a.error_message) : json::value(nullptr);
  }
  o["system_prompt"] = a.system_prompt;
  if (!with_status) {
    // The detail (not the status poll, whose fields SPEC 4.3 fixes) says which voice the agent
    // speaks with in live sessions and videos: null until decided by the generation.
    agents::AgentVoice voice = agents::parse_agent_voice(a.voice);
    o["voice"] = voice.id.empty() ? json::value(nullptr) : json::value(agents::agent_voice_json(voice));
  }
  o["image_url"] = image;
  o["video_url"] = video;
  o["model_url"] = file_url(s, a.account_id, a.model_file);
  o["name"] = a.name;
  return o;
}

http::Response generate(Services& s, http::Request& req) {
  auto body = parse_json_object_with(
      req.body, {"prompt", "aspect_ratio", "video_aspect_ratio", "model", "duration", "name", "agent_id",
                 "image", "video", "audio", "voice", "voice_code"});
  if (!body.ok()) return http::Response::from_status(body.status());
  const json::object& b = *body;
  agents::GenerateRequest r;
  for (auto [field, slot] : {std::pair{"prompt", &r.prompt},
                             {"aspect_ratio", &r.aspect_ratio},
                             {"video_aspect_ratio", &r.video_aspect_ratio},
                             {"model", &r.model},
                             {"name", &r.name},
                             {"agent_id", &r.agent_id},
                             {"image", &r.image},
                             {"video", &r.video},
                             {"audio", &r.audio},
                             {"voice", &r.voice},
                             {"voice_code", &r.voice_code}}) {
    auto v = get_string(b, field);
    if (!v.ok()) return http::Response::from_status(v.status());
    *slot = std::move(v).value();
  }
  auto duration = get_number(b, "duration");
  if (!duration.ok()) return http::Response::from_status(duration.status());
  r.duration = *duration;
  if (auto key = req.headers.get("idempotency-key")) r.idempotency_key = std::string(*key);
  r.storage_quota_bytes =
      effective_storage_quota(*s.storage_quotas, req.principal->plan, req.principal->custom_limits);

  auto g = s.agent_service->generate(req.principal->account_id, r);
  if (!g.ok()) return http::Response::from_status(g.status());
  return http::Response::json(200, {{"success", true},
                                    {"message", "Agent generation started"},
                                    {"agent_id", g->agent_id},
                                    {"status", "processing"}});
}

}  // namespace

void register_agent_routes(http::Router& router, Services& s) {
  http::RouteOptions gen;
  gen.tier = Tier::kGenerate;
  gen.body_limit = kGenerateBodyLimit;
  router.add(
      "POST", "/v1/agent/generate", [&s](http::Request& req) { return generate(s, req); }, gen);

  router.add("GET", "/v1/agent/status/{agent_id}", [&s](http::Request& req) {
    auto a = s.agent_service->get(req.principal->account_id, req.param("agent_id"));
    if (!a.ok()) return http::Response::from_status(a.status());
    return http::Response::json(200, {{"success", true}, {"data", agent_json(s, *a, true)}});
  });

  router.add("GET", "/v1/agent/{code}", [&s](http::Request& req) {
    auto a = s.agent_service->get(req.principal->account_id, req.param("code"));
    if (!a.ok()) return http::Response::from_status(a.status());
    return http::Response::json(200, {{"success", true}, {"data", agent_json(s, *a, false)}});
  });

  router.add("POST", "/v1/agent/{code}", [&s](http::Request& req) {
    const std::string& code = req.param("code");
    auto body = parse_json_object_with(req.body, {"system_prompt"});
    if (!body.ok()) return http::Response::from_status(body.status());
    auto prompt = get_string(*body, "system_prompt");
    if (!prompt.ok()) return http::Response::from_status(prompt.status());
    Status st = s.agent_service->update_prompt(req.principal->account_id, code, *prompt);
    if (!st.ok()) return http::Response::from_status(st);
    return http::Response::json(200, {{"agent_code", code}, {"updated", true}});
  });

  router.add("DELETE", "/v1/agent/{code}", [&s](http::Request& req) {
    const std::string& code = req.param("code");
    Status st = s.agent_service->remove(req.principal->account_id, code);
    if (!st.ok()) return http::Response::from_status(st);
    return http::Response::json(200, {{"success", true}, {"agent_code", code}, {"deleted", true}});
  });

  router.add("GET", "/v1/agents", [&s](http::Request& req) {
    auto page = parse_page_params(req);
    if (!page.ok()) return http::Response::from_status(page.status());
    std::optional<std::string> status;
    if (auto v = req.query_param("status"); v && !v->empty()) status = std::string(*v);
    auto agents = s.agent_service->list(req.principal->account_id, status, page->limit, page->offset);
    if (!agents.ok()) return http::Response::from_status(agents.status());
    json::array items;
    for (const auto& a : agents->agents) {
      items.push_back(json::object{{"code", a.code},
                                   {"agent_id", a.code},
                                   {"name", a.name},
                                   {"status", a.status},
                                   {"progress", a.progress},
                                   {"model", a.model},
                                   {"created_at", format_rfc3339(a.created_at)}});
    }
    return http::Response::json(200, {{"success", true},
                                      {"data", std::move(items)},
                                      {"pagination", pagination_json(*page, agents->total)}});
  });
}

}  // namespace imago::api

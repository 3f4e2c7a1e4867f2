// Talking videos (docs/api/video.md): POST /v1/video/generate queues a render of an agent speaking
// a text or an audio file, GET /v1/video/{job_id} reports it. The rules live in
// src/agents/video_service; this file parses and renders.
#include <boost/json.hpp>

#include "agents/video_service.h"
#include "api/pagination.h"
#include "api/routes.h"
#include "limits/storage_quota.h"
#include "util/json.h"
#include "util/strings.h"

namespace imago::api {

namespace {

namespace json = boost::json;

json::object view(const agents::VideoJob& v) {
  json::object o{{"success", true},    {"job_id", v.job_id},       {"agent_code", v.agent_code},
                 {"status", v.status}, {"duration", v.duration_s}, {"credits", v.credits}};
  o["created_at"] = format_rfc3339(v.created_at);
  if (v.video_url) o["video_url"] = *v.video_url;
  if (v.error) o["error_message"] = *v.error;
  return o;
}

http::Response generate(Services& s, http::Request& req) {
  auto body = parse_json_object_with(req.body, {"agent_code", "input", "wait"});
  if (!body.ok()) return http::Response::from_status(body.status());
  agents::VideoRequest r;
  auto code = get_string(*body, "agent_code");
  if (!code.ok()) return http::Response::from_status(code.status());
  r.agent_code = *code;
  auto input = get_object(*body, "input");
  if (!input.ok()) return http::Response::from_status(input.status());
  if (!*input) return http::Response::from_status(Status::Invalid("Field 'input' is required (an object)"));
  if (Status st = reject_unknown_fields(**input, {"type", "text", "voice", "audio_url"}); !st.ok())
    return http::Response::from_status(Status::Invalid("input: " + st.message()));
  for (auto [field, slot] : {std::pair{"type", &r.input_type},
                             {"text", &r.text},
                             {"voice", &r.voice},
                             {"audio_url", &r.audio_url}}) {
    auto v = get_string(**input, field);
    if (!v.ok()) return http::Response::from_status(Status::Invalid("input: " + v.status().message()));
    *slot = std::move(v).value();
  }
  auto wait = get_bool(*body, "wait");
  if (!wait.ok()) return http::Response::from_status(wait.status());
  if (auto key = req.headers.get("idempotency-key")) r.idempotency_key = std::string(*key);
  r.storage_quota_bytes =
      effective_storage_quota(*s.storage_quotas, req.principal->plan, req.principal->custom_limits);

  const std::string& account = req.principal->account_id;
  auto v = s.video_service->start(account, r);
  if (!v.ok()) return http::Response::from_status(v.status());
  if (wait->value_or(false) && v->status == "processing") {
    auto done = s.video_service->wait(account, v->job_id, agents::kMaxVideoWaitMs);
    if (done.ok()) {
      done->replayed = v->replayed;
      v = std::move(done);
    }
  }
  return http::Response::json(200, view(*v));
}

http::Response get(Services& s, http::Request& req) {
  auto v = s.video_service->get(req.principal->account_id, req.param("job_id"));
  if (!v.ok()) return http::Response::from_status(v.status());
  return http::Response::json(200, view(*v));
}

// GET /v1/video?agent_code=&limit=&offset=: the account's videos, newest first.
http::Response list(Services& s, http::Request& req) {
  auto page = parse_page_params(req);
  if (!page.ok()) return http::Response::from_status(page.status());
  auto agent_code = parse_agent_code_filter(req);
  if (!agent_code.ok()) return http::Response::from_status(agent_code.status());
  auto videos = s.video_service->list(req.principal->account_id, *agent_code, page->limit, page->offset);
  if (!videos.ok()) return http::Response::from_status(videos.status());
  json::array data;
  for (const auto& v : videos->videos) {
    json::object o = view(v);
    o.erase("success");
    data.push_back(std::move(o));
  }
  return http::Response::json(
      200, {{"data", std::move(data)}, {"pagination", pagination_json(*page, videos->total)}});
}

}  // namespace

void register_video_routes(http::Router& router, Services& s) {
  http::RouteOptions gen;
  gen.tier = Tier::kGenerate;
  // Text input is at most 5000 characters, but `input.audio_url` may carry the audio inline:
  // 25 MB of audio as base64 (docs/api/video.md). Bodies are only read once authenticated.
  gen.body_limit = 36u << 20;
  router.add(
      "POST", "/v1/video/generate", [&s](http::Request& req) { return generate(s, req); }, gen);
  router.add("GET", "/v1/video", [&s](http::Request& req) { return list(s, req); });
  router.add("GET", "/v1/video/{job_id}", [&s](http::Request& req) { return get(s, req); });
}

}  // namespace imago::api

// /v1/sessions: the account's cloud live sessions after the fact (docs/sessions.md): the list,
// one session, its transcript with times, and its recording (download, delete).
#include <boost/json.hpp>

#include "api/pagination.h"
#include "api/routes.h"
#include "api/views.h"
#include "blobs/blob_store.h"
#include "sessions/session_service.h"
#include "util/strings.h"

namespace imago::api {

namespace json = boost::json;

namespace {

json::value seconds_json(int64_t us) {
  return static_cast<double>(us / 1000) / 1000.0;  // millisecond precision
}

json::object session_json(Services& s, const SessionRecord& r) {
  const int64_t end_us = r.ended_us.value_or(s.clock->now_us());
  json::value recording = nullptr;
  if (r.recording) {
    const bool ready = r.recording->status == "ready";
    recording = json::object{
        {"status", r.recording->status},
        {"bytes", r.recording->bytes},
        {"duration_seconds", seconds_json(r.recording->duration_ms * 1000)},
        {"video_codec",
         r.recording->video_codec.empty() ? json::value(nullptr) : json::value(r.recording->video_codec)},
        {"audio_codec",
         r.recording->audio_codec.empty() ? json::value(nullptr) : json::value(r.recording->audio_codec)},
        {"url", ready ? json::value(s.sessions->recording_url(r.session_id)) : json::value(nullptr)}};
  }
  return json::object{
      {"session_id", r.session_id},
      {"agent_code", r.agent_code},
      {"room_id", r.room_id},
      {"status", r.status},
      {"billing_type", r.billing_type},
      {"started_at", format_rfc3339(r.started_us / 1'000'000)},
      {"ended_at", r.ended_us ? json::value(format_rfc3339(*r.ended_us / 1'000'000)) : json::value(nullptr)},
      {"duration_seconds", seconds_json(std::max<int64_t>(0, end_us - r.started_us))},
      {"minutes_charged", r.minutes_charged},
      {"end_reason", r.end_reason ? json::value(*r.end_reason) : json::value(nullptr)},
      {"viewers_peak", r.viewers_peak},
      {"recording", std::move(recording)},
      {"transcript_url", s.sessions->transcript_url(r.session_id)},
  };
}

}  // namespace

void register_session_routes(http::Router& router, Services& s) {
  router.add("GET", "/v1/sessions", [&s](http::Request& req) {
    auto page = parse_page_params(req);
    if (!page.ok()) return http::Response::from_status(page.status());
    auto agent_code = parse_agent_code_filter(req);  // one agent's sessions (docs/sessions.md)
    if (!agent_code.ok()) return http::Response::from_status(agent_code.status());
    auto sessions = s.sessions->list(req.principal->account_id, *agent_code, page->limit, page->offset);
    if (!sessions.ok()) return http::Response::from_status(sessions.status());
    json::array items;
    for (const auto& r : sessions->sessions) items.push_back(session_json(s, r));
    return http::Response::json(
        200, {{"data", std::move(items)}, {"pagination", pagination_json(*page, sessions->total)}});
  });

  router.add("GET", "/v1/sessions/{session_id}", [&s](http::Request& req) {
    auto r = s.sessions->get(req.principal->account_id, req.param("session_id"));
    if (!r.ok()) return http::Response::from_status(r.status());
    return http::Response::json(200, session_json(s, *r));
  });

  router.add("GET", "/v1/sessions/{session_id}/transcript", [&s](http::Request& req) {
    auto lines = s.sessions->transcript(req.principal->account_id, req.param("session_id"));
    if (!lines.ok()) return http::Response::from_status(lines.status());
    json::array data;
    for (const auto& l : *lines) {
      data.push_back(json::object{{"role", l.role},
                                  {"source", l.source},
                                  {"text", l.text},
                                  {"start_ms", l.start_ms},
                                  {"end_ms", l.end_ms}});
    }
    return http::Response::json(200, {{"data", std::move(data)}});
  });

  router.add("GET", "/v1/sessions/{session_id}/recording", [&s](http::Request& req) {
    auto reader = s.sessions->open_recording(req.principal->account_id, req.param("session_id"));
    if (!reader.ok()) return http::Response::from_status(reader.status());
    http::Response resp = download_response(std::move(reader).value(), "video/mp4");
    resp.headers.set("Content-Disposition", "attachment; filename=\"" + req.param("session_id") + ".mp4\"");
    return resp;
  });

  router.add("DELETE", "/v1/sessions/{session_id}/recording", [&s](http::Request& req) {
    const std::string& id = req.param("session_id");
    if (Status st = s.sessions->delete_recording(req.principal->account_id, id); !st.ok())
      return http::Response::from_status(st);
    return http::Response::json(200, {{"session_id", id}, {"recording_deleted", true}});
  });
}

}  // namespace imago::api

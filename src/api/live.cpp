// Live sessions at the API edge (docs/live-protocol.md): speak / add-context / trigger-dynamics
// (SPEC 4.8, 4.9, 6), the account's rooms, the WebSocket join at /v1/runtime/rooms/{room_id}, and
// the viewer page at /embed/{agent_code}.

#include "agents/agent_service.h"
#include "api/live_routes.h"
#include "api/live_tokens.h"
#include "api/routes.h"
#include "api/spend_cap_views.h"
#include "api/views.h"
#include "api/web_assets.h"
#include "live/minute_billing.h"
#include "live/rooms.h"
#include "store/agent_store.h"
#include "util/json.h"

namespace imago::api {

namespace {

constexpr int kLiveRetryAfterS = 5;

bool safe_room_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':'))
      return false;
  }
  return true;
}

Status room_id_status(const std::string& id) {
  if (safe_room_id(id)) return Status::Ok();
  return Status::Invalid("Field 'room_id' must be 1-128 characters of A-Z a-z 0-9 - _ . :");
}

json::object room_json(const live::RoomInfo& i) {
  return {{"room_id", i.room_id},
          {"session_id", i.session_id},
          {"agent_code", i.agent_code},
          {"state", live::phase_name(i.phase)},
          {"started_at", time_json(i.started_at_s)},
          {"viewers", i.viewers},
          {"billed_minutes", i.billed_minutes},
          {"billing_type", i.billing_type},
          {"context_items", static_cast<int64_t>(i.context_items)}};
}

http::Response no_rooms(const std::string& code) {
  return http::Response::error(404, "NOT_FOUND", "No active rooms found for agent " + code);
}

// The agent (404 "Agent not found for code: X") and its active rooms, optionally one room.
struct Targets {
  std::string agent_code;
  std::vector<std::shared_ptr<live::Room>> rooms;
};
Result<Targets> targets(Services& s, const http::Request& req, const std::optional<std::string>& room_id) {
  const std::string& code = req.param("agent_code");
  auto a = s.agent_service->get(req.principal->account_id, code);
  if (!a.ok()) return a.status();
  Targets t{a->code, s.rooms->list(req.principal->account_id, a->code, room_id)};
  if (t.rooms.empty()) return Status::NotFound("No active rooms found for agent " + code);
  return t;
}

Result<std::optional<std::string>> optional_room_id(const json::object& body) {
  auto r = get_string(body, "room_id");
  if (!r.ok()) return r.status();
  if (r->has_value()) {
    if (Status st = room_id_status(**r); !st.ok()) return st;
  }
  return *r;
}

Result<std::string> required_text(const json::object& body, const char* field) {
  auto v = get_string(body, field);
  if (!v.ok()) return v.status();
  if (!v->has_value() || (*v)->find_first_not_of(" \t\r\n") == std::string::npos) {
    return Status::Invalid("Field '" + std::string(field) + "' is required and must not be empty");
  }
  return **v;
}

// One WebSocket viewer of a room.
class RoomSocket : public http::WebSocketHandler, public std::enable_shared_from_this<RoomSocket> {
 public:
  RoomSocket(Services& s, std::shared_ptr<live::Room> room, live::ViewerRole role, TokenClaims claims)
      : s_(s), room_(std::move(room)), role_(role), claims_(std::move(claims)) {}

  void on_open(std::shared_ptr<http::WebSocketConnection> c) override {
    conn_ = c;
    room_->add_viewer(std::move(c), role_);
  }
  void on_text(std::string_view message) override {
    if (!conn_) return;
    room_->on_control(conn_, role_, message, [this](const std::string& token) -> std::optional<json::object> {
      auto c = verify_any_live_token(s_, token);
      if (!c.ok() || c->subject != claims_.subject) return std::nullopt;
      if (c->audience == kEmbedAudience) {
        if (c->agent != room_->settings().agent_code) return std::nullopt;
        MintedToken t = mint_embed_token(s_, c->subject, c->api_key_id, *c->agent, c->sid.value_or(""));
        return json::object{{"token", t.token}, {"expires_at", t.expires_at}};
      }
      MintedToken t = mint_runtime_token(s_, c->subject, c->api_key_id);
      return json::object{{"token", t.token}, {"expires_at", t.expires_at}};
    });
  }
  // Binary messages are microphone audio (s16le mono 16 kHz), recognised off this I/O thread.
  void on_binary(std::string_view pcm) override {
    if (!conn_) return;
    if (Status st = room_->microphone(pcm); !st.ok()) {
      conn_->send_text(json_to_string(
          json::object{{"type", "error"}, {"code", "VALIDATION_ERROR"}, {"message", st.message()}}));
    }
  }
  void on_close(uint16_t) override {
    if (conn_) room_->remove_viewer(conn_.get());
    conn_.reset();
  }

 private:
  Services& s_;
  std::shared_ptr<live::Room> room_;
  live::ViewerRole role_;
  TokenClaims claims_;
  std::shared_ptr<http::WebSocketConnection> conn_;
};

}  // namespace

http::WebSocketFactory make_room_socket_factory(Services& s) {
  return [&s](http::WebSocketUpgrade& up) -> http::WebSocketAccept {
    using A = http::WebSocketAccept;
    if (up.bearer_token.empty()) {
      return A::reject(http::Response::error(
          401, "MISSING_AUTH",
          "Missing token: Authorization: Bearer or subprotocols 'imago.v1, bearer.<token>'"));
    }
    auto c = verify_any_live_token(s, up.bearer_token);
    if (!c.ok()) {
      if (c.status().code() == Code::kUnauthenticated) {
        return A::reject(http::Response::error(401, "UNAUTHORIZED", "Invalid or expired token"));
      }
      return A::reject(http::Response::from_status(c.status()));
    }
    const std::string& room_id = up.request.param("room_id");
    if (!safe_room_id(room_id)) {
      return A::reject(http::Response::from_status(
          Status::Invalid("room_id must be 1-128 characters of A-Z a-z 0-9 - _ . :")));
    }
    auto code = up.request.query_param("agent_code");
    if (!code || code->empty()) {
      return A::reject(
          http::Response::from_status(Status::Invalid("Query parameter 'agent_code' is required")));
    }
    const bool embed = c->audience == kEmbedAudience;
    if (embed && c->agent != std::string(*code)) {
      return A::reject(http::Response::error(
          403, "FORBIDDEN", "This embed token is not valid for agent " + std::string(*code)));
    }
    // billing_type=voice_chat: audio only, no frames (SPEC 8.6). camera_chat is not built yet.
    auto billing = up.request.query_param("billing_type");
    if (billing && *billing != "voice_chat") {
      return A::reject(http::Response::from_status(Status::Invalid(
          "Query parameter 'billing_type' must be 'voice_chat' (camera_chat is not available yet)")));
    }
    auto agent = s.agent_service->get(c->subject, std::string(*code));
    if (!agent.ok()) return A::reject(http::Response::from_status(agent.status()));
    // A new session whose first minute the monthly live spend cap would refuse is not started:
    // 402 SPEND_CAP_REACHED now instead of a session that ends at once. A running room is joined
    // (its current minute is paid); it ends when the cap refuses its next minute.
    if (!s.rooms->find(c->subject, room_id)) {
      const int64_t rate = live::live_rate(live::cloud_billing_type(agent->model, billing.has_value()));
      if (Status st = live::live_cap_allows_minute(*s.ledger, c->subject, rate); !st.ok()) {
        return A::reject(billing_refusal_response(st));
      }
    }
    auto room = s.rooms->join(c->subject, room_id, *agent, billing.has_value());
    if (!room.ok()) {
      http::Response r = http::Response::from_status(room.status());
      if (room.status().code() == Code::kUnavailable)
        r.headers.set("Retry-After", std::to_string(kLiveRetryAfterS));
      return A::reject(std::move(r));
    }
    // Joining with a good token counts as a renewal for the session.
    (*room)->renewed();
    return A::upgrade(std::make_shared<RoomSocket>(
        s, *room, embed ? live::ViewerRole::kEmbed : live::ViewerRole::kRuntime, std::move(c).value()));
  };
}

void register_live_routes(http::Router& router, Services& s) {
  // The WebSocket join (pinned path): tokens, never rate-limited (SPEC 8.2 /v1/runtime/*).
  http::WebSocketOptions wso;
  wso.auth = http::WebSocketOptions::Auth::kToken;
  wso.max_message_bytes = 64 * 1024;
  // Several seconds of media for a slow viewer; past it video is dropped first, never audio.
  wso.max_queued_bytes = 8 * 1024 * 1024;
  router.add_websocket("/v1/runtime/rooms/{room_id}", wso, make_room_socket_factory(s));

  // POST /v1/agent/{agent_code}/speak {message, room_id?} (SPEC 4.8)
  router.add("POST", "/v1/agent/{agent_code}/speak", [&s](http::Request& req) {
    auto body = parse_json_object_with(req.body, {"message", "room_id"});
    if (!body.ok()) return http::Response::from_status(body.status());
    auto message = required_text(*body, "message");
    if (!message.ok()) return http::Response::from_status(message.status());
    auto room_id = optional_room_id(*body);
    if (!room_id.ok()) return http::Response::from_status(room_id.status());
    auto t = targets(s, req, *room_id);
    if (!t.ok()) return http::Response::from_status(t.status());
    int delivered = 0;
    for (auto& r : t->rooms) {
      auto id = r->say(*message);
      if (!id.ok() && id.status().code() == Code::kInvalidArgument)
        return http::Response::from_status(id.status());
      delivered += id.ok() ? 1 : 0;
    }
    if (delivered == 0) return no_rooms(t->agent_code);
    return http::Response::json(
        200, {{"agent_code", t->agent_code}, {"context_type", "speak"}, {"delivered_to_rooms", delivered}});
  });

  // POST /v1/agent/{agent_code}/add-context {context, type?, room_id?} (SPEC 4.9)
  router.add("POST", "/v1/agent/{agent_code}/add-context", [&s](http::Request& req) {
    auto body = parse_json_object_with(req.body, {"context", "type", "room_id"});
    if (!body.ok()) return http::Response::from_status(body.status());
    auto context = required_text(*body, "context");
    if (!context.ok()) return http::Response::from_status(context.status());
    auto type = get_string(*body, "type");
    if (!type.ok()) return http::Response::from_status(type.status());
    const std::string kind = type->value_or("add_context");
    if (kind != "add_context" && kind != "speak") {
      return http::Response::from_status(Status::Invalid("Field 'type' must be 'add_context' or 'speak'"));
    }
    auto room_id = optional_room_id(*body);
    if (!room_id.ok()) return http::Response::from_status(room_id.status());
    auto t = targets(s, req, *room_id);
    if (!t.ok()) return http::Response::from_status(t.status());
    int delivered = 0;
    for (auto& r : t->rooms) {
      if (kind == "speak") {
        // SPEC 4.9: `speak` makes the agent speak the given text (verbatim, into the history).
        auto id = r->say(*context);
        if (!id.ok() && id.status().code() == Code::kInvalidArgument)
          return http::Response::from_status(id.status());
        delivered += id.ok() ? 1 : 0;
      } else {
        r->add_context(*context);
        ++delivered;
      }
    }
    if (delivered == 0) return no_rooms(t->agent_code);
    return http::Response::json(
        200, {{"agent_code", t->agent_code}, {"context_type", kind}, {"delivered_to_rooms", delivered}});
  });

  // POST /v1/agent/{agent_code}/trigger-dynamics {action, room_id?} (SPEC 6)
  router.add("POST", "/v1/agent/{agent_code}/trigger-dynamics", [&s](http::Request& req) {
    auto body = parse_json_object_with(req.body, {"action", "room_id"});
    if (!body.ok()) return http::Response::from_status(body.status());
    auto action = required_text(*body, "action");
    if (!action.ok()) return http::Response::from_status(action.status());
    auto room_id = optional_room_id(*body);
    if (!room_id.ok()) return http::Response::from_status(room_id.status());
    auto t = targets(s, req, *room_id);
    if (!t.ok()) return http::Response::from_status(t.status());
    int delivered = 0;
    bool triggered = false;
    for (auto& r : t->rooms) {
      auto res = r->trigger_dynamics(*action);
      if (!res.status.ok()) return http::Response::from_status(res.status);
      ++delivered;
      triggered = triggered || res.animation_triggered;
    }
    return http::Response::json(200, {{"agent_code", t->agent_code},
                                      {"action", *action},
                                      {"animation_triggered", triggered},
                                      {"delivered_to_rooms", delivered}});
  });

  router.add("GET", "/v1/rooms", [&s](http::Request& req) {
    json::array data;
    for (auto& r : s.rooms->list(req.principal->account_id)) data.push_back(room_json(r->info()));
    return http::Response::json(200, {{"data", std::move(data)}});
  });

  auto room_or_404 = [&s](const http::Request& req) -> Result<std::shared_ptr<live::Room>> {
    const std::string& id = req.param("room_id");
    auto r = s.rooms->find(req.principal->account_id, id);
    if (!r) return Status::NotFound("No active room " + id);
    return r;
  };

  router.add("GET", "/v1/rooms/{room_id}", [room_or_404](http::Request& req) {
    auto r = room_or_404(req);
    if (!r.ok()) return http::Response::from_status(r.status());
    return http::Response::json(200, {{"data", room_json((*r)->info())}});
  });

  router.add("DELETE", "/v1/rooms/{room_id}", [&s, room_or_404](http::Request& req) {
    auto r = room_or_404(req);
    if (!r.ok()) return http::Response::from_status(r.status());
    s.rooms->end(*r, live::EndReason::kTerminated);
    auto info = (*r)->info();
    return http::Response::json(200, {{"room_id", info.room_id},
                                      {"session_id", info.session_id},
                                      {"ended", true},
                                      {"reason", "terminated"},
                                      {"billed_minutes", info.billed_minutes}});
  });

  router.add("POST", "/v1/rooms/{room_id}/interrupt", [room_or_404](http::Request& req) {
    auto r = room_or_404(req);
    if (!r.ok()) return http::Response::from_status(r.status());
    (*r)->interrupt();
    return http::Response::json(200, {{"room_id", req.param("room_id")}, {"interrupted", true}});
  });

  // The viewer page and its scripts (web/, compiled into the binary): public, the token travels
  // in the URL fragment, which browsers never send to the server.
  const http::RouteOptions page{.auth = http::AuthMode::kNone, .tier = Tier::kExempt};
  router.add(
      "GET", "/embed/{agent_code}",
      [](http::Request&) {
        const WebAsset* a = find_web_asset("embed.html");
        http::Response r = http::Response::bytes(200, std::string(a->content_type), std::string(a->body));
        r.headers.set("Cache-Control", "no-store");
        r.headers.set("Content-Security-Policy",
                      "default-src 'self'; img-src 'self' blob: data:; connect-src 'self' ws: wss:; "
                      "style-src 'self' 'unsafe-inline'");
        return r;
      },
      page);
  router.add(
      "GET", "/embed-assets/{name}",
      [](http::Request& req) {
        const WebAsset* a = find_web_asset(req.param("name"));
        if (!a || a->name == "embed.html") return http::Response::error(404, "NOT_FOUND", "No such asset");
        http::Response r = http::Response::bytes(200, std::string(a->content_type), std::string(a->body));
        r.headers.set("Cache-Control", "no-cache");
        return r;
      },
      page);
}

}  // namespace imago::api

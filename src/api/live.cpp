// Live sessions at the API edge (docs/live-protocol.md): speak / add-context / trigger-dynamics
// (SPEC 4.8, 4.9, 6), the account's rooms, the WebSocket join at /v1/runtime/rooms/{room_id}, and
// the viewer page at /embed/{agent_code}.

#include "agents/agent_service.h"
#include "api/dashboard_common.h"
#include "api/live_routes.h"
#include "api/live_tokens.h"
#include "api/routes.h"
#include "api/spend_cap_views.h"
#include "api/views.h"
#include "api/web_assets.h"
#include "auth/embed_origin.h"
#include "http/websocket_client.h"
#include "limits/storage_quota.h"
#include "live/key_frame_gate.h"
#include "live/media_framing.h"
#include "live/minute_billing.h"
#include "live/rooms.h"
#include "store/account_store.h"
#include "store/agent_store.h"
#include "store/file_store.h"
#include "util/json.h"
#include "util/strings.h"

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

// A room another node runs (cluster mode): the fields come from its owner's last snapshot, taken
// at most one lease renewal (3 s) ago, which `details_as_of` tells; `remote: true` marks it.
json::object remote_room_json(const RemoteRoom& r) {
  json::object o{{"room_id", r.room_id}, {"session_id", r.session_id}, {"agent_code", r.agent_code}};
  std::error_code ec;
  json::value d = json::parse(r.details, ec);
  const json::object* details = !ec && d.is_object() ? &d.as_object() : nullptr;
  auto field = [&](const char* k) -> json::value {
    const json::value* v = details ? details->if_contains(k) : nullptr;
    return v ? *v : json::value(nullptr);
  };
  o["state"] = field("state");
  const json::value started = field("started_at");
  o["started_at"] = started.is_int64() ? time_json(started.as_int64()) : json::value(nullptr);
  for (const char* k : {"viewers", "billed_minutes", "billing_type", "context_items"}) o[k] = field(k);
  o["remote"] = true;
  o["details_as_of"] =
      r.details_at_ms > 0 ? json::value(format_rfc3339(r.details_at_ms / 1000)) : json::value(nullptr);
  return o;
}

// A REST command's failure as its status says; a full speech queue is 429 RATE_LIMITED
// (docs/live-protocol.md, "Bounds") with Retry-After.
http::Response delivery_error(const Status& st) {
  http::Response r = http::Response::from_status(st);
  if (live::is_speech_queue_full(st)) r.headers.set("Retry-After", "1");
  return r;
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
  RoomSocket(Services& s, std::shared_ptr<live::Room> room, live::ViewerRole role, TokenClaims claims,
             live::MediaFormat media)
      : s_(s), room_(std::move(room)), role_(role), claims_(std::move(claims)), media_(media) {
    room_->viewer_expected();
  }
  // Dropped without on_open: the handshake failed (the client went away during the upgrade).
  ~RoomSocket() override {
    if (!opened_) room_->viewer_upgrade_failed();
  }

  void on_open(std::shared_ptr<http::WebSocketConnection> c) override {
    opened_ = true;
    conn_ = c;
    room_->add_viewer(std::move(c), role_, media_);
  }
  void on_text(std::string_view message) override {
    if (!conn_) return;
    room_->on_control(conn_, role_, message, [this](const std::string& token) -> std::optional<json::object> {
      auto c = verify_any_live_token(s_, token);
      if (!c.ok() || c->subject != claims_.subject) return std::nullopt;
      if (c->audience == kEmbedAudience) {
        if (c->agent != room_->settings().agent_code) return std::nullopt;
        // The renewed token starts what the first one did, never more.
        MintedToken t = mint_embed_token(s_, c->subject, c->api_key_id, *c->agent, c->sid.value_or(""),
                                         c->billing_type, c->origin);
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
  live::MediaFormat media_;
  std::shared_ptr<http::WebSocketConnection> conn_;
  bool opened_ = false;
};

// A viewer of a room that another node runs (cluster mode): everything is relayed to and from the
// owner, to which this node connected as a WebSocket client with the viewer's own token.
class RelaySocket : public http::WebSocketHandler {
 public:
  RelaySocket(std::unique_ptr<http::WebSocketClient> owner, const Clock& clock)
      : owner_(std::move(owner)), clock_(clock) {}
  ~RelaySocket() override {
    if (owner_) owner_->close();  // no handler runs after it (so `this` in them stays valid)
  }

  void on_open(std::shared_ptr<http::WebSocketConnection> c) override {
    std::weak_ptr<http::WebSocketConnection> viewer = c;
    http::WebSocketClient::Handlers h;
    h.message = [this, viewer](std::string m, bool binary) {
      auto v = viewer.lock();
      if (!v) return;
      if (!binary) {
        v->send_text(std::move(m));
        return;
      }
      // Media framing byte 0: 1 video, 2 audio; flags bit 4 marks a codec configuration, which is
      // never dropped. Audio is never dropped either.
      live::MediaHeader hdr;
      const bool framed = live::decode_media_header(m, &hdr);
      const bool config = framed && (hdr.flags & live::kFlagConfig) != 0;
      const bool video = framed && hdr.kind == live::MediaKind::kVideo;
      if (video && !config && !admit_picture(*v, (hdr.flags & live::kFlagKeyFrame) != 0)) return;
      v->send_binary(std::make_shared<const std::string>(std::move(m)),
                     config  ? http::WsMessageClass::kControl
                     : video ? http::WsMessageClass::kVideo
                             : http::WsMessageClass::kAudio);
    };
    h.closed = [viewer](uint16_t code, const std::string& reason) {
      // 1006 (no close frame) cannot be sent on: the owner went away.
      if (auto v = viewer.lock()) {
        v->close(code == 1006 || code == 1005 ? http::ws_close::kGoingAway : code, reason);
      }
    };
    owner_->start(std::move(h));
  }
  void on_text(std::string_view message) override { owner_->send(std::string(message), false); }
  void on_binary(std::string_view bytes) override { owner_->send(std::string(bytes), true); }
  void on_close(uint16_t) override { owner_->close(); }

 private:
  // The owner paces pictures for its own connection to this node, not for the viewer behind it:
  // a viewer slower than the node-to-node link is gated here as the owner gates its own viewers
  // (live/key_frame_gate.h), and once it has room again the owner is asked for a key frame, at
  // most once a second (the owner spaces key frames itself too).
  bool admit_picture(http::WebSocketConnection& viewer, bool key_frame) {
    const size_t queued = viewer.queued_bytes();
    if (gate_.admit(key_frame, queued)) return true;
    const int64_t now = clock_.monotonic_us();
    if (gate_.wants_key_frame(queued) && now - last_key_request_us_ >= 1'000'000) {
      last_key_request_us_ = now;
      owner_->send(R"({"type":"request_key_frame"})", false);
    }
    return false;
  }

  std::unique_ptr<http::WebSocketClient> owner_;
  const Clock& clock_;
  // Only the owner's I/O thread (the message handler) touches these.
  live::KeyFrameGate gate_{live::kViewerQueueBytes};
  int64_t last_key_request_us_ = INT64_MIN / 2;
};

// Marks a relayed upgrade: the owner never relays it again (no loops between nodes).
constexpr const char* kRelayedHeader = "X-Imago-Relayed";
constexpr int kRelayConnectTimeoutMs = 5000;

// The room runs on another node: connect to it with the viewer's token and relay. nullopt when
// there is nowhere to relay to (the caller answers with its own refusal).
std::optional<http::WebSocketAccept> relay_to_owner(Services& s, http::WebSocketUpgrade& up,
                                                    const std::string& account_id,
                                                    const std::string& room_id) {
  if (up.request.headers.has(kRelayedHeader)) return std::nullopt;
  auto owner = s.rooms->owner_url(account_id, room_id);
  if (!owner) return std::nullopt;
  http::Headers h;
  h.set("Authorization", "Bearer " + up.bearer_token);
  h.set(kRelayedHeader, "1");
  http::WebSocketClient::Refused refused;
  auto client =
      http::WebSocketClient::connect(*owner, up.request.target, h, kRelayConnectTimeoutMs, &refused,
                                     {.ca_file = s.config ? s.config->node_ca_file : std::string()});
  if (client.ok())
    return http::WebSocketAccept::upgrade(std::make_shared<RelaySocket>(std::move(client).value(), *s.clock));
  if (refused.status >= 400) {
    // The owner's own answer (401, 402, 409, 503 ...), as it gave it.
    http::Response r;
    r.status = refused.status;
    r.body = refused.body;
    r.headers.set("Content-Type", refused.content_type.empty() ? "application/json" : refused.content_type);
    return http::WebSocketAccept::reject(std::move(r));
  }
  return http::WebSocketAccept::reject(http::Response::from_status(client.status()));
}

}  // namespace

// A recording is kept as a file of the agent: an account at its storage quota records nothing
// new (403 STORAGE_QUOTA_EXCEEDED). Its size is not known ahead, like a generation's.
Status recording_fits_quota(Services& s, const std::string& account_id, Plan plan,
                            const std::optional<PlanLimits>& custom) {
  const int64_t quota = effective_storage_quota(*s.storage_quotas, plan, custom);
  if (quota <= 0) return Status::Ok();
  auto used = s.files->usage_bytes(account_id);
  if (!used.ok()) return used.status();
  return check_storage_quota(*used, 1, quota);
}

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
    // A token restricted to a site joins only from that site's pages, or from the viewer page
    // framed by that site (docs/embed.md, "Keeping it to your site").
    if (embed && c->origin) {
      auto origin = up.request.headers.get("Origin");
      const bool own_site =
          origin && origin_is_this_site(s, *origin, up.request.headers.get("Host").value_or(""));
      if (Status st =
              check_embed_origin(*c->origin, origin, own_site, up.request.query_param("embed_origin"));
          !st.ok()) {
        return A::reject(http::Response::error(403, "ORIGIN_NOT_ALLOWED", st.message()));
      }
    }
    // billing_type=voice_chat: audio only, no frames; camera_chat: the viewer's camera frames go to
    // the model with their turns (SPEC 8.6, docs/live-protocol.md).
    auto mode = live::chat_mode_for_join(up.request.query_param("billing_type"),
                                         !s.config->llm_base_url.empty() && s.config->llm_vision);
    if (!mode.ok()) return A::reject(http::Response::from_status(mode.status()));
    // media=h264+opus | jpeg+pcm (absent: jpeg+pcm); quality= for a room this join starts.
    auto media = live::media_format_for_join(up.request.query_param("media"));
    if (!media.ok()) return A::reject(http::Response::from_status(media.status()));
    auto quality = live::video_quality_for_join(up.request.query_param("quality"));
    if (!quality.ok()) return A::reject(http::Response::from_status(quality.status()));
    if (embed) {
      // An embed token starts only the session type it was minted for (docs/live-protocol.md).
      const std::string allowed = c->billing_type.value_or("");
      const std::string asked = *mode == live::ChatMode::kVoiceChat    ? "voice_chat"
                                : *mode == live::ChatMode::kCameraChat ? "camera_chat"
                                                                       : "";
      if (asked != allowed) {
        return A::reject(http::Response::error(
            403, "FORBIDDEN",
            "This embed token joins " + (allowed.empty() ? std::string("avatar") : allowed) +
                " sessions only (the billing_type it was minted with); this join asked for " +
                (asked.empty() ? std::string("an avatar session") : asked)));
      }
    }
    // record=true: the session is recorded (docs/sessions.md). Not for embed tokens: their holder
    // is the public, and a recording fills the owner's storage.
    bool record = false;
    if (auto r = up.request.query_param("record")) {
      if (*r == "true") {
        record = true;
      } else if (*r != "false") {
        return A::reject(http::Response::from_status(
            Status::Invalid("Query parameter 'record' must be 'true' or 'false'")));
      }
    }
    if (record && embed) {
      return A::reject(http::Response::error(403, "FORBIDDEN", "Embed tokens cannot record a session"));
    }
    if (record) {
      auto account = s.accounts->get_account(c->subject);
      if (!account.ok()) return A::reject(http::Response::from_status(account.status()));
      if (Status st = recording_fits_quota(s, c->subject, account->plan, account->custom_limits); !st.ok())
        return A::reject(http::Response::from_status(st));
    }
    auto agent = s.agent_service->get(c->subject, std::string(*code));
    if (!agent.ok()) return A::reject(http::Response::from_status(agent.status()));
    // Cluster mode: a room another node runs is joined there, through this node.
    if (auto relayed = relay_to_owner(s, up, c->subject, room_id)) return std::move(*relayed);
    // A new session whose first minute the monthly live spend cap would refuse is not started:
    // 402 SPEND_CAP_REACHED now instead of a session that ends at once. A running room is joined
    // (its current minute is paid); it ends when the cap refuses its next minute.
    if (!s.rooms->find(c->subject, room_id)) {
      const int64_t rate = live::live_rate(live::cloud_billing_type(agent->model, *mode));
      if (Status st = live::live_cap_allows_minute(*s.ledger, c->subject, rate); !st.ok()) {
        return A::reject(billing_refusal_response(st));
      }
    }
    auto room = s.rooms->join(c->subject, room_id, *agent, *mode, *quality, record);
    if (!room.ok() && room.status().code() == Code::kConflict) {
      // Another node started it a moment ago.
      if (auto relayed = relay_to_owner(s, up, c->subject, room_id)) return std::move(*relayed);
    }
    if (!room.ok()) {
      // 503 when the node is full; 429 RATE_LIMITED when the account holds its share of the live
      // capacity (--live-sessions-per-account).
      http::Response r = http::Response::from_status(room.status());
      if (room.status().code() == Code::kUnavailable || room.status().code() == Code::kRateLimited)
        r.headers.set("Retry-After", std::to_string(kLiveRetryAfterS));
      return A::reject(std::move(r));
    }
    // Joining with a good token counts as a renewal for the session.
    (*room)->renewed();
    return A::upgrade(
        std::make_shared<RoomSocket>(s, *room, embed ? live::ViewerRole::kEmbed : live::ViewerRole::kRuntime,
                                     std::move(c).value(), *media));
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
    auto a = s.agent_service->get(req.principal->account_id, req.param("agent_code"));
    if (!a.ok()) return http::Response::from_status(a.status());
    live::Delivery d = s.rooms->deliver(*a, *room_id, "speak", *message);
    if (!d.status.ok()) return delivery_error(d.status);
    return http::Response::json(
        200,
        {{"agent_code", a->code}, {"context_type", "speak"}, {"delivered_to_rooms", d.delivered_to_rooms}});
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
    auto a = s.agent_service->get(req.principal->account_id, req.param("agent_code"));
    if (!a.ok()) return http::Response::from_status(a.status());
    // SPEC 4.9: `speak` makes the agent speak the given text (verbatim, into the history).
    live::Delivery d = s.rooms->deliver(*a, *room_id, kind, *context);
    if (!d.status.ok()) return delivery_error(d.status);
    return http::Response::json(
        200, {{"agent_code", a->code}, {"context_type", kind}, {"delivered_to_rooms", d.delivered_to_rooms}});
  });

  // POST /v1/agent/{agent_code}/trigger-dynamics {action, room_id?} (SPEC 6)
  router.add("POST", "/v1/agent/{agent_code}/trigger-dynamics", [&s](http::Request& req) {
    auto body = parse_json_object_with(req.body, {"action", "room_id"});
    if (!body.ok()) return http::Response::from_status(body.status());
    auto action = required_text(*body, "action");
    if (!action.ok()) return http::Response::from_status(action.status());
    auto room_id = optional_room_id(*body);
    if (!room_id.ok()) return http::Response::from_status(room_id.status());
    auto a = s.agent_service->get(req.principal->account_id, req.param("agent_code"));
    if (!a.ok()) return http::Response::from_status(a.status());
    live::Delivery d = s.rooms->deliver(*a, *room_id, "trigger_dynamics", *action);
    if (!d.status.ok()) return delivery_error(d.status);
    return http::Response::json(200, {{"agent_code", a->code},
                                      {"action", *action},
                                      {"animation_triggered", d.animation_triggered},
                                      {"delivered_to_rooms", d.delivered_to_rooms}});
  });

  // The account's rooms on this node, then those with a live lease on other nodes (cluster mode).
  router.add("GET", "/v1/rooms", [&s](http::Request& req) {
    json::array data;
    for (auto& r : s.rooms->list(req.principal->account_id)) data.push_back(room_json(r->info()));
    auto remote = s.rooms->remote_list(req.principal->account_id);
    if (!remote.ok()) return http::Response::from_status(remote.status());
    for (const auto& r : *remote) data.push_back(remote_room_json(r));
    return http::Response::json(200, {{"data", std::move(data)}});
  });

  auto room_or_404 = [&s](const http::Request& req) -> Result<std::shared_ptr<live::Room>> {
    const std::string& id = req.param("room_id");
    auto r = s.rooms->find(req.principal->account_id, id);
    if (!r) return Status::NotFound("No active room " + id);
    return r;
  };

  router.add("GET", "/v1/rooms/{room_id}", [&s, room_or_404](http::Request& req) {
    auto r = room_or_404(req);
    if (r.ok()) return http::Response::json(200, {{"data", room_json((*r)->info())}});
    auto remote = s.rooms->remote_list(req.principal->account_id, req.param("room_id"));
    if (remote.ok() && !remote->empty())
      return http::Response::json(200, {{"data", remote_room_json(remote->front())}});
    return http::Response::from_status(r.status());
  });

  // Wherever the room runs (cluster mode: the owner node ends it, and this waits for that).
  router.add("DELETE", "/v1/rooms/{room_id}", [&s](http::Request& req) {
    auto ended = s.rooms->terminate(req.principal->account_id, req.param("room_id"));
    if (!ended.ok()) return http::Response::from_status(ended.status());
    return http::Response::json(200, {{"room_id", ended->room_id},
                                      {"session_id", ended->session_id},
                                      {"ended", true},
                                      {"reason", "terminated"},
                                      {"billed_minutes", ended->billed_minutes}});
  });

  // Records the running room from now until its session ends (docs/sessions.md); wherever it runs.
  router.add("POST", "/v1/rooms/{room_id}/recording", [&s](http::Request& req) {
    auto body = parse_json_object_with(req.body, {"enabled"}, true);
    if (!body.ok()) return http::Response::from_status(body.status());
    auto enabled = get_bool(*body, "enabled");
    if (!enabled.ok()) return http::Response::from_status(enabled.status());
    if (enabled->has_value() && !**enabled) {
      return http::Response::from_status(
          Status::Invalid("A recording runs until the session ends; 'enabled' may only be true"));
    }
    const std::string& account = req.principal->account_id;
    if (Status st = recording_fits_quota(s, account, req.principal->plan, req.principal->custom_limits);
        !st.ok())
      return http::Response::from_status(st);
    auto session = s.rooms->record(account, req.param("room_id"));
    if (!session.ok()) return http::Response::from_status(session.status());
    return http::Response::json(
        200, {{"room_id", req.param("room_id")}, {"session_id", *session}, {"recording", true}});
  });

  // The room may run on another node (cluster mode): the directory carries the interrupt there.
  router.add("POST", "/v1/rooms/{room_id}/interrupt", [&s](http::Request& req) {
    Status st = s.rooms->interrupt(req.principal->account_id, req.param("room_id"));
    if (!st.ok()) return http::Response::from_status(st);
    return http::Response::json(200, {{"room_id", req.param("room_id")}, {"interrupted", true}});
  });

  // The viewer page and its scripts (web/, compiled into the binary): public, the token travels
  // in the URL fragment, which browsers never send to the server.
  const http::RouteOptions page{.auth = http::AuthMode::kNone, .tier = Tier::kExempt};
  router.add(
      "GET", "/embed/{agent_code}",
      [](http::Request& req) {
        // ?origin=https://shop.example (for a token restricted to that site): only that site may
        // frame the page. Without it any site may (that is what the page is for).
        std::string frame_ancestors;
        if (auto o = req.query_param("origin")) {
          auto origin = normalize_embed_origin(*o);
          if (!origin.ok()) {
            return http::Response::from_status(Status::Invalid(
                "Query parameter 'origin' must be a web origin such as https://shop.example"));
          }
          frame_ancestors = "; frame-ancestors " + *origin;
        }
        const WebAsset* a = find_web_asset("embed.html");
        http::Response r = http::Response::bytes(200, std::string(a->content_type), std::string(a->body));
        r.headers.set("Cache-Control", "no-store");
        // Its styles are a file of its own.
        r.headers.set("Content-Security-Policy",
                      "default-src 'self'; img-src 'self' blob: data:; connect-src 'self' ws: wss:; "
                      "style-src 'self'; base-uri 'none'; form-action 'none'" +
                          frame_ancestors);
        r.headers.set("X-Content-Type-Options", "nosniff");
        r.headers.set("Referrer-Policy", "no-referrer");
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

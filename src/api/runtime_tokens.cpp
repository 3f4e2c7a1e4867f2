// Runtime tokens (SPEC 2.6, 3.4, 4.17, 5.8-5.9), heartbeats and embed tokens (SPEC 5.12).
// Shapes are pinned in docs/live-protocol.md. /v1/runtime-tokens* and /v1/runtime/* are never
// rate-limited (SPEC 8.2): their routes use Tier::kExempt.
#include "agents/agent_service.h"
#include "api/live_tokens.h"
#include "api/routes.h"
#include "api/spend_cap_views.h"
#include "auth/embed_origin.h"
#include "live/minute_billing.h"
#include "live/rooms.h"
#include "live/self_hosted_meter.h"
#include "store/account_store.h"
#include "store/agent_store.h"
#include "store/ledger_store.h"
#include "store/member_store.h"
#include "util/json.h"
#include "util/random.h"

namespace imago::api {

namespace {

http::Response unauthorized(const Status& st) {
  if (st.code() == Code::kUnauthenticated)
    return http::Response::error(401, "UNAUTHORIZED", "Invalid or expired token");
  return http::Response::from_status(st);
}

http::Response success(json::object data) {
  return http::Response::json(200, {{"status", "success"}, {"status_code", 200}, {"data", std::move(data)}});
}

}  // namespace

std::string bearer_token(const http::Request& req) {
  auto h = req.headers.get("authorization");
  if (!h) return "";
  std::string_view v = *h;
  if (v.size() > 7 && (v.substr(0, 7) == "Bearer " || v.substr(0, 7) == "bearer "))
    return std::string(v.substr(7));
  return "";
}

MintedToken mint_runtime_token(Services& s, const std::string& account_id, const std::string& api_key_id) {
  TokenClaims c;
  c.api_key_id = api_key_id;
  c.subject = account_id;
  c.audience = std::string(kRuntimeAudience);
  c.issued_at = s.clock->now_s();
  c.expires_at = c.issued_at + s.config->runtime_token_ttl_s;
  c.token_id = random_uuid();
  return {sign_token(s.token_keys->current(), c), c.token_id, c.expires_at};
}

MintedToken mint_embed_token(Services& s, const std::string& account_id, const std::string& api_key_id,
                             const std::string& agent_code, const std::string& sid,
                             const std::optional<std::string>& billing_type,
                             const std::optional<std::string>& origin) {
  TokenClaims c;
  c.api_key_id = api_key_id;
  c.subject = account_id;
  c.audience = std::string(kEmbedAudience);
  c.issued_at = s.clock->now_s();
  c.expires_at = c.issued_at + kEmbedTokenTtlS;
  c.token_id = random_uuid();
  c.agent = agent_code;
  c.sid = sid;
  c.billing_type = billing_type;
  c.origin = origin;
  return {sign_token(s.token_keys->current(), c), c.token_id, c.expires_at};
}

Result<TokenClaims> verify_live_token(Services& s, std::string_view token, std::string_view audience) {
  auto c = verify_token(*s.token_keys, token, audience, s.clock->now_s());
  if (!c.ok()) return c.status();
  if (c->api_key_id.rfind("ses_", 0) == 0 && s.members) {
    // Minted through a dashboard session (no api key): valid while that session is (not signed
    // out, not expired, not ended by a password change or "sign out everywhere").
    auto session = s.members->get_session(c->api_key_id, s.clock->now_s());
    if (!session.ok() && session.status().code() != Code::kNotFound) return session.status();
    if (!session.ok() || session->account_id != c->subject) {
      return Status(Code::kUnauthenticated, "the dashboard session that minted this token has ended");
    }
    return c;
  }
  auto key = s.accounts->get_key(c->api_key_id);
  if (!key.ok()) {
    if (key.status().code() == Code::kNotFound) return Status(Code::kUnauthenticated, "api key not found");
    return key.status();
  }
  if (key->revoked_at || key->account_id != c->subject) {
    return Status(Code::kUnauthenticated, "the api-secret that minted this token was revoked or rotated");
  }
  return c;
}

Result<TokenClaims> verify_any_live_token(Services& s, std::string_view token) {
  auto r = verify_live_token(s, token, kRuntimeAudience);
  if (r.ok() || r.status().code() != Code::kUnauthenticated) return r;
  return verify_live_token(s, token, kEmbedAudience);
}

// Who a token is minted for: the caller's api key, or the dashboard session when the dashboard
// asks with one (the `akid` claim then holds the session id; see verify_live_token), so signing
// out ends what the session started at its next heartbeat.
static std::string minter_of(const Principal& p) {
  return p.key_id.empty() ? p.session_id : p.key_id;
}

void register_runtime_token_routes(http::Router& router, Services& s) {
  http::RouteOptions exempt;
  exempt.tier = Tier::kExempt;

  // POST /v1/runtime-tokens/request {agent_code?, room_id?, billing_type?}
  router.add(
      "POST", "/v1/runtime-tokens/request",
      [&s](http::Request& req) {
        auto body =
            parse_json_object_with(req.body, {"agent_code", "room_id", "billing_type"}, /*allow_empty=*/true);
        if (!body.ok()) return http::Response::from_status(body.status());
        auto agent_code = get_string(*body, "agent_code");
        auto room_id = get_string(*body, "room_id");
        auto billing_type = get_string(*body, "billing_type");
        for (const Status& st : {agent_code.status(), room_id.status(), billing_type.status()}) {
          if (!st.ok()) return http::Response::from_status(st);
        }
        const Principal& p = *req.principal;
        int64_t needed = live::cheapest_live_rate();
        if (billing_type->has_value()) {
          if (!live::is_live_billing_type(**billing_type)) {
            return http::Response::from_status(Status::Invalid(
                "Field 'billing_type' must be one of essence_cloud, expression_cloud, essence_self_hosted, "
                "expression_self_hosted, voice_chat, camera_chat"));
          }
          needed = live::live_rate(**billing_type);
        }
        if (agent_code->has_value()) {
          auto a = s.agent_service->get(p.account_id, **agent_code);
          if (!a.ok()) return http::Response::from_status(a.status());
        }
        auto bal = s.ledger->balance(p.account_id);
        if (!bal.ok()) return http::Response::from_status(bal.status());
        if (bal->total() < needed) {
          return http::Response::from_status(Status::InsufficientFunds("Insufficient credits"));
        }
        // The monthly live spend cap: a token for live usage the cap no longer allows is refused
        // up front (402 SPEND_CAP_REACHED) rather than minted for a session that would end at once.
        if (Status st = live::live_cap_allows_minute(*s.ledger, p.account_id, needed); !st.ok()) {
          return billing_refusal_response(st);
        }
        MintedToken t = mint_runtime_token(s, p.account_id, minter_of(p));
        return success({{"token", t.token}, {"transaction_id", t.token_id}, {"expires_at", t.expires_at}});
      },
      exempt);

  // POST /v1/runtime/heartbeat with Authorization: Bearer <runtime token>, {session_id?, billing_type?}
  http::RouteOptions token_auth = exempt;
  token_auth.auth = http::AuthMode::kNone;
  router.add(
      "POST", "/v1/runtime/heartbeat",
      [&s](http::Request& req) {
        std::string token = bearer_token(req);
        if (token.empty())
          return http::Response::error(401, "MISSING_AUTH", "Missing Authorization: Bearer header");
        auto c = verify_live_token(s, token, kRuntimeAudience);
        if (!c.ok()) return unauthorized(c.status());
        auto body = parse_json_object_with(req.body, {"session_id", "billing_type"}, /*allow_empty=*/true);
        if (!body.ok()) return http::Response::from_status(body.status());
        auto session_id = get_string(*body, "session_id");
        auto billing_type = get_string(*body, "billing_type");
        for (const Status& st : {session_id.status(), billing_type.status()}) {
          if (!st.ok()) return http::Response::from_status(st);
        }
        if (billing_type->has_value()) {
          if (!session_id->has_value() || (*session_id)->empty() || (*session_id)->size() > 128) {
            return http::Response::from_status(
                Status::Invalid("Field 'session_id' (1-128 characters) is required with 'billing_type'"));
          }
          Status st = s.self_hosted->heartbeat(c->subject, **session_id, **billing_type);
          if (!st.ok()) return billing_refusal_response(st);
        } else if (session_id->has_value()) {
          auto room = s.rooms->find_session(**session_id);
          if (!room || room->settings().account_id != c->subject) {
            return http::Response::from_status(Status::NotFound("No active session " + **session_id));
          }
          room->renewed();
        } else {
          // Renews every session of the account on this node (SDKs without a session id).
          for (auto& room : s.rooms->list(c->subject)) room->renewed();
        }
        MintedToken t = mint_runtime_token(s, c->subject, c->api_key_id);
        return success({{"token", t.token}, {"expires_at", t.expires_at}});
      },
      token_auth);

  // POST /v1/embed-tokens/request {agent_id, fingerprint, billing_type?, origin?}: a 1-hour token
  // for one agent's rooms, which starts only the session type its owner chose (the avatar session
  // unless billing_type says voice_chat or camera_chat): the holder cannot pick a dearer rate.
  // With `origin`, only that site's pages may use it (docs/embed.md, "Keeping it to your site").
  router.add("POST", "/v1/embed-tokens/request", [&s](http::Request& req) {
    auto body = parse_json_object_with(req.body, {"agent_id", "fingerprint", "billing_type", "origin"});
    if (!body.ok()) return http::Response::from_status(body.status());
    auto agent_id = get_string(*body, "agent_id");
    auto fingerprint = get_string(*body, "fingerprint");
    auto billing_type = get_string(*body, "billing_type");
    auto origin_field = get_string(*body, "origin");
    for (const Status& st :
         {agent_id.status(), fingerprint.status(), billing_type.status(), origin_field.status()}) {
      if (!st.ok()) return http::Response::from_status(st);
    }
    std::optional<std::string> mode;
    if (billing_type->has_value()) {
      const std::string& bt = **billing_type;
      if (bt == "voice_chat" || bt == "camera_chat") {
        mode = bt;
      } else if (bt != "essence_cloud" && bt != "expression_cloud") {
        return http::Response::from_status(Status::Invalid(
            "Field 'billing_type' must be essence_cloud or expression_cloud (the avatar session), "
            "voice_chat or camera_chat"));
      }
    }
    if (!agent_id->has_value() || (*agent_id)->empty()) {
      return http::Response::from_status(Status::Invalid("Field 'agent_id' is required"));
    }
    if (!fingerprint->has_value() || (*fingerprint)->empty() || (*fingerprint)->size() > 128) {
      return http::Response::from_status(
          Status::Invalid("Field 'fingerprint' is required (1-128 characters)"));
    }
    std::optional<std::string> origin;
    if (origin_field->has_value()) {
      auto o = normalize_embed_origin(**origin_field);
      if (!o.ok()) return http::Response::from_status(o.status());
      origin = std::move(o).value();
    }
    const Principal& p = *req.principal;
    auto a = s.agent_service->get(p.account_id, **agent_id);
    if (!a.ok()) return http::Response::from_status(a.status());
    const std::string sid = "emb_" + random_base62(20);
    MintedToken t = mint_embed_token(s, p.account_id, minter_of(p), a->code, sid, mode, origin);
    return success({{"token", t.token}, {"sid", sid}});
  });

  // Operator: rotate the token signing key. The previous key keeps verifying (until the next
  // rotation), so tokens in flight stay valid for their short lifetime.
  const http::RouteOptions admin{.auth = http::AuthMode::kAdmin, .tier = Tier::kExempt};
  router.add(
      "POST", "/admin/v1/runtime-token-keys/rotate",
      [&s](http::Request&) {
        Status st = s.token_keys->rotate();
        if (!st.ok()) return http::Response::from_status(st);
        return http::Response::json(200, {{"rotated", true}, {"key_id", s.token_keys->current().id}});
      },
      admin);
}

}  // namespace imago::api

// Every HTTP route of imagod is registered from here, one function per resource file.
#pragma once
#include "core/services.h"
#include "http/router.h"

namespace imago::api {

void register_all_routes(http::Router& router, Services& services);

// Core platform.
void register_health_routes(http::Router& router, Services& services);
void register_account_routes(http::Router& router, Services& services);  // validate, me
void register_key_routes(http::Router& router, Services& services);
void register_credit_routes(http::Router& router, Services& services);  // credit summary, usage
void register_admin_routes(http::Router& router, Services& services);

// Speech.
void register_tts_routes(http::Router& router, Services& services);           // POST /v1/tts
void register_voice_routes(http::Router& router, Services& services);         // GET /v1/voices
void register_studio_routes(http::Router& router, Services& services);        // /v1/studio/*
void register_audio_speech_routes(http::Router& router, Services& services);  // POST /v1/audio/speech
void register_agent_studio_routes(http::Router& router, Services& services);  // pricing, face, knowledge

// Agents, dynamics, files, webhooks.
void register_agent_routes(http::Router& router, Services& services);     // /v1/agent*, /v1/agents
void register_dynamics_routes(http::Router& router, Services& services);  // /v1/dynamics*
void register_video_routes(http::Router& router, Services& services);     // /v1/video*
void register_file_routes(http::Router& router, Services& services);      // /v1/files*
void register_session_routes(http::Router& router, Services& services);   // /v1/sessions*
void register_webhook_routes(http::Router& router, Services& services);   // /v1/webhooks*

// Live sessions.
void register_runtime_token_routes(http::Router& router,
                                   Services& services);               // runtime/embed tokens, heartbeat
void register_live_routes(http::Router& router, Services& services);  // speak, add-context, rooms, /embed
void register_spend_cap_routes(http::Router& router, Services& services);  // /v1/spend-cap, admin twin
// Dashboard and CLI sign-in.
void register_dashboard_auth_routes(http::Router& router, Services& services);  // /dashboard/api/sign-in ...
void register_dashboard_device_routes(http::Router& router, Services& services);  // keys, /device approval
void register_cli_login_routes(http::Router& router, Services& services);         // /v1/cli/*
void register_member_admin_routes(http::Router& router,
                                  Services& services);                   // /admin/v1/accounts/{id}/members
void register_openapi_routes(http::Router& router, Services& services);  // /openapi.json, /docs/api
void register_dashboard_static_routes(http::Router& router, Services& services);  // web/dashboard/ at /

}  // namespace imago::api

#include "api/routes.h"

namespace imago::api {

void register_all_routes(http::Router& router, Services& services) {
  register_health_routes(router, services);
  register_account_routes(router, services);
  register_key_routes(router, services);
  register_credit_routes(router, services);
  register_admin_routes(router, services);
  register_agent_routes(router, services);
  register_dynamics_routes(router, services);
  register_video_routes(router, services);
  register_file_routes(router, services);
  register_webhook_routes(router, services);
  register_tts_routes(router, services);
  register_voice_routes(router, services);
  register_studio_routes(router, services);
  register_agent_studio_routes(router, services);
  register_audio_speech_routes(router, services);
  register_runtime_token_routes(router, services);
  register_live_routes(router, services);
  register_session_routes(router, services);
  register_spend_cap_routes(router, services);
  register_dashboard_auth_routes(router, services);
  register_dashboard_device_routes(router, services);
  register_cli_login_routes(router, services);
  register_member_admin_routes(router, services);
  register_openapi_routes(router, services);
  register_dashboard_static_routes(router, services);
}

}  // namespace imago::api

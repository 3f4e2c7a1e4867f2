#include "api/dashboard_common.h"

#include "auth/members.h"
#include "config/config.h"

namespace imago::api {

std::string session_cookie(const Services& s, const std::string& token, int64_t max_age_s) {
  std::string c = std::string(kSessionCookie) + "=" + token + "; Path=/; HttpOnly; SameSite=Lax; Max-Age=" +
                  std::to_string(std::max<int64_t>(0, max_age_s));
  if (s.config->public_url.rfind("https://", 0) == 0) c += "; Secure";
  return c;
}

bool origin_is_this_site(const Services& s, std::string_view origin, std::string_view host) {
  if (origin == s.config->public_url) return true;
  if (origin.starts_with("http://"))
    origin.remove_prefix(7);
  else if (origin.starts_with("https://"))
    origin.remove_prefix(8);
  else
    return false;
  return origin == host;
}

std::optional<http::Response> refuse_cross_site(const Services& s, const http::Request& req) {
  if (req.content_type() != "application/json") {
    return http::Response::error(415, "UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json");
  }
  auto origin = req.headers.get("Origin");
  if (!origin) return std::nullopt;
  if (!origin_is_this_site(s, *origin, req.headers.get("Host").value_or(""))) {
    return http::Response::error(403, "CSRF_FAILED", "Cross-site request refused");
  }
  return std::nullopt;
}

boost::json::object member_json(const Member& m) {
  return {{"id", m.id},
          {"email", m.email},
          {"account_id", m.account_id},
          {"created_at", m.created_at},
          {"password_changed_at", m.password_changed_at}};
}

}  // namespace imago::api

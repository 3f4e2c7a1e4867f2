// Small pieces shared by the dashboard's handlers (api/dashboard_*.cpp).
#pragma once
#include <boost/json/object.hpp>
#include <optional>
#include <string>

#include "core/services.h"
#include "http/message.h"
#include "store/member_store.h"

namespace imago::api {

// Set-Cookie for the session: HttpOnly, SameSite=Lax, Path=/, Secure when the public URL is https.
// An empty token with max_age 0 clears the cookie.
std::string session_cookie(const Services& s, const std::string& token, int64_t max_age_s);
// Sign-in and sign-up have no session yet, so no CSRF token: they accept only JSON (which a
// cross-site form cannot send without a CORS preflight we never answer) and refuse a foreign Origin.
// An Origin naming this server (its Host header or --public-url) is fine.
std::optional<http::Response> refuse_cross_site(const Services& s, const http::Request& req);
// True when a request's Origin header names this server (its public URL, or the Host it was sent to).
bool origin_is_this_site(const Services& s, std::string_view origin, std::string_view host);
// {id, email, account_id, created_at, password_changed_at}
boost::json::object member_json(const Member& m);

}  // namespace imago::api

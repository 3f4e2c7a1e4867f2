// The dashboard's own door: sign-in, sign-up (when the operator allows it), the current session,
// sign-out, sign-out everywhere and password changes. Everything else the dashboard does goes
// through the API's own handlers under /dashboard/api/v1/... (see http/pipeline.h).
#include "api/dashboard_common.h"
#include "api/routes.h"
#include "auth/first_run.h"
#include "auth/members.h"
#include "auth/password.h"
#include "auth/provisioning.h"
#include "store/member_store.h"
#include "util/json.h"
#include "util/strings.h"

namespace imago::api {

namespace {

boost::json::object session_json(const Member& m, const Account& a, const DashboardSession& s) {
  return {{"member", member_json(m)},
          {"account", {{"id", a.id}, {"name", a.name}, {"plan", plan_name(a.plan)}}},
          {"csrf_token", s.csrf_token},
          {"session", {{"id", s.id}, {"created_at", s.created_at}, {"expires_at", s.expires_at}}}};
}

http::Response signed_in(Services& s, const SignedIn& in, int status, boost::json::object extra = {}) {
  auto account = s.accounts->get_account(in.member.account_id);
  if (!account.ok()) return http::Response::from_status(account.status());
  boost::json::object data = session_json(in.member, *account, in.session);
  for (auto& kv : extra) data[kv.key()] = kv.value();
  http::Response r = http::Response::json(status, {{"success", true}, {"data", std::move(data)}});
  r.headers.add("Set-Cookie", session_cookie(s, in.token, in.session.expires_at - in.session.created_at));
  r.headers.set("Cache-Control", "no-store");
  return r;
}

// Ends a session the browser still presents, so signing in never keeps an old id alive.
void end_presented_session(Services& s, const http::Request& req) {
  auto c = req.headers.get("Cookie");
  if (!c) return;
  auto token = cookie_value(*c, kSessionCookie);
  if (!token) return;
  auto old = s.member_auth->session_of(*token);
  if (old.ok()) (void)s.members->revoke_session(old->id);
}

http::Response sign_in(Services& s, http::Request& req) {
  if (auto refused = refuse_cross_site(s, req)) return *refused;
  auto body = parse_json_object(req.body);
  if (!body.ok()) return http::Response::from_status(body.status());
  auto email = get_string(*body, "email");
  auto password = get_string(*body, "password");
  if (!email.ok()) return http::Response::from_status(email.status());
  if (!password.ok()) return http::Response::from_status(password.status());
  if (!email->has_value() || !password->has_value()) {
    return http::Response::error(400, "VALIDATION_ERROR", "Fields 'email' and 'password' are required");
  }
  int retry_after = 0;
  auto in = s.member_auth->sign_in(**email, **password, req.client_ip, &retry_after);
  if (!in.ok()) {
    if (in.status().code() == Code::kRateLimited) {
      http::Response r = http::Response::error(429, "RATE_LIMITED", in.status().message());
      r.headers.set("Retry-After", std::to_string(std::max(1, retry_after)));
      return r;
    }
    if (in.status().code() == Code::kUnauthenticated) {
      return http::Response::error(401, "UNAUTHORIZED", in.status().message());
    }
    return http::Response::from_status(in.status());
  }
  end_presented_session(s, req);
  return signed_in(s, *in, 200);
}

// The owner's one-time link (auth/first_run.h): {token, email, password} makes the account's
// first member and signs it in, like sign-in.
http::Response claim_first_run(Services& s, http::Request& req) {
  if (auto refused = refuse_cross_site(s, req)) return *refused;
  auto body = parse_json_object(req.body);
  if (!body.ok()) return http::Response::from_status(body.status());
  auto token = get_string(*body, "token");
  auto email = get_string(*body, "email");
  auto password = get_string(*body, "password");
  for (const auto* f : {&token, &email, &password}) {
    if (!f->ok()) return http::Response::from_status(f->status());
  }
  if (!token->has_value() || !email->has_value() || !password->has_value()) {
    return http::Response::error(400, "VALIDATION_ERROR",
                                 "Fields 'token', 'email' and 'password' are required");
  }
  auto in = s.first_run->claim(**token, **email, **password, req.client_ip);
  if (!in.ok()) {
    if (in.status().code() == Code::kUnauthenticated) {
      return http::Response::error(401, "UNAUTHORIZED", in.status().message());
    }
    return http::Response::from_status(in.status());
  }
  end_presented_session(s, req);
  return signed_in(s, *in, 201);
}

// Where a form sign-in may send the browser: a dashboard path of plain characters ("/keys",
// "/agent?code=ab12"), never another origin. Anything else goes to "/". The script-driven page
// checks `next` in the browser (js/next-path.js); this is the server's own, stricter rule.
std::string local_next_path(std::string_view next) {
  auto plain = [](std::string_view v, std::string_view extra) {
    for (char c : v) {
      const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (!alnum && extra.find(c) == std::string_view::npos) return false;
    }
    return true;
  };
  std::string_view path = next, query;
  if (auto q = next.find('?'); q != std::string_view::npos) {
    path = next.substr(0, q);
    query = next.substr(q + 1);
  }
  if (path.size() < 1 || path.size() > 200 || path[0] != '/' || path.starts_with("//")) return "/";
  if (!plain(path, "/_-") || !plain(query, "=&_-.")) return "/";
  return std::string(next);
}

// The sign-in form without its script (or submitted before the script ran): a browser POST of
// application/x-www-form-urlencoded to /sign-in. The password travels in the body, never in a URL.
// The answer is for a browser: 303 to the dashboard with the session cookie, or a short page that
// says what went wrong. A form needs an Origin naming this server (browsers send one on every
// form POST), so another site cannot sign a visitor in to an account of its choosing.
http::Response html_page(int status, std::string_view title, std::string_view text) {
  std::string body =
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>Imago</title><link rel=\"stylesheet\" href=\"/app.css\"></head><body>"
      "<main id=\"main\" class=\"narrow\"><section class=\"card\"><h1>";
  body += title;  // fixed texts only: nothing the client sent is echoed
  body += "</h1><p class=\"msg error\" role=\"alert\">";
  body += text;
  body +=
      "</p><p><a class=\"button\" href=\"/sign-in\">Back to sign-in</a></p></section></main></body></html>";
  http::Response r = http::Response::bytes(status, "text/html; charset=utf-8", std::move(body));
  r.headers.set("Cache-Control", "no-store");
  r.headers.set("Content-Security-Policy", "default-src 'none'; style-src 'self'; frame-ancestors 'none'");
  r.headers.set("X-Frame-Options", "DENY");
  return r;
}

http::Response sign_in_form(Services& s, http::Request& req) {
  if (req.content_type() != "application/x-www-form-urlencoded") {
    return html_page(415, "Sign-in failed", "The sign-in form must be sent as a form.");
  }
  auto origin = req.headers.get("Origin");
  if (!origin || !origin_is_this_site(s, *origin, req.headers.get("Host").value_or(""))) {
    return html_page(403, "Sign-in refused", "This sign-in did not come from this server's own page.");
  }
  auto form = parse_form_urlencoded(req.body);
  if (!form || !form->contains("email") || !form->contains("password") || form->at("email").empty() ||
      form->at("password").empty()) {
    return html_page(400, "Sign-in failed", "Enter your email and password.");
  }
  int retry_after = 0;
  auto in = s.member_auth->sign_in(form->at("email"), form->at("password"), req.client_ip, &retry_after);
  if (!in.ok()) {
    if (in.status().code() == Code::kRateLimited) {
      http::Response r =
          html_page(429, "Too many attempts", "Too many sign-in attempts. Wait a minute, then try again.");
      r.headers.set("Retry-After", std::to_string(std::max(1, retry_after)));
      return r;
    }
    if (in.status().code() == Code::kUnauthenticated) {
      return html_page(401, "Sign-in failed", "Wrong email or password.");
    }
    return html_page(500, "Sign-in failed", "The server could not sign you in. Try again.");
  }
  end_presented_session(s, req);
  const auto next = form->find("next");
  http::Response r = http::Response::bytes(303, "text/plain; charset=utf-8", "");
  r.headers.set("Location", local_next_path(next == form->end() ? "/" : next->second));
  r.headers.add("Set-Cookie", session_cookie(s, in->token, in->session.expires_at - in->session.created_at));
  r.headers.set("Cache-Control", "no-store");
  return r;
}

http::Response sign_up(Services& s, http::Request& req) {
  if (!s.config->allow_signup) {
    return http::Response::error(403, "SIGNUP_DISABLED",
                                 "Self sign-up is off on this server; ask the operator for an account");
  }
  if (auto refused = refuse_cross_site(s, req)) return *refused;
  auto body = parse_json_object(req.body);
  if (!body.ok()) return http::Response::from_status(body.status());
  auto email = get_string(*body, "email");
  auto password = get_string(*body, "password");
  auto name = get_string(*body, "account_name");
  for (const auto* f : {&email, &password, &name}) {
    if (!f->ok()) return http::Response::from_status(f->status());
  }
  if (!email->has_value() || !password->has_value()) {
    return http::Response::error(400, "VALIDATION_ERROR", "Fields 'email' and 'password' are required");
  }
  const std::string account_name = name->value_or("");
  if (name->has_value() && account_name.empty()) {
    return http::Response::error(400, "VALIDATION_ERROR", "Field 'account_name' must be 1 to 100 characters");
  }
  // The same answer whether or not the email already has an account (no session, no key): the
  // page goes on to sign in with the same email and password.
  if (Status st = s.member_auth->sign_up(**email, **password, account_name); !st.ok()) {
    return http::Response::from_status(st);
  }
  http::Response r = http::Response::json(
      202, {{"success", true},
            {"data",
             {{"status", "accepted"},
              {"next", "sign_in"},
              {"message",
               "Sign-up received. Sign in with this email and password; if the email already had an "
               "account, its owner signs in with that account's password."}}}});
  r.headers.set("Cache-Control", "no-store");
  return r;
}

}  // namespace

void register_dashboard_auth_routes(http::Router& router, Services& s) {
  const http::RouteOptions open{
      .auth = http::AuthMode::kNone, .body_limit = 16 * 1024, .anon_ip_limited = true};
  const http::RouteOptions member{.auth = http::AuthMode::kSession, .body_limit = 16 * 1024};

  router.add(
      "POST", "/dashboard/api/sign-in", [&s](http::Request& req) { return sign_in(s, req); }, open);
  router.add(
      "POST", "/dashboard/api/first-run", [&s](http::Request& req) { return claim_first_run(s, req); }, open);
  router.add(
      "POST", "/sign-in", [&s](http::Request& req) { return sign_in_form(s, req); }, open);
  router.add(
      "POST", "/dashboard/api/sign-up", [&s](http::Request& req) { return sign_up(s, req); }, open);
  router.add("GET", "/dashboard/api/config",
             [&s](http::Request&) {
               return http::Response::json(
                   200, {{"success", true}, {"data", {{"allow_signup", s.config->allow_signup}}}});
             },
             {.auth = http::AuthMode::kNone, .anon_ip_limited = true});

  router.add(
      "GET", "/dashboard/api/session",
      [&s](http::Request& req) {
        const Principal& p = *req.principal;
        auto m = s.members->get_member(p.member_id);
        if (!m.ok()) return http::Response::from_status(m.status());
        auto a = s.accounts->get_account(p.account_id);
        if (!a.ok()) return http::Response::from_status(a.status());
        auto token = cookie_value(req.headers.get("Cookie").value_or(""), kSessionCookie);
        auto ses = s.member_auth->session_of(token.value_or(""));
        if (!ses.ok()) return http::Response::from_status(ses.status());
        http::Response r =
            http::Response::json(200, {{"success", true}, {"data", session_json(m->member, *a, *ses)}});
        r.headers.set("Cache-Control", "no-store");
        return r;
      },
      member);

  router.add(
      "POST", "/dashboard/api/sign-out",
      [&s](http::Request& req) {
        if (Status st = s.member_auth->sign_out(*req.principal); !st.ok())
          return http::Response::from_status(st);
        http::Response r = http::Response::json(200, {{"success", true}, {"signed_out", true}});
        r.headers.add("Set-Cookie", session_cookie(s, "", 0));
        return r;
      },
      member);

  router.add(
      "POST", "/dashboard/api/sign-out-everywhere",
      [&s](http::Request& req) {
        auto n = s.member_auth->sign_out_everywhere(*req.principal);
        if (!n.ok()) return http::Response::from_status(n.status());
        http::Response r = http::Response::json(200, {{"success", true}, {"sessions_ended", *n}});
        r.headers.add("Set-Cookie", session_cookie(s, "", 0));
        return r;
      },
      member);

  router.add(
      "POST", "/dashboard/api/password",
      [&s](http::Request& req) {
        auto body = parse_json_object(req.body);
        if (!body.ok()) return http::Response::from_status(body.status());
        auto current = get_string(*body, "current_password");
        auto next = get_string(*body, "new_password");
        if (!current.ok()) return http::Response::from_status(current.status());
        if (!next.ok()) return http::Response::from_status(next.status());
        if (!current->has_value() || !next->has_value()) {
          return http::Response::error(400, "VALIDATION_ERROR",
                                       "Fields 'current_password' and 'new_password' are required");
        }
        int retry_after = 0;
        Status st =
            s.member_auth->change_password(*req.principal, **current, **next, req.client_ip, &retry_after);
        if (st.code() == Code::kRateLimited) {
          http::Response r = http::Response::error(429, "RATE_LIMITED", st.message());
          r.headers.set("Retry-After", std::to_string(std::max(1, retry_after)));
          return r;
        }
        if (st.code() == Code::kForbidden) return http::Response::error(403, "WRONG_PASSWORD", st.message());
        if (!st.ok()) return http::Response::from_status(st);
        return http::Response::json(200, {{"success", true}, {"password_changed", true}});
      },
      member);

  router.add(
      "GET", "/dashboard/api/members",
      [&s](http::Request& req) {
        auto list = s.members->list_members(req.principal->account_id);
        if (!list.ok()) return http::Response::from_status(list.status());
        boost::json::array arr;
        for (const auto& m : *list) arr.push_back(member_json(m));
        return http::Response::json(200, {{"success", true}, {"data", std::move(arr)}});
      },
      member);
}

}  // namespace imago::api

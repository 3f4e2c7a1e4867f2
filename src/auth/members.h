// Dashboard sign-in for members: password check, server-side sessions behind a cookie, CSRF tokens,
// throttling of failed sign-ins, password changes. No HTTP here: api/dashboard_auth.cpp renders it
// and http/pipeline.cpp calls authenticate() for routes reached with a session.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "auth/principal.h"
#include "limits/rate_limiter.h"
#include "store/account_store.h"
#include "store/member_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {

inline constexpr const char* kSessionCookie = "imago_session";

struct SignInLimits {
  int per_ip = 10;                 // failed sign-ins per client IP ...
  int per_ip_window_s = 60;        // ... per minute
  int per_account = 5;             // failed sign-ins per email ...
  int per_account_window_s = 900;  // ... per 15 minutes
};

struct SessionLifetime {
  int64_t idle_s = 12 * 3600;          // unused this long: signed out
  int64_t absolute_s = 7 * 24 * 3600;  // whatever happens: signed out this long after sign-in
};

struct SignedIn {
  Member member;
  DashboardSession session;
  std::string token;  // the cookie value; shown to the browser only
};

// The value of one cookie in a Cookie header, if present.
std::optional<std::string> cookie_value(std::string_view cookie_header, std::string_view name);
// Lower-cased, trimmed email; kInvalidArgument unless it looks like local@domain.
Result<std::string> normalize_email(std::string_view email);

class MemberAuth {
 public:
  MemberAuth(MemberStore& members, AccountStore& accounts, WindowCounter& windows, Clock& clock,
             SignInLimits limits = {}, SessionLifetime lifetime = {})
      : members_(members),
        accounts_(accounts),
        windows_(windows),
        clock_(clock),
        limits_(limits),
        lifetime_(lifetime) {}

  Result<Member> create_member(const std::string& account_id, std::string_view email,
                               std::string_view password);

  // Self sign-up that does not tell whether an email already has an account (docs/dashboard.md,
  // "Sign-up"). A new email gets an account `account_name` (Free plan, no credits, no API key yet)
  // with this member; a taken one gets nothing but a notice in the log (`signup_email_taken`,
  // naming the member, never the email or password). Both do the same work (one argon2 hash) and
  // return Ok, so the caller's next step is the same: sign in. kInvalidArgument for a malformed
  // email, a weak password or a bad account name, checked before anything else.
  Status sign_up(std::string_view email, std::string_view password, std::string_view account_name);

  // A fresh session (new id and token every time: no fixation). kUnauthenticated for a wrong email
  // or password (one message for both), kRateLimited with *retry_after_s once throttled.
  Result<SignedIn> sign_in(std::string_view email, std::string_view password, const std::string& client_ip,
                           int* retry_after_s);

  // The caller behind a session token. State-changing methods must carry the session's CSRF token
  // (kForbidden otherwise). kUnauthenticated for unknown, revoked or expired sessions.
  Result<Principal> authenticate(std::string_view token, std::string_view method,
                                 std::string_view csrf_header);

  // kForbidden for a wrong current password. Wrong current passwords count into the same per-IP and
  // per-account throttle as failed sign-ins (a stolen session must not become a password oracle),
  // and a throttled change is kRateLimited with *retry_after_s, even with the right password.
  Status change_password(const Principal& who, std::string_view current, std::string_view replacement,
                         const std::string& client_ip, int* retry_after_s);
  Status sign_out(const Principal& who);
  Result<int> sign_out_everywhere(const Principal& who);

  Result<DashboardSession> session_of(std::string_view token);

 private:
  // The failed-password throttle shared by sign-in and password change, keyed by client IP and by
  // the (normalized) email. Every attempt is counted before its password is checked (kRateLimited
  // with *retry_after_s past the limit); a right password gives its count back.
  std::optional<Status> count_attempt(const std::string& client_ip, const std::string& email,
                                      int* retry_after_s);
  void release_attempt(const std::string& client_ip, const std::string& email);

  MemberStore& members_;
  AccountStore& accounts_;
  WindowCounter& windows_;
  Clock& clock_;
  SignInLimits limits_;
  SessionLifetime lifetime_;
};

}  // namespace imago

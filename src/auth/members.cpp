#include "auth/members.h"

#include "auth/password.h"
#include "auth/provisioning.h"
#include "util/crypto.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago {

std::optional<std::string> cookie_value(std::string_view header, std::string_view name) {
  for (auto part : split(header, ';')) {
    std::string_view p = trim(part);
    auto eq = p.find('=');
    if (eq == std::string_view::npos) continue;
    if (trim(p.substr(0, eq)) == name) return std::string(trim(p.substr(eq + 1)));
  }
  return std::nullopt;
}

Result<std::string> normalize_email(std::string_view email) {
  std::string e(trim(email));
  for (char& c : e) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  auto at = e.find('@');
  bool ok = !e.empty() && e.size() <= 254 && at != std::string::npos && at > 0 && at + 1 < e.size() &&
            e.find('@', at + 1) == std::string::npos;
  for (unsigned char c : e) {
    if (c <= 0x20 || c == 0x7f) ok = false;
  }
  if (!ok) return Status::Invalid("Field 'email' must be an email address");
  return e;
}

Result<Member> MemberAuth::create_member(const std::string& account_id, std::string_view email,
                                         std::string_view password) {
  auto e = normalize_email(email);
  if (!e.ok()) return e.status();
  if (Status st = check_new_password(password); !st.ok()) return st;
  auto hash = hash_password(password);
  if (!hash.ok()) return hash.status();
  return members_.create_member(account_id, *e, *hash);
}

Status MemberAuth::sign_up(std::string_view email, std::string_view password, std::string_view account_name) {
  auto e = normalize_email(email);
  if (!e.ok()) return e.status();
  const std::string name = account_name.empty() ? *e : std::string(account_name);
  if (name.size() > 100) return Status::Invalid("Field 'account_name' must be 1 to 100 characters");
  if (Status st = check_new_password(password); !st.ok()) return st;
  auto taken = [&](const MemberWithHash& m) {
    // What a mail would tell the owner elsewhere; the operator's log is this server's channel.
    log::info("signup_email_taken", {{"member", m.member.id}, {"account", m.member.account_id}});
    return Status::Ok();
  };
  if (auto existing = members_.find_member_by_email(*e); existing.ok()) {
    (void)hash_password(password);  // the same argon2 work as a new member's hash
    return taken(*existing);
  } else if (existing.status().code() != Code::kNotFound) {
    return existing.status();
  }
  auto created = create_account_with_key(accounts_, name, Plan::kFree, 0);
  if (!created.ok()) return created.status();
  // The first key's secret cannot be shown here (the answer is the same for a taken email), so
  // the account starts without a key: the member makes one on the Keys page.
  if (Status st = accounts_.revoke_key(created->account.id, created->first_key.key.id); !st.ok()) return st;
  auto m = create_member(created->account.id, *e, password);
  if (m.ok()) {
    log::info("signup_account_created", {{"member", m->id}, {"account", m->account_id}});
    return Status::Ok();
  }
  if (m.status().code() != Code::kConflict) return m.status();
  // A concurrent sign-up took the email first: the same answer as for any taken email.
  auto winner = members_.find_member_by_email(*e);
  return winner.ok() ? taken(*winner) : winner.status();
}

std::optional<Status> MemberAuth::count_attempt(const std::string& client_ip, const std::string& email,
                                                int* retry_after_s) {
  // The per-IP window first: an address already throttled does not also spend the email's budget.
  auto ip = windows_.hit("signin-ip:" + client_ip, limits_.per_ip, limits_.per_ip_window_s);
  WindowDecision acct;
  if (!ip.blocked) {
    acct = windows_.hit("signin-email:" + email, limits_.per_account, limits_.per_account_window_s);
  }
  if (!ip.blocked && !acct.blocked) return std::nullopt;
  *retry_after_s = std::max(ip.blocked ? ip.retry_after_s : 0, acct.blocked ? acct.retry_after_s : 0);
  return Status(Code::kRateLimited,
                "Too many failed sign-ins; retry after " + std::to_string(*retry_after_s) + " seconds");
}

void MemberAuth::release_attempt(const std::string& client_ip, const std::string& email) {
  windows_.release("signin-ip:" + client_ip, limits_.per_ip_window_s);
  windows_.release("signin-email:" + email, limits_.per_account_window_s);
}

Result<SignedIn> MemberAuth::sign_in(std::string_view email, std::string_view password,
                                     const std::string& client_ip, int* retry_after_s) {
  const Status wrong(Code::kUnauthenticated, "Wrong email or password");
  auto e = normalize_email(email);
  const std::string email_key = e.ok() ? *e : std::string(email);
  // The attempt is counted before the password is checked, in one atomic step per window, so any
  // number of concurrent guesses runs at most the limit's argon2 verifications; a right password
  // takes its count back below.
  if (auto t = count_attempt(client_ip, email_key, retry_after_s)) return *t;
  if (!e.ok() || password.empty() || password.size() > 1024) return wrong;
  auto m = members_.find_member_by_email(*e);
  if (!m.ok()) {
    if (m.status().code() != Code::kNotFound) return m.status();
    verify_password_decoy(password);
    return wrong;
  }
  if (!verify_password(password, m->password_hash)) return wrong;
  release_attempt(client_ip, email_key);

  const int64_t now = clock_.now_s();
  SignedIn out;
  out.member = m->member;
  out.token = random_base62(43);  // 256 bits
  out.session.id = new_id("ses");
  out.session.member_id = m->member.id;
  out.session.account_id = m->member.account_id;
  out.session.csrf_token = random_base62(32);
  out.session.created_at = out.session.last_seen_at = now;
  out.session.expires_at = now + std::min(lifetime_.idle_s, lifetime_.absolute_s);
  if (Status st = members_.create_session(out.session, sha256_hex(out.token)); !st.ok()) return st;
  return out;
}

Result<DashboardSession> MemberAuth::session_of(std::string_view token) {
  if (token.empty() || token.size() > 128) return Status(Code::kUnauthenticated, "Not signed in");
  auto s = members_.find_session(sha256_hex(token), clock_.now_s());
  if (!s.ok()) {
    if (s.status().code() == Code::kNotFound)
      return Status(Code::kUnauthenticated, "The session has ended; sign in again");
    return s.status();
  }
  return s;
}

Result<Principal> MemberAuth::authenticate(std::string_view token, std::string_view method,
                                           std::string_view csrf_header) {
  auto s = session_of(token);
  if (!s.ok()) return s.status();
  const bool safe = method == "GET" || method == "HEAD" || method == "OPTIONS";
  if (!safe && !constant_time_equal(csrf_header, s->csrf_token)) {
    return Status(Code::kForbidden, "Missing or wrong X-CSRF-Token header");
  }
  auto account = accounts_.get_account(s->account_id);
  if (!account.ok()) return account.status();
  const int64_t now = clock_.now_s();
  if (now - s->last_seen_at >= 60) {  // sliding expiry, written at most once a minute
    const int64_t expires = std::min(now + lifetime_.idle_s, s->created_at + lifetime_.absolute_s);
    (void)members_.touch_session(s->id, now, expires);
  }
  Principal p;
  p.account_id = account->id;
  p.account_name = account->name;
  p.plan = account->plan;
  p.custom_limits = account->custom_limits;
  p.member_id = s->member_id;
  p.session_id = s->id;
  return p;
}

Status MemberAuth::change_password(const Principal& who, std::string_view current,
                                   std::string_view replacement, const std::string& client_ip,
                                   int* retry_after_s) {
  auto m = members_.get_member(who.member_id);
  if (!m.ok()) return m.status();
  if (auto t = count_attempt(client_ip, m->member.email, retry_after_s)) return *t;
  if (current.size() > 1024 || !verify_password(current, m->password_hash)) {
    return Status(Code::kForbidden, "The current password is wrong");
  }
  release_attempt(client_ip, m->member.email);
  if (Status st = check_new_password(replacement); !st.ok()) return st;
  auto hash = hash_password(replacement);
  if (!hash.ok()) return hash.status();
  // Every other session ends: whoever knew the old password is out.
  return members_.set_password(who.member_id, *hash, who.session_id);
}

Status MemberAuth::sign_out(const Principal& who) {
  return members_.revoke_session(who.session_id);
}

Result<int> MemberAuth::sign_out_everywhere(const Principal& who) {
  return members_.revoke_member_sessions(who.member_id, std::nullopt);
}

}  // namespace imago

#include "auth/device_login.h"

#include "util/base64.h"
#include "util/crypto.h"
#include "util/random.h"

namespace imago {

namespace {

// RFC 8628 6.1: consonants only (no vowels, so no words), no look-alikes.
constexpr std::string_view kUserCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ";

TokenOutcome error(std::string code, std::string description) {
  TokenOutcome t;
  t.error = std::move(code);
  t.description = std::move(description);
  return t;
}

}  // namespace

std::string normalize_user_code(std::string_view typed) {
  std::string out;
  for (char c : typed) {
    if (c == '-' || c == ' ') continue;
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    out += c;
  }
  return out;
}

Status check_hostname(std::string_view h) {
  if (h.empty() || h.size() > 63) return Status::Invalid("Field 'hostname' must be 1 to 63 characters");
  for (char c : h) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '-' || c == '_';
    if (!ok) return Status::Invalid("Field 'hostname' may contain only letters, digits, '.', '-' and '_'");
  }
  return Status::Ok();
}

Result<DeviceAuthorization> DeviceLogin::start_device(std::string_view hostname) {
  if (Status st = check_hostname(hostname); !st.ok()) return st;
  const int64_t now = clock_.now_s();
  for (int attempt = 0; attempt < 8; ++attempt) {
    DeviceGrant g;
    g.id = new_id("dgr");
    g.kind = GrantKind::kDevice;
    g.hostname = std::string(hostname);
    for (int i = 0; i < 8; ++i) g.user_code += kUserCodeAlphabet[random_below(kUserCodeAlphabet.size())];
    g.created_at = now;
    g.expires_at = now + options_.device_code_ttl_s;
    g.interval_s = options_.interval_s;
    const std::string device_code = random_base62(43);
    Status st = grants_.create_grant(g, sha256_hex(device_code));
    if (st.code() == Code::kConflict) continue;  // user code collision: draw again
    if (!st.ok()) return st;
    return DeviceAuthorization{device_code, g.user_code.substr(0, 4) + "-" + g.user_code.substr(4),
                               options_.device_code_ttl_s, options_.interval_s};
  }
  return Status::Unavailable("Could not allocate a user code; retry");
}

TokenOutcome DeviceLogin::poll_device(std::string_view device_code) {
  if (device_code.empty() || device_code.size() > 128) return error("invalid_grant", "Unknown device_code");
  auto g = grants_.find_by_secret(sha256_hex(device_code));
  if (!g.ok() || g->kind != GrantKind::kDevice) {
    if (!g.ok() && g.status().code() != Code::kNotFound) return error("server_error", "Try again");
    return error("invalid_grant", "Unknown device_code");
  }
  const int64_t now = clock_.now_s();
  if (g->state == GrantState::kConsumed) return error("invalid_grant", "This device_code was already used");
  if (now >= g->expires_at) return error("expired_token", "The device_code expired; start the sign-in again");
  if (g->state == GrantState::kDenied) return error("access_denied", "The sign-in was denied in the browser");
  // RFC 8628 3.5: polling faster than the interval earns slow_down and 5 more seconds.
  if (g->last_poll_at > 0 && now - g->last_poll_at < g->interval_s) {
    const int interval = g->interval_s + 5;
    (void)grants_.record_poll(g->id, now, interval);
    TokenOutcome t = error("slow_down", "Polling too fast; wait " + std::to_string(interval) + " seconds");
    t.interval = interval;
    return t;
  }
  (void)grants_.record_poll(g->id, now, g->interval_s);
  if (g->state == GrantState::kPending) {
    return error("authorization_pending", "Waiting for the code to be entered at /device");
  }
  return issue(*g);
}

Result<std::string> DeviceLogin::decide_user_code(std::string_view user_code, bool approve,
                                                  const std::string& account_id,
                                                  const std::string& member_id) {
  const std::string code = normalize_user_code(user_code);
  if (code.size() != 8) return Status::Invalid("Field 'user_code' must be 8 letters, as shown by the CLI");
  auto g = grants_.find_pending_by_user_code(code, clock_.now_s());
  if (!g.ok()) return g.status();
  if (Status st = grants_.decide(g->id, approve, account_id, member_id); !st.ok()) return st;
  return g->hostname;
}

Result<std::string> DeviceLogin::start_browser(std::string_view challenge, std::string_view hostname,
                                               const std::string& account_id, const std::string& member_id) {
  if (Status st = check_hostname(hostname); !st.ok()) return st;
  // base64url of 32 bytes without padding.
  auto raw = challenge.size() == 43 ? base64_decode(challenge) : std::nullopt;
  if (!raw || raw->size() != 32) {
    return Status::Invalid("Field 'challenge' must be base64url(SHA-256(verifier)), 43 characters");
  }
  const int64_t now = clock_.now_s();
  DeviceGrant g;
  g.id = new_id("dgr");
  g.kind = GrantKind::kBrowser;
  g.hostname = std::string(hostname);
  g.challenge = std::string(challenge);
  g.state = GrantState::kPending;
  g.created_at = now;
  g.expires_at = now + options_.browser_code_ttl_s;
  g.interval_s = 0;
  const std::string code = random_base62(43);
  if (Status st = grants_.create_grant(g, sha256_hex(code)); !st.ok()) return st;
  if (Status st = grants_.decide(g.id, true, account_id, member_id); !st.ok()) return st;
  return code;
}

TokenOutcome DeviceLogin::redeem_browser(std::string_view code, std::string_view verifier) {
  if (code.empty() || code.size() > 128) return error("invalid_grant", "Unknown code");
  if (verifier.size() < 43 || verifier.size() > 128) {
    return error("invalid_request", "Field 'code_verifier' must be 43 to 128 characters");
  }
  auto g = grants_.find_by_secret(sha256_hex(code));
  if (!g.ok() || g->kind != GrantKind::kBrowser) return error("invalid_grant", "Unknown code");
  if (g->state == GrantState::kConsumed) return error("invalid_grant", "This code was already used");
  if (clock_.now_s() >= g->expires_at) return error("expired_token", "The code expired; run the login again");
  if (!constant_time_equal(base64url_encode(sha256(verifier)), g->challenge)) {
    return error("invalid_grant", "The code_verifier does not match the challenge");
  }
  return issue(*g);
}

TokenOutcome DeviceLogin::issue(const DeviceGrant& g) {
  if (Status st = grants_.consume(g.id); !st.ok()) return error("invalid_grant", st.message());
  auto k = issue_key(accounts_, g.account_id, "cli@" + g.hostname);
  if (!k.ok()) return error("server_error", "Could not create the device key");
  (void)grants_.set_issued_key(g.id, k->key.id);
  TokenOutcome t;
  t.key = std::move(k).value();
  t.hostname = g.hostname;
  return t;
}

}  // namespace imago

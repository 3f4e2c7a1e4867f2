// How the `imago` CLI gets its per-device key (SPEC 5.5), both flows ending in a key aliased
// cli@<hostname>:
//  - browser: the CLI makes a verifier, sends only its SHA-256 (the challenge) through the browser;
//    a signed-in member approves, the browser hands a one-time code to the CLI's loopback callback,
//    and the CLI redeems code + verifier. The code alone is useless; the verifier never leaves the CLI.
//  - device (RFC 8628): the CLI gets a device_code and a short user_code, the person types the
//    user_code at /device in any signed-in browser, the CLI polls the token endpoint.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "auth/provisioning.h"
#include "store/account_store.h"
#include "store/device_grant_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {

struct DeviceAuthorization {  // RFC 8628 section 3.2
  std::string device_code;
  std::string user_code;
  int expires_in = 0;
  int interval = 0;
};

// The answer of a token request: a key, or an RFC 8628 / RFC 6749 error code
// (authorization_pending, slow_down, expired_token, access_denied, invalid_grant, invalid_request).
struct TokenOutcome {
  std::optional<IssuedKey> key;
  std::string hostname;
  std::string error;
  std::string description;
  int interval = 0;  // slow_down: the new interval
};

struct DeviceLoginOptions {
  int device_code_ttl_s = 600;
  int interval_s = 5;
  int browser_code_ttl_s = 120;
};

// Normalizes what a person typed ("wdjb mjht", "WDJB-MJHT") to the stored form "WDJBMJHT".
std::string normalize_user_code(std::string_view typed);
// Host names become part of the alias: 1-63 of [A-Za-z0-9._-].
Status check_hostname(std::string_view hostname);

class DeviceLogin {
 public:
  DeviceLogin(DeviceGrantStore& grants, AccountStore& accounts, Clock& clock, DeviceLoginOptions options = {})
      : grants_(grants), accounts_(accounts), clock_(clock), options_(options) {}

  Result<DeviceAuthorization> start_device(std::string_view hostname);
  TokenOutcome poll_device(std::string_view device_code);
  // A member's decision on a user code typed at /device. Returns the device's host name.
  Result<std::string> decide_user_code(std::string_view user_code, bool approve,
                                       const std::string& account_id, const std::string& member_id);

  // Approved at once by the signed-in member; returns the one-time code for the loopback callback.
  Result<std::string> start_browser(std::string_view challenge, std::string_view hostname,
                                    const std::string& account_id, const std::string& member_id);
  TokenOutcome redeem_browser(std::string_view code, std::string_view verifier);

 private:
  TokenOutcome issue(const DeviceGrant& g);
  DeviceGrantStore& grants_;
  AccountStore& accounts_;
  Clock& clock_;
  DeviceLoginOptions options_;
};

}  // namespace imago

// CLI sign-ins in flight: a device code (RFC 8628) that a member approves at /device, or a browser
// login code handed to the CLI's loopback callback and redeemed with its PKCE verifier. Either
// ends, once, in a per-device API key aliased cli@<hostname>. Secrets (device_code, login code)
// are stored only as SHA-256 hashes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace imago {

enum class GrantKind { kDevice, kBrowser };
enum class GrantState { kPending, kApproved, kDenied, kConsumed };

inline std::string_view grant_state_name(GrantState s) {
  switch (s) {
    case GrantState::kApproved:
      return "approved";
    case GrantState::kDenied:
      return "denied";
    case GrantState::kConsumed:
      return "consumed";
    case GrantState::kPending:
      break;
  }
  return "pending";
}

struct DeviceGrant {
  std::string id;  // "dgr_..."
  GrantKind kind = GrantKind::kDevice;
  std::string hostname;   // the CLI's host: the key becomes cli@<hostname>
  std::string user_code;  // device grants: "WDJB-MJHT", typed by the person
  std::string challenge;  // browser grants: base64url(SHA-256(verifier))
  GrantState state = GrantState::kPending;
  std::string account_id;  // set when approved
  std::string member_id;
  int64_t created_at = 0;
  int64_t expires_at = 0;
  int interval_s = 5;        // device grants: the polling interval the client must keep
  int64_t last_poll_at = 0;  // device grants
  std::string key_id;        // the key issued when consumed
};

class DeviceGrantStore {
 public:
  virtual ~DeviceGrantStore() = default;
  // kConflict when the user code is already in use by a live grant (callers pick another).
  virtual Status create_grant(const DeviceGrant& grant, const std::string& secret_hash) = 0;
  virtual Result<DeviceGrant> find_by_secret(const std::string& secret_hash) = 0;
  // A pending, unexpired device grant with this user code, else kNotFound.
  virtual Result<DeviceGrant> find_pending_by_user_code(const std::string& user_code, int64_t now) = 0;
  // pending -> approved/denied; kNotFound unless it is still pending.
  virtual Status decide(const std::string& grant_id, bool approve, const std::string& account_id,
                        const std::string& member_id) = 0;
  virtual Status record_poll(const std::string& grant_id, int64_t now, int interval_s) = 0;
  // approved -> consumed exactly once (kConflict for a second attempt).
  virtual Status consume(const std::string& grant_id) = 0;
  virtual Status set_issued_key(const std::string& grant_id, const std::string& key_id) = 0;
  // Ids of keys issued to devices for this account (the dashboard marks them).
  virtual Result<std::vector<std::string>> device_key_ids(const std::string& account_id) = 0;
};

}  // namespace imago

// People who sign in to the dashboard (members of an account) and their server-side sessions.
// Passwords arrive here already hashed (auth/password.h); session tokens only as SHA-256 hashes,
// so a copy of the database lets nobody sign in.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace imago {

struct Member {
  std::string id;  // "mem_..."
  std::string account_id;
  std::string email;  // stored lower case; unique across the service
  int64_t created_at = 0;
  int64_t password_changed_at = 0;
};

struct MemberWithHash {
  Member member;
  std::string password_hash;  // argon2id PHC string
};

struct DashboardSession {
  std::string id;  // "ses_..." (not the cookie value, which is never stored)
  std::string member_id;
  std::string account_id;
  std::string csrf_token;  // sent back on every state-changing request
  int64_t created_at = 0;
  int64_t last_seen_at = 0;
  int64_t expires_at = 0;
};

class MemberStore {
 public:
  virtual ~MemberStore() = default;

  // kConflict when the email is taken (by any account).
  virtual Result<Member> create_member(const std::string& account_id, const std::string& email,
                                       const std::string& password_hash) = 0;
  virtual Result<MemberWithHash> find_member_by_email(const std::string& email) = 0;
  virtual Result<MemberWithHash> get_member(const std::string& member_id) = 0;
  virtual Result<std::vector<Member>> list_members(const std::string& account_id) = 0;
  // Replaces the hash and ends every session of the member except `keep_session_id`.
  virtual Status set_password(const std::string& member_id, const std::string& password_hash,
                              const std::optional<std::string>& keep_session_id) = 0;

  virtual Status create_session(const DashboardSession& session, const std::string& token_hash) = 0;
  // The session with this token hash if it is neither revoked nor expired at `now`, else kNotFound.
  virtual Result<DashboardSession> find_session(const std::string& token_hash, int64_t now) = 0;
  // The same by session id ("ses_..."): what a live token minted through the session checks.
  virtual Result<DashboardSession> get_session(const std::string& session_id, int64_t now) = 0;
  // Records use and slides the expiry (callers coalesce: at most about once a minute).
  virtual Status touch_session(const std::string& session_id, int64_t now, int64_t expires_at) = 0;
  virtual Status revoke_session(const std::string& session_id) = 0;
  // Ends every session of the member except `keep_session_id`; returns how many ended.
  virtual Result<int> revoke_member_sessions(const std::string& member_id,
                                             const std::optional<std::string>& keep_session_id) = 0;
};

}  // namespace imago

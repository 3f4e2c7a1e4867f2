// Runtime and embed tokens at the API edge: minting from an authenticated api-secret, and
// verification that also checks the api key named in the token is still active (so revoking or
// rotating the api-secret stops its tokens on the next heartbeat, SPEC 5.9).
#pragma once
#include <string>
#include <string_view>

#include "auth/runtime_token.h"
#include "core/services.h"
#include "http/message.h"

namespace imago::api {

inline constexpr int64_t kEmbedTokenTtlS = 3600;

struct MintedToken {
  std::string token;
  std::string token_id;  // jti
  int64_t expires_at = 0;
};

MintedToken mint_runtime_token(Services& s, const std::string& account_id, const std::string& api_key_id);
// `billing_type`: the session type the token may start (voice_chat, camera_chat), or nullopt for
// the agent's avatar session only. `origin`: the one site whose pages may use it (normalized,
// auth/embed_origin.h), or nullopt for any.
MintedToken mint_embed_token(Services& s, const std::string& account_id, const std::string& api_key_id,
                             const std::string& agent_code, const std::string& sid,
                             const std::optional<std::string>& billing_type,
                             const std::optional<std::string>& origin = std::nullopt);

// Verifies signature and claims for `audience`, then that the minting api key is active and
// belongs to the token's subject. kUnauthenticated otherwise; kInternal when the database fails.
Result<TokenClaims> verify_live_token(Services& s, std::string_view token, std::string_view audience);
// Either audience: runtime tokens first, then embed tokens.
Result<TokenClaims> verify_any_live_token(Services& s, std::string_view token);

// "Authorization: Bearer <t>" -> t, or empty.
std::string bearer_token(const http::Request& req);

}  // namespace imago::api

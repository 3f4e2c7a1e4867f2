// Runtime and embed tokens (SPEC 2.6, 3.4, 5.8-5.12): JWTs signed with HS256 under a server key,
// following RFC 8725. The algorithm is pinned (anything but "HS256", including "none", is refused),
// `iss`, `aud` and `exp` are always checked, and the signing key (>= 256 bits) lives in a
// SecretStore with a verify-only previous key after a rotation (docs/live-protocol.md): the data
// directory on a single node, the database in cluster mode, so a token minted on one node verifies
// on every other and a rotation on one reaches all of them.
//
// Every token names, in its JOSE header, the key it was signed with (`kid`) and the api-secret
// that minted it (`akid`, the api key id), so a revoked or rotated api-secret is noticed on the
// next verification (the API layer looks the api key up on every use).
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "store/secret_store.h"
#include "util/clock.h"
#include "util/status.h"

namespace imago {

inline constexpr std::string_view kTokenIssuer = "imago";
inline constexpr std::string_view kRuntimeAudience = "imago-runtime";
inline constexpr std::string_view kEmbedAudience = "imago-embed";
inline constexpr size_t kMinSigningKeyBytes = 32;  // RFC 8725 3.5 / RFC 7518 3.2: >= 256 bits

struct SigningKey {
  std::string id;      // "rk_..." : the `kid` header
  std::string secret;  // raw bytes, at least kMinSigningKeyBytes
};

// The secret's name in the SecretStore (a file runtime-token-keys.json in the data directory).
inline constexpr const char* kTokenKeysSecret = "runtime-token-keys";
// With a shared store, how often a node re-reads the keys (another node may have rotated them),
// and how soon it re-reads them again when a token names a key it does not know.
inline constexpr int64_t kTokenKeysRefreshUs = 5'000'000;
inline constexpr int64_t kTokenKeysUnknownKidReloadUs = 200'000;

// The current signing key and, after a rotation, the previous one (verify only). Thread safe.
class TokenKeyring {
 public:
  // Loads the keys from `store`, creating them with a fresh random key when there are none (the
  // first of several nodes starting at once wins). `store` and `clock` outlive the keyring.
  static Result<std::unique_ptr<TokenKeyring>> open(SecretStore& store, const Clock& clock);
  // An in-memory keyring (tests); rotate() does not write anywhere.
  static std::unique_ptr<TokenKeyring> in_memory(SigningKey current);

  SigningKey current() const;
  // The key with this id: the current one or the previous one.
  std::optional<SigningKey> find(std::string_view kid) const;
  // The current key becomes the previous (verify-only) key; tokens signed with the key before
  // that stop verifying. Persists the change in the store (atomically against other nodes).
  Status rotate();

 private:
  TokenKeyring() = default;
  // Re-reads a shared store when the cache is older than kTokenKeysRefreshUs, or for a kid it
  // does not know, at most once per kTokenKeysUnknownKidReloadUs. The read happens outside the lock; on
  // failure the cached keys stay in use.
  void maybe_refresh(bool unknown_kid) const;
  mutable std::mutex mu_;
  SecretStore* store_ = nullptr;  // null: in memory
  const Clock* clock_ = nullptr;
  mutable SigningKey current_;
  mutable std::optional<SigningKey> previous_;
  mutable int64_t loaded_at_us_ = 0;  // clock_->monotonic_us() of the last (attempted) read
  mutable int64_t unknown_kid_read_us_ = std::numeric_limits<int64_t>::min() / 2;  // ... for an unknown kid
};

struct TokenClaims {
  // Header.
  std::string api_key_id;  // `akid`: the api key that minted the token (or its predecessor chain)
  // Registered claims.
  std::string subject;     // `sub`: the account (user) id
  std::string audience;    // `aud`: kRuntimeAudience or kEmbedAudience
  int64_t issued_at = 0;   // `iat`, Unix seconds
  int64_t expires_at = 0;  // `exp`, Unix seconds
  std::string token_id;    // `jti`
  // Embed tokens only: the one agent they may view, and the embed session id.
  std::optional<std::string> agent;
  std::optional<std::string> sid;
  // Embed tokens only: the session type the token may start, `voice_chat` or `camera_chat`
  // (claim `billing_type`); absent: only the agent's avatar session (docs/live-protocol.md).
  std::optional<std::string> billing_type;
  // Embed tokens only: the one web origin ("https://shop.example") whose pages may use the token
  // (claim `origin`); absent: any (docs/embed.md, "Keeping it to your site").
  std::optional<std::string> origin;
};

// Compact JWS (header.payload.signature), signed with `key`.
std::string sign_token(const SigningKey& key, const TokenClaims& claims);

// Verifies a compact JWS: exactly three base64url parts, header {"alg":"HS256"} with a known
// `kid`, a valid HMAC (constant-time compare), `iss` == "imago", `aud` == `audience`, `exp` in the
// future, `iat` not in the future (60 s of clock skew allowed), `sub`, `jti` and `akid` present.
// kUnauthenticated with a short reason otherwise.
Result<TokenClaims> verify_token(const TokenKeyring& keys, std::string_view token, std::string_view audience,
                                 int64_t now_s);

}  // namespace imago

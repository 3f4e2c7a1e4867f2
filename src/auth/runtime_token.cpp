#include "auth/runtime_token.h"

#include "util/base64.h"
#include "util/crypto.h"
#include "util/json.h"
#include "util/random.h"

namespace imago {

namespace {

Status unauthenticated(std::string why) {
  return {Code::kUnauthenticated, std::move(why)};
}

SigningKey fresh_key() {
  return {"rk_" + random_base62(16), random_bytes(kMinSigningKeyBytes)};
}

json::object key_json(const SigningKey& k) {
  return {{"id", k.id}, {"secret", base64url_encode(k.secret)}};
}

Result<SigningKey> key_from_json(const json::value& v) {
  if (!v.is_object()) return Status::Invalid("key entry is not an object");
  const auto& o = v.as_object();
  auto id = get_string(o, "id");
  auto secret = get_string(o, "secret");
  if (!id.ok() || !secret.ok() || !id->has_value() || !secret->has_value()) {
    return Status::Invalid("key entry needs string 'id' and 'secret'");
  }
  auto raw = base64_decode(**secret);
  if (!raw || raw->size() < kMinSigningKeyBytes) {
    return Status::Invalid("signing key '" + **id + "' is shorter than 256 bits");
  }
  return SigningKey{**id, *raw};
}

struct KeySet {
  SigningKey current;
  std::optional<SigningKey> previous;
};

// {"current": {...}, "previous": {...} | null}: the stored form (file or database row).
std::string keys_text(const KeySet& k) {
  json::object o{{"current", key_json(k.current)},
                 {"previous", k.previous ? json::value(key_json(*k.previous)) : json::value(nullptr)}};
  return json::serialize(o) + "\n";
}

Result<KeySet> parse_keys(const std::string& text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object() || !v.as_object().contains("current")) {
    return Status::Invalid("not a token key set (JSON with 'current')");
  }
  KeySet k;
  auto cur = key_from_json(v.as_object().at("current"));
  if (!cur.ok()) return cur.status();
  k.current = *cur;
  if (auto it = v.as_object().find("previous"); it != v.as_object().end() && !it->value().is_null()) {
    auto prev = key_from_json(it->value());
    if (!prev.ok()) return prev.status();
    k.previous = *prev;
  }
  return k;
}

// base64url without padding only (RFC 7515 2), in its one canonical spelling: anything else is a
// malformed token. The decoder ignores the unused low bits of the last character, so several
// strings decode to the same bytes; only the one that re-encodes to itself is accepted, so a token
// has exactly one valid form (no malleable signatures, no second spelling of a known token).
std::optional<std::string> b64url_part(std::string_view s) {
  if (s.empty()) return std::nullopt;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return std::nullopt;
  }
  auto raw = base64_decode(s);
  if (!raw || base64url_encode(*raw) != s) return std::nullopt;
  return raw;
}

std::optional<json::object> json_part(std::string_view s) {
  auto raw = b64url_part(s);
  if (!raw) return std::nullopt;
  boost::system::error_code ec;
  json::value v = json::parse(*raw, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return v.as_object();
}

std::optional<std::string> string_of(const json::object& o, std::string_view k) {
  auto it = o.find(k);
  if (it == o.end() || !it->value().is_string()) return std::nullopt;
  return std::string(it->value().as_string());
}

std::optional<int64_t> int_of(const json::object& o, std::string_view k) {
  auto it = o.find(k);
  if (it == o.end()) return std::nullopt;
  if (it->value().is_int64()) return it->value().as_int64();
  if (it->value().is_uint64() && it->value().as_uint64() < (1ull << 62)) {
    return static_cast<int64_t>(it->value().as_uint64());
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<TokenKeyring>> TokenKeyring::open(SecretStore& store, const Clock& clock) {
  std::unique_ptr<TokenKeyring> k(new TokenKeyring());
  k->store_ = &store;
  k->clock_ = &clock;
  auto text = store.get_or_create(kTokenKeysSecret, keys_text({fresh_key(), std::nullopt}));
  if (!text.ok()) return text.status();
  auto keys = parse_keys(*text);
  if (!keys.ok()) return Status::Invalid("runtime token keys: " + keys.status().message());
  k->current_ = keys->current;
  k->previous_ = keys->previous;
  k->loaded_at_us_ = clock.monotonic_us();
  return k;
}

std::unique_ptr<TokenKeyring> TokenKeyring::in_memory(SigningKey current) {
  std::unique_ptr<TokenKeyring> k(new TokenKeyring());
  k->current_ = std::move(current);
  return k;
}

void TokenKeyring::maybe_refresh(bool unknown_kid) const {
  if (!store_ || !store_->shared()) return;
  {
    std::lock_guard lock(mu_);
    const int64_t now = clock_->monotonic_us();
    // Unknown kids are throttled among themselves only: a token signed right after a rotation on
    // another node must not wait because this node happened to read the keys a moment ago.
    const bool stale = now - loaded_at_us_ >= kTokenKeysRefreshUs;
    const bool look = unknown_kid && now - unknown_kid_read_us_ >= kTokenKeysUnknownKidReloadUs;
    if (!stale && !look) return;
    // Claimed: concurrent callers keep using the cache while this one reads.
    loaded_at_us_ = now;
    if (unknown_kid) unknown_kid_read_us_ = now;
  }
  auto text = store_->get(kTokenKeysSecret);
  if (!text.ok()) return;
  auto keys = parse_keys(*text);
  if (!keys.ok()) return;
  std::lock_guard lock(mu_);
  current_ = keys->current;
  previous_ = keys->previous;
}

SigningKey TokenKeyring::current() const {
  maybe_refresh(false);
  std::lock_guard lock(mu_);
  return current_;
}

std::optional<SigningKey> TokenKeyring::find(std::string_view kid) const {
  maybe_refresh(false);
  auto lookup = [&]() -> std::optional<SigningKey> {
    std::lock_guard lock(mu_);
    if (kid == current_.id) return current_;
    if (previous_ && kid == previous_->id) return previous_;
    return std::nullopt;
  };
  if (auto k = lookup()) return k;
  // Perhaps another node rotated a moment ago.
  maybe_refresh(true);
  return lookup();
}

Status TokenKeyring::rotate() {
  if (!store_) {
    std::lock_guard lock(mu_);
    previous_ = current_;
    current_ = fresh_key();
    return Status::Ok();
  }
  // The rotation reads the stored keys, not this node's cache: another node may have rotated.
  auto text = store_->update(kTokenKeysSecret, [](const std::string& old) -> Result<std::string> {
    auto keys = parse_keys(old);
    if (!keys.ok()) return keys.status();
    return keys_text({fresh_key(), keys->current});
  });
  if (!text.ok()) return text.status();
  auto keys = parse_keys(*text);
  if (!keys.ok()) return keys.status();
  std::lock_guard lock(mu_);
  current_ = keys->current;
  previous_ = keys->previous;
  loaded_at_us_ = clock_->monotonic_us();
  return Status::Ok();
}

std::string sign_token(const SigningKey& key, const TokenClaims& c) {
  json::object header{{"alg", "HS256"}, {"typ", "JWT"}, {"kid", key.id}, {"akid", c.api_key_id}};
  json::object payload{{"iss", kTokenIssuer}, {"sub", c.subject},    {"aud", c.audience},
                       {"iat", c.issued_at},  {"exp", c.expires_at}, {"jti", c.token_id}};
  if (c.agent) payload["agent"] = *c.agent;
  if (c.sid) payload["sid"] = *c.sid;
  if (c.billing_type) payload["billing_type"] = *c.billing_type;
  if (c.origin) payload["origin"] = *c.origin;
  std::string signing_input =
      base64url_encode(json::serialize(header)) + "." + base64url_encode(json::serialize(payload));
  return signing_input + "." + base64url_encode(hmac_sha256(key.secret, signing_input));
}

Result<TokenClaims> verify_token(const TokenKeyring& keys, std::string_view token, std::string_view audience,
                                 int64_t now_s) {
  if (token.size() > 8192) return unauthenticated("token too long");
  const size_t d1 = token.find('.');
  const size_t d2 = d1 == std::string_view::npos ? d1 : token.find('.', d1 + 1);
  if (d2 == std::string_view::npos || token.find('.', d2 + 1) != std::string_view::npos) {
    return unauthenticated("malformed token");
  }
  auto header = json_part(token.substr(0, d1));
  auto payload = json_part(token.substr(d1 + 1, d2 - d1 - 1));
  auto sig = b64url_part(token.substr(d2 + 1));
  if (!header || !payload || !sig) return unauthenticated("malformed token");
  // RFC 8725 3.1: the algorithm is pinned, never taken from the token.
  if (string_of(*header, "alg") != "HS256") return unauthenticated("unsupported token algorithm");
  if (header->contains("crit")) return unauthenticated("unsupported critical header");
  auto kid = string_of(*header, "kid");
  if (!kid) return unauthenticated("token has no key id");
  auto key = keys.find(*kid);
  if (!key) return unauthenticated("token signed with an unknown or retired key");
  const std::string expected = hmac_sha256(key->secret, token.substr(0, d2));
  if (!constant_time_equal(expected, *sig)) return unauthenticated("bad token signature");

  TokenClaims c;
  if (string_of(*payload, "iss") != std::string(kTokenIssuer)) return unauthenticated("wrong token issuer");
  // `aud` may be a string or an array of strings (RFC 7519 4.1.3).
  bool aud_ok = false;
  if (auto it = payload->find("aud"); it != payload->end()) {
    if (it->value().is_string()) aud_ok = it->value().as_string() == audience;
    if (it->value().is_array()) {
      for (const auto& a : it->value().as_array())
        aud_ok = aud_ok || (a.is_string() && a.as_string() == audience);
    }
  }
  if (!aud_ok) return unauthenticated("wrong token audience");
  auto exp = int_of(*payload, "exp");
  auto iat = int_of(*payload, "iat");
  if (!exp || !iat) return unauthenticated("token lacks exp or iat");
  if (*exp <= now_s) return unauthenticated("token expired");
  if (*iat > now_s + 60) return unauthenticated("token issued in the future");
  auto sub = string_of(*payload, "sub");
  auto jti = string_of(*payload, "jti");
  auto akid = string_of(*header, "akid");
  if (!sub || sub->empty() || !jti || !akid || akid->empty())
    return unauthenticated("token lacks sub, jti or akid");
  c.api_key_id = *akid;
  c.subject = *sub;
  c.audience = std::string(audience);
  c.issued_at = *iat;
  c.expires_at = *exp;
  c.token_id = *jti;
  c.agent = string_of(*payload, "agent");
  c.sid = string_of(*payload, "sid");
  c.billing_type = string_of(*payload, "billing_type");
  c.origin = string_of(*payload, "origin");
  return c;
}

}  // namespace imago

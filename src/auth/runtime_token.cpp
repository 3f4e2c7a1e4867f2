#include "auth/runtime_token.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>

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

// base64url without padding only (RFC 7515 2): anything else is a malformed token.
std::optional<std::string> b64url_part(std::string_view s) {
  if (s.empty()) return std::nullopt;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return std::nullopt;
  }
  return base64_decode(s);
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

Result<std::unique_ptr<TokenKeyring>> TokenKeyring::open(const std::string& path) {
  std::unique_ptr<TokenKeyring> k(new TokenKeyring());
  k->path_ = path;
  std::ifstream in(path);
  if (!in) {
    k->current_ = fresh_key();
    std::lock_guard lock(k->mu_);
    if (Status st = k->save_locked(); !st.ok()) return st;
    return k;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  boost::system::error_code ec;
  json::value v = json::parse(ss.str(), ec);
  if (ec || !v.is_object() || !v.as_object().contains("current")) {
    return Status::Invalid(path + " is not a token key file (JSON with 'current')");
  }
  auto cur = key_from_json(v.as_object().at("current"));
  if (!cur.ok()) return Status::Invalid(path + ": " + cur.status().message());
  k->current_ = *cur;
  if (auto it = v.as_object().find("previous"); it != v.as_object().end() && !it->value().is_null()) {
    auto prev = key_from_json(it->value());
    if (!prev.ok()) return Status::Invalid(path + ": " + prev.status().message());
    k->previous_ = *prev;
  }
  return k;
}

std::unique_ptr<TokenKeyring> TokenKeyring::in_memory(SigningKey current) {
  std::unique_ptr<TokenKeyring> k(new TokenKeyring());
  k->current_ = std::move(current);
  return k;
}

SigningKey TokenKeyring::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

std::optional<SigningKey> TokenKeyring::find(std::string_view kid) const {
  std::lock_guard lock(mu_);
  if (kid == current_.id) return current_;
  if (previous_ && kid == previous_->id) return previous_;
  return std::nullopt;
}

Status TokenKeyring::rotate() {
  std::lock_guard lock(mu_);
  auto old_prev = previous_;
  auto old_cur = current_;
  previous_ = current_;
  current_ = fresh_key();
  Status st = save_locked();
  if (!st.ok()) {
    previous_ = old_prev;
    current_ = old_cur;
  }
  return st;
}

Status TokenKeyring::save_locked() const {
  if (path_.empty()) return Status::Ok();
  json::object o{{"current", key_json(current_)},
                 {"previous", previous_ ? json::value(key_json(*previous_)) : json::value(nullptr)}};
  const std::string tmp = path_ + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return Status::Internal("cannot write " + tmp);
  ::chmod(tmp.c_str(), 0600);
  std::string text = json::serialize(o) + "\n";
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = (std::fflush(f) == 0) && ok;
  std::fclose(f);
  if (!ok || std::rename(tmp.c_str(), path_.c_str()) != 0) return Status::Internal("cannot write " + path_);
  return Status::Ok();
}

std::string sign_token(const SigningKey& key, const TokenClaims& c) {
  json::object header{{"alg", "HS256"}, {"typ", "JWT"}, {"kid", key.id}, {"akid", c.api_key_id}};
  json::object payload{{"iss", kTokenIssuer}, {"sub", c.subject},    {"aud", c.audience},
                       {"iat", c.issued_at},  {"exp", c.expires_at}, {"jti", c.token_id}};
  if (c.agent) payload["agent"] = *c.agent;
  if (c.sid) payload["sid"] = *c.sid;
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
  return c;
}

}  // namespace imago

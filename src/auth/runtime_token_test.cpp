#include "auth/runtime_token.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <vector>

#include "util/base64.h"
#include "util/crypto.h"
#include "util/random.h"

namespace imago {
namespace {

constexpr int64_t kNow = 1'700'000'000;

TokenClaims runtime_claims() {
  TokenClaims c;
  c.api_key_id = "key_abc";
  c.subject = "usr_1";
  c.audience = std::string(kRuntimeAudience);
  c.issued_at = kNow;
  c.expires_at = kNow + 300;
  c.token_id = "jti-1";
  return c;
}

SigningKey test_key(std::string id = "rk_test") {
  return {std::move(id), std::string(32, 'k')};
}

// Re-signs arbitrary header/payload JSON with `secret`.
std::string forge(std::string_view header, std::string_view payload, std::string_view secret) {
  std::string in = base64url_encode(header) + "." + base64url_encode(payload);
  return in + "." + base64url_encode(hmac_sha256(secret, in));
}

TEST(RuntimeToken, SignedTokenVerifiesWithItsClaims) {
  auto keys = TokenKeyring::in_memory(test_key());
  std::string t = sign_token(keys->current(), runtime_claims());
  auto c = verify_token(*keys, t, kRuntimeAudience, kNow + 10);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->subject, "usr_1");
  EXPECT_EQ(c->api_key_id, "key_abc");
  EXPECT_EQ(c->expires_at, kNow + 300);
  EXPECT_EQ(c->token_id, "jti-1");
  EXPECT_FALSE(c->agent.has_value());
}

TEST(RuntimeToken, ExpiredTokenIsRefused) {
  auto keys = TokenKeyring::in_memory(test_key());
  std::string t = sign_token(keys->current(), runtime_claims());
  EXPECT_EQ(verify_token(*keys, t, kRuntimeAudience, kNow + 300).status().code(), Code::kUnauthenticated);
  EXPECT_TRUE(verify_token(*keys, t, kRuntimeAudience, kNow + 299).ok());
}

TEST(RuntimeToken, WrongAudienceIsRefused) {
  auto keys = TokenKeyring::in_memory(test_key());
  std::string t = sign_token(keys->current(), runtime_claims());
  EXPECT_FALSE(verify_token(*keys, t, kEmbedAudience, kNow).ok());
}

TEST(RuntimeToken, AlgNoneAndOtherAlgorithmsAreRefused) {
  auto keys = TokenKeyring::in_memory(test_key());
  std::string payload =
      R"({"iss":"imago","sub":"usr_1","aud":"imago-runtime","iat":1700000000,"exp":1700000300,"jti":"j"})";
  std::string none = base64url_encode(R"({"alg":"none","kid":"rk_test","akid":"key_abc"})") + "." +
                     base64url_encode(payload) + ".";
  EXPECT_FALSE(verify_token(*keys, none, kRuntimeAudience, kNow).ok());
  std::string none2 = base64url_encode(R"({"alg":"none","kid":"rk_test","akid":"key_abc"})") + "." +
                      base64url_encode(payload) + ".AAAA";
  EXPECT_FALSE(verify_token(*keys, none2, kRuntimeAudience, kNow).ok());
  // Correct HMAC but a different declared algorithm: still refused.
  std::string hs512 =
      forge(R"({"alg":"HS512","kid":"rk_test","akid":"key_abc"})", payload, std::string(32, 'k'));
  EXPECT_FALSE(verify_token(*keys, hs512, kRuntimeAudience, kNow).ok());
  // The same with HS256 is accepted: the test above fails only because of alg.
  std::string hs256 =
      forge(R"({"alg":"HS256","kid":"rk_test","akid":"key_abc"})", payload, std::string(32, 'k'));
  EXPECT_TRUE(verify_token(*keys, hs256, kRuntimeAudience, kNow).ok());
}

TEST(RuntimeToken, WrongIssuerOrMissingClaimsAreRefused) {
  auto keys = TokenKeyring::in_memory(test_key());
  const std::string k(32, 'k');
  const std::string h = R"({"alg":"HS256","kid":"rk_test","akid":"key_abc"})";
  EXPECT_FALSE(
      verify_token(
          *keys,
          forge(
              h,
              R"({"iss":"other","sub":"u","aud":"imago-runtime","iat":1700000000,"exp":1700000300,"jti":"j"})",
              k),
          kRuntimeAudience, kNow)
          .ok());
  EXPECT_FALSE(
      verify_token(
          *keys, forge(h, R"({"iss":"imago","sub":"u","aud":"imago-runtime","iat":1700000000,"jti":"j"})", k),
          kRuntimeAudience, kNow)
          .ok());
  EXPECT_FALSE(
      verify_token(
          *keys,
          forge(
              R"({"alg":"HS256","kid":"rk_test"})",
              R"({"iss":"imago","sub":"u","aud":"imago-runtime","iat":1700000000,"exp":1700000300,"jti":"j"})",
              k),
          kRuntimeAudience, kNow)
          .ok());
  // iat far in the future.
  EXPECT_FALSE(
      verify_token(
          *keys,
          forge(
              h,
              R"({"iss":"imago","sub":"u","aud":"imago-runtime","iat":1700000100,"exp":1700000300,"jti":"j"})",
              k),
          kRuntimeAudience, kNow)
          .ok());
}

TEST(RuntimeToken, TamperedPayloadOrSignatureIsRefused) {
  auto keys = TokenKeyring::in_memory(test_key());
  std::string t = sign_token(keys->current(), runtime_claims());
  std::string tampered = t;
  tampered[t.find('.') + 3] ^= 1;
  EXPECT_FALSE(verify_token(*keys, tampered, kRuntimeAudience, kNow).ok());
  std::string badsig = t.substr(0, t.rfind('.') + 1) + base64url_encode(std::string(32, 'x'));
  EXPECT_FALSE(verify_token(*keys, badsig, kRuntimeAudience, kNow).ok());
  EXPECT_FALSE(verify_token(*keys, "a.b", kRuntimeAudience, kNow).ok());
  EXPECT_FALSE(verify_token(*keys, "a.b.c.d", kRuntimeAudience, kNow).ok());
  EXPECT_FALSE(verify_token(*keys, "", kRuntimeAudience, kNow).ok());
  // Padding or the standard alphabet is not base64url.
  EXPECT_FALSE(verify_token(*keys, t + "=", kRuntimeAudience, kNow).ok());
}

// Another spelling of the same bytes: the last character's unused low bits set. The decoder
// ignores them, so before the canonical check this string decoded to the original.
std::string with_padding_bits(std::string part) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const size_t unused_bits = (6 * part.size()) % 8;
  const size_t idx = alphabet.find(part.back());
  part.back() = alphabet[idx | ((1u << unused_bits) - 1)];
  return part;
}

TEST(RuntimeToken, OnlyTheCanonicalBase64urlSpellingVerifies) {
  auto keys = TokenKeyring::in_memory(test_key());
  std::string t = sign_token(keys->current(), runtime_claims());
  ASSERT_TRUE(verify_token(*keys, t, kRuntimeAudience, kNow).ok());
  const size_t d1 = t.find('.'), d2 = t.rfind('.');
  const std::string header = t.substr(0, d1), payload = t.substr(d1 + 1, d2 - d1 - 1), sig = t.substr(d2 + 1);
  ASSERT_EQ(sig.size(), 43u);  // 32 bytes: the last character carries 2 unused bits
  const std::string sig2 = with_padding_bits(sig);
  ASSERT_NE(sig2, sig);
  ASSERT_EQ(base64_decode(sig2), base64_decode(sig)) << "the test needs a second spelling of the same bytes";

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"signature with non-zero padding bits", header + "." + payload + "." + sig2},
      {"signature with '=' padding", t + "="},
      {"signature with '==' padding", header + "." + payload + "." + sig + "=="},
      {"signature in the standard alphabet",
       header + "." + payload + "." + base64_encode(base64_decode(sig).value())},
      {"signature with a space", header + "." + payload + "." + sig.substr(0, 10) + " " + sig.substr(10)},
      {"signature with a line break",
       header + "." + payload + "." + sig.substr(0, 10) + "\n" + sig.substr(10)},
      {"signature truncated by one character", header + "." + payload + "." + sig.substr(0, 42)},
      {"signature with one extra character", t + "A"},
  };
  for (const auto& [what, token] : cases) {
    EXPECT_EQ(verify_token(*keys, token, kRuntimeAudience, kNow).status().code(), Code::kUnauthenticated)
        << what;
  }
  // Header and payload too: re-signed so only the spelling is wrong.
  for (const auto& [h, p] :
       {std::pair{with_padding_bits(header), payload}, std::pair{header, with_padding_bits(payload)}}) {
    if (h == header && p == payload) continue;  // no unused bits in this part
    const std::string in = h + "." + p;
    const std::string forged = in + "." + base64url_encode(hmac_sha256(keys->current().secret, in));
    EXPECT_EQ(verify_token(*keys, forged, kRuntimeAudience, kNow).status().code(), Code::kUnauthenticated)
        << forged;
  }
}

TEST(RuntimeToken, RotationKeepsThePreviousKeyVerifyOnly) {
  auto keys = TokenKeyring::in_memory(test_key());
  std::string first = sign_token(keys->current(), runtime_claims());
  ASSERT_TRUE(keys->rotate().ok());
  EXPECT_NE(keys->current().id, "rk_test");
  EXPECT_GE(keys->current().secret.size(), kMinSigningKeyBytes);
  EXPECT_TRUE(verify_token(*keys, first, kRuntimeAudience, kNow).ok());
  std::string second = sign_token(keys->current(), runtime_claims());
  ASSERT_TRUE(keys->rotate().ok());
  EXPECT_FALSE(verify_token(*keys, first, kRuntimeAudience, kNow).ok());
  EXPECT_TRUE(verify_token(*keys, second, kRuntimeAudience, kNow).ok());
}

TEST(RuntimeToken, EmbedClaimsRoundTrip) {
  auto keys = TokenKeyring::in_memory(test_key());
  TokenClaims c = runtime_claims();
  c.audience = std::string(kEmbedAudience);
  c.agent = "A12BCD3456";
  c.sid = "emb_1";
  std::string t = sign_token(keys->current(), c);
  EXPECT_FALSE(verify_token(*keys, t, kRuntimeAudience, kNow).ok());
  auto v = verify_token(*keys, t, kEmbedAudience, kNow);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->agent, "A12BCD3456");
  EXPECT_EQ(v->sid, "emb_1");
}

TEST(RuntimeTokenKeyring, FileIsCreatedPrivateAndReloaded) {
  auto dir = std::filesystem::temp_directory_path() / ("imago_keys_" + random_hex(6));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "runtime-token-keys.json").string();
  ManualClock clock;
  auto store = make_file_secret_store(dir.string());
  std::string kid;
  std::string token;
  {
    auto k = TokenKeyring::open(*store, clock);
    ASSERT_TRUE(k.ok()) << k.status().message();
    kid = (*k)->current().id;
    token = sign_token((*k)->current(), runtime_claims());
    auto perms = std::filesystem::status(path).permissions();
    EXPECT_EQ(perms & std::filesystem::perms::group_all, std::filesystem::perms::none);
    EXPECT_EQ(perms & std::filesystem::perms::others_all, std::filesystem::perms::none);
  }
  {
    auto k = TokenKeyring::open(*store, clock);
    ASSERT_TRUE(k.ok());
    EXPECT_EQ((*k)->current().id, kid);
    EXPECT_TRUE(verify_token(**k, token, kRuntimeAudience, kNow).ok());
    ASSERT_TRUE((*k)->rotate().ok());
  }
  {
    auto k = TokenKeyring::open(*store, clock);
    ASSERT_TRUE(k.ok());
    EXPECT_NE((*k)->current().id, kid);
    EXPECT_TRUE((*k)->find(kid).has_value());  // previous, verify only
  }
  // A short key is refused.
  std::ofstream(path) << R"({"current":{"id":"rk_x","secret":"c2hvcnQ"}})";
  EXPECT_FALSE(TokenKeyring::open(*store, clock).ok());
  std::filesystem::remove_all(dir);
}

// Values shared by "nodes" (keyrings) as a database would share them.
class SharedMemorySecrets final : public SecretStore {
 public:
  Result<std::string> get_or_create(const std::string& name, const std::string& initial) override {
    std::lock_guard lock(mu_);
    ++reads;
    return values_.try_emplace(name, initial).first->second;
  }
  Result<std::string> get(const std::string& name) override {
    std::lock_guard lock(mu_);
    ++reads;
    auto it = values_.find(name);
    if (it == values_.end()) return Status::NotFound(name);
    return it->second;
  }
  Result<std::string> update(const std::string& name,
                             const std::function<Result<std::string>(const std::string&)>& next) override {
    std::lock_guard lock(mu_);
    auto v = next(values_.at(name));
    if (v.ok()) values_[name] = *v;
    return v;
  }
  bool shared() const override { return true; }
  int reads = 0;

 private:
  std::mutex mu_;
  std::map<std::string, std::string> values_;
};

TEST(RuntimeTokenKeyring, NodesOnOneSharedStoreAgreeAndSeeRotations) {
  ManualClock clock;
  SharedMemorySecrets store;
  auto a = TokenKeyring::open(store, clock);
  auto b = TokenKeyring::open(store, clock);
  ASSERT_TRUE(a.ok() && b.ok());
  // The first node created the key; the second uses it.
  EXPECT_EQ((*a)->current().id, (*b)->current().id);
  const std::string first = (*a)->current().id;
  std::string t0 = sign_token((*a)->current(), runtime_claims());
  EXPECT_TRUE(verify_token(**b, t0, kRuntimeAudience, kNow).ok());

  // A rotates; a token signed on A with the new key verifies on B at once (unknown kid: reload).
  clock.advance_us(kTokenKeysUnknownKidReloadUs);
  ASSERT_TRUE((*a)->rotate().ok());
  std::string t1 = sign_token((*a)->current(), runtime_claims());
  EXPECT_TRUE(verify_token(**b, t1, kRuntimeAudience, kNow).ok());
  EXPECT_TRUE(verify_token(**b, t0, kRuntimeAudience, kNow).ok());  // previous: verify only

  // B rotates from the stored keys (not its cache): A's key becomes the previous one.
  ASSERT_TRUE((*b)->rotate().ok());
  EXPECT_TRUE((*b)->find((*a)->current().id).has_value());
  // Within the refresh interval A still signs with its cached key, which B still accepts.
  EXPECT_TRUE(verify_token(**b, sign_token((*a)->current(), runtime_claims()), kRuntimeAudience, kNow).ok());
  // After it, A has picked up B's rotation and the first key is retired everywhere.
  clock.advance_us(kTokenKeysRefreshUs);
  EXPECT_EQ((*a)->current().id, (*b)->current().id);
  EXPECT_FALSE((*a)->find(first).has_value());
  EXPECT_FALSE(verify_token(**a, t0, kRuntimeAudience, kNow).ok());

  // Tokens naming unknown keys cannot make a node read the store more than once per interval.
  const int before = store.reads;
  for (int i = 0; i < 50; ++i) {
    EXPECT_FALSE((*a)->find("rk_nope" + std::to_string(i)).has_value());
  }
  EXPECT_LE(store.reads - before, 1);
}

}  // namespace
}  // namespace imago

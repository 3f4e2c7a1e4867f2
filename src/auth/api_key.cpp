#include "auth/api_key.h"

#include "util/crypto.h"
#include "util/random.h"

namespace imago {

namespace {

constexpr size_t kRandomLen = 32;
constexpr size_t kChecksumLen = 6;
constexpr char kBase62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

std::string checksum(std::string_view random_part) {
  uint64_t v = crc32(random_part);
  std::string out(kChecksumLen, '0');
  for (size_t i = kChecksumLen; i-- > 0;) {
    out[i] = kBase62[v % 62];
    v /= 62;
  }
  return out;
}

bool is_base62(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

}  // namespace

KeyMaterial key_material(std::string_view secret) {
  KeyMaterial m;
  m.hash_hex = hash_api_key(secret);
  m.prefix = std::string(secret.substr(0, std::min<size_t>(secret.size(), kApiKeyPrefix.size() + 4)));
  m.last4 = std::string(secret.substr(secret.size() >= 4 ? secret.size() - 4 : 0));
  return m;
}

GeneratedKey generate_api_key() {
  std::string random_part = random_base62(kRandomLen);
  GeneratedKey k;
  k.secret = std::string(kApiKeyPrefix) + random_part + checksum(random_part);
  k.material = key_material(k.secret);
  return k;
}

bool api_key_well_formed(std::string_view secret) {
  if (secret.size() != kApiKeyPrefix.size() + kRandomLen + kChecksumLen) return false;
  if (secret.substr(0, kApiKeyPrefix.size()) != kApiKeyPrefix) return false;
  std::string_view body = secret.substr(kApiKeyPrefix.size());
  for (char c : body) {
    if (!is_base62(c)) return false;
  }
  return constant_time_equal(checksum(body.substr(0, kRandomLen)), body.substr(kRandomLen));
}

std::string hash_api_key(std::string_view secret) {
  return sha256_hex(secret);
}

}  // namespace imago

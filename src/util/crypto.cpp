#include "util/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <zlib.h>

#include <memory>

namespace imago {

std::string sha256(std::string_view data) {
  std::string out(SHA256_DIGEST_LENGTH, '\0');
  auto* digest = reinterpret_cast<unsigned char*>(out.data());
  // Every authenticated request hashes its key: the one-shot SHA256() looks the algorithm up
  // (under a lock) and allocates a context each call, so both are kept, one context per thread.
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                                                 &EVP_MD_CTX_free);
  unsigned int len = 0;
  if (md && ctx && EVP_DigestInit_ex2(ctx.get(), md, nullptr) == 1 &&
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) == 1 &&
      EVP_DigestFinal_ex(ctx.get(), digest, &len) == 1 && len == SHA256_DIGEST_LENGTH) {
    return out;
  }
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return out;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = kHex[c >> 4];
    out[2 * i + 1] = kHex[c & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  return to_hex(sha256(data));
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

uint32_t crc32(std::string_view data) {
  return static_cast<uint32_t>(
      ::crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
}

}  // namespace imago

// API key format: "imago_sk_" + 32 base62 characters (190 random bits) + 6 base62 characters of
// CRC-32 checksum over the random part. The prefix makes a leaked key recognisable (secret
// scanners), the checksum rejects typos and garbage without a database lookup.
#pragma once
#include <string>
#include <string_view>

#include "store/account_store.h"

namespace imago {

inline constexpr std::string_view kApiKeyPrefix = "imago_sk_";

struct GeneratedKey {
  std::string secret;  // shown once, never stored
  KeyMaterial material;
};

GeneratedKey generate_api_key();
// Prefix, length, alphabet and checksum; says nothing about whether the key exists.
bool api_key_well_formed(std::string_view secret);
std::string hash_api_key(std::string_view secret);
KeyMaterial key_material(std::string_view secret);

}  // namespace imago

// Hashing and MAC helpers over OpenSSL.
#pragma once
#include <string>
#include <string_view>

namespace imago {

std::string sha256(std::string_view data);  // 32 raw bytes
std::string sha256_hex(std::string_view data);
std::string hmac_sha256(std::string_view key, std::string_view data);  // 32 raw bytes
std::string to_hex(std::string_view bytes);
// Constant-time equality for secrets and MACs (length is not secret).
bool constant_time_equal(std::string_view a, std::string_view b);
uint32_t crc32(std::string_view data);

}  // namespace imago

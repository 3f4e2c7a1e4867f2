// Base64 (RFC 4648, standard and URL-safe alphabets) over OpenSSL's codec.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace imago {

std::string base64_encode(std::string_view data);
std::string base64url_encode(std::string_view data);  // no padding
// Accepts standard or URL-safe alphabets, with or without padding; ignores ASCII whitespace.
// Returns nullopt for anything else.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace imago

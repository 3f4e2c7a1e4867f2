// Small string helpers with no better home.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imago {

std::string to_lower(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
std::string_view trim(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
std::optional<int64_t> parse_int(std::string_view s);
std::optional<double> parse_double(std::string_view s);
// RFC 3339 UTC timestamp ("2026-11-21T19:40:00Z") for a Unix time in seconds.
std::string format_rfc3339(int64_t unix_seconds);
// Percent-decoding for URL paths and query strings ('+' as space only when form is true).
std::optional<std::string> url_decode(std::string_view s, bool form);
// An application/x-www-form-urlencoded string ("a=1&b=x+y") as name -> value (last one wins);
// nullopt when an escape is broken.
std::optional<std::map<std::string, std::string>> parse_form_urlencoded(std::string_view s);
bool is_valid_utf8(std::string_view s);
// A URL as error messages and logs may show it: user info, query and fragment (where signed URLs,
// webhook tokens and passwords live) become "[redacted]"; scheme, host, port and path stay.
// "https://u:p@h/x?sig=1#f" -> "https://[redacted]@h/x?[redacted]".
std::string url_without_secrets(std::string_view url);

}  // namespace imago

#include "util/base64.h"

#include <openssl/evp.h>

namespace imago {

std::string base64_encode(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string base64url_encode(std::string_view data) {
  std::string s = base64_encode(data);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) {
    if (c == '+')
      c = '-';
    else if (c == '/')
      c = '_';
  }
  return s;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string clean;
  clean.reserve(text.size() + 3);
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '-')
      c = '+';
    else if (c == '_')
      c = '/';
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
              c == '/' || c == '=';
    if (!ok) return std::nullopt;
    clean.push_back(c);
  }
  size_t pad = 0;
  while (!clean.empty() && clean.back() == '=') {
    clean.pop_back();
    ++pad;
  }
  if (pad > 2 || clean.find('=') != std::string::npos) return std::nullopt;
  if (clean.size() % 4 == 1) return std::nullopt;
  while (clean.size() % 4 != 0) clean.push_back('=');
  if (clean.empty()) return std::string();
  std::string out(clean.size() / 4 * 3, '\0');
  int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(clean.data()), static_cast<int>(clean.size()));
  if (n < 0) return std::nullopt;
  size_t trailing = 0;
  for (size_t i = clean.size(); i > 0 && clean[i - 1] == '='; --i) ++trailing;
  out.resize(static_cast<size_t>(n) - trailing);
  return out;
}

}  // namespace imago

#include "util/random.h"

#include <openssl/rand.h>

#include <cstdlib>
#include <cstring>

namespace imago {

namespace {
constexpr char kBase62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
}

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    std::abort();  // no entropy: nothing safe can be issued
  }
  return out;
}

uint64_t random_u64() {
  uint64_t v;
  std::string b = random_bytes(sizeof v);
  std::memcpy(&v, b.data(), sizeof v);
  return v;
}

uint64_t random_below(uint64_t bound) {
  if (bound == 0) return 0;
  // Rejection sampling avoids modulo bias.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % bound);
  uint64_t v;
  do {
    v = random_u64();
  } while (v >= limit);
  return v % bound;
}

std::string random_base62(size_t length) {
  std::string out;
  out.reserve(length);
  while (out.size() < length) {
    std::string b = random_bytes(length);
    for (unsigned char c : b) {
      if (c < 248 && out.size() < length) out.push_back(kBase62[c % 62]);  // 248 = 62*4
    }
  }
  return out;
}

std::string random_hex(size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string b = random_bytes(bytes);
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char c : b) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string random_uuid() {
  std::string b = random_bytes(16);
  b[6] = static_cast<char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<char>((b[8] & 0x3f) | 0x80);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    auto c = static_cast<unsigned char>(b[i]);
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string new_id(std::string_view prefix) {
  std::string out(prefix);
  out.push_back('_');
  out += random_base62(20);
  return out;
}

std::string new_unique_id(std::string_view prefix) {
  thread_local uint64_t state = random_u64();
  auto next = [] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  std::string out(prefix);
  out.push_back('_');
  uint64_t bits = next();
  for (int i = 0; i < 20; ++i) {
    if (i == 10) bits = next();  // 10 characters per 64 bits (62^10 < 2^64)
    out.push_back(kBase62[bits % 62]);
    bits /= 62;
  }
  return out;
}

bool is_uuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

}  // namespace imago

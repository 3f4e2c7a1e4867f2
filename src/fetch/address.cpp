#include "fetch/address.h"

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>

namespace imago::fetch {

std::string_view address_class_name(AddressClass c) {
  switch (c) {
    case AddressClass::kPublic:
      return "public";
    case AddressClass::kPrivate:
      return "private";
    case AddressClass::kLoopback:
      return "loopback";
    case AddressClass::kLinkLocal:
      return "link-local";
    case AddressClass::kCgnat:
      return "shared (CGNAT)";
    case AddressClass::kMulticast:
      return "multicast";
    case AddressClass::kUnspecified:
      return "unspecified";
    case AddressClass::kMetadata:
      return "cloud metadata";
    case AddressClass::kReserved:
      return "reserved";
  }
  return "unknown";
}

namespace {

bool in4(uint32_t a, uint32_t net, int bits) {
  uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (a & mask) == (net & mask);
}

constexpr uint32_t ip4(int a, int b, int c, int d) {
  return (uint32_t(a) << 24) | (uint32_t(b) << 16) | (uint32_t(c) << 8) | uint32_t(d);
}

AddressClass classify_v4(uint32_t a) {
  // Metadata first: these sit inside link-local / CGNAT / special blocks.
  if (a == ip4(169, 254, 169, 254) || a == ip4(169, 254, 170, 2) || a == ip4(100, 100, 100, 200) ||
      a == ip4(192, 0, 0, 192)) {
    return AddressClass::kMetadata;
  }
  if (in4(a, ip4(0, 0, 0, 0), 8)) return AddressClass::kUnspecified;
  if (in4(a, ip4(127, 0, 0, 0), 8)) return AddressClass::kLoopback;
  if (in4(a, ip4(10, 0, 0, 0), 8) || in4(a, ip4(172, 16, 0, 0), 12) || in4(a, ip4(192, 168, 0, 0), 16)) {
    return AddressClass::kPrivate;
  }
  if (in4(a, ip4(169, 254, 0, 0), 16)) return AddressClass::kLinkLocal;
  if (in4(a, ip4(100, 64, 0, 0), 10)) return AddressClass::kCgnat;
  if (in4(a, ip4(224, 0, 0, 0), 4)) return AddressClass::kMulticast;
  if (in4(a, ip4(240, 0, 0, 0), 4)) return AddressClass::kReserved;  // includes 255.255.255.255
  if (in4(a, ip4(192, 0, 0, 0), 24) || in4(a, ip4(192, 0, 2, 0), 24) || in4(a, ip4(198, 51, 100, 0), 24) ||
      in4(a, ip4(203, 0, 113, 0), 24) || in4(a, ip4(198, 18, 0, 0), 15) || in4(a, ip4(192, 88, 99, 0), 24)) {
    return AddressClass::kReserved;
  }
  return AddressClass::kPublic;
}

uint32_t v4_at(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

bool prefix6(const uint8_t* a, const uint8_t* p, int bits) {
  for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((a[i] & mask) != (p[i] & mask)) return false;
  }
  return true;
}

AddressClass classify_v6(const uint8_t* a) {
  static const uint8_t zero[16] = {};
  static const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static const uint8_t nat64[16] = {0x00, 0x64, 0xff, 0x9b};
  static const uint8_t six_to_four[16] = {0x20, 0x02};
  static const uint8_t ec2_metadata[16] = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54};
  static const uint8_t doc[16] = {0x20, 0x01, 0x0d, 0xb8};
  static const uint8_t teredo[16] = {0x20, 0x01, 0x00, 0x00};

  if (std::memcmp(a, zero, 16) == 0) return AddressClass::kUnspecified;
  if (std::memcmp(a, zero, 15) == 0 && a[15] == 1) return AddressClass::kLoopback;
  if (std::memcmp(a, ec2_metadata, 16) == 0) return AddressClass::kMetadata;
  if (prefix6(a, mapped, 96) || prefix6(a, nat64, 96)) return classify_v4(v4_at(a + 12));
  // IPv4-compatible (::a.b.c.d, deprecated): judge the embedded address.
  if (prefix6(a, zero, 96)) return classify_v4(v4_at(a + 12));
  if (prefix6(a, six_to_four, 16)) return classify_v4(v4_at(a + 2));
  if (a[0] == 0xff) return AddressClass::kMulticast;
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) return AddressClass::kLinkLocal;
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0) return AddressClass::kPrivate;  // site-local
  if ((a[0] & 0xfe) == 0xfc) return AddressClass::kPrivate;                  // unique-local
  if (prefix6(a, doc, 32)) return AddressClass::kReserved;
  // Teredo tunnels carry an obfuscated IPv4 client address; nothing legitimate to fetch there.
  if (prefix6(a, teredo, 32)) return AddressClass::kReserved;
  return AddressClass::kPublic;
}

}  // namespace

AddressClass classify(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    return classify_v4(ntohl(in->sin_addr.s_addr));
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    return classify_v6(in6->sin6_addr.s6_addr);
  }
  return AddressClass::kReserved;
}

std::optional<AddressClass> classify_text(std::string_view ip) {
  std::string s(ip);
  sockaddr_in v4{};
  if (inet_pton(AF_INET, s.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    return classify(reinterpret_cast<sockaddr*>(&v4));
  }
  sockaddr_in6 v6{};
  if (inet_pton(AF_INET6, s.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    return classify(reinterpret_cast<sockaddr*>(&v6));
  }
  return std::nullopt;
}

bool address_allowed(AddressClass c, bool allow_private) {
  switch (c) {
    case AddressClass::kPublic:
      return true;
    case AddressClass::kPrivate:
    case AddressClass::kLoopback:
    case AddressClass::kLinkLocal:
    case AddressClass::kCgnat:
      return allow_private;
    default:
      return false;
  }
}

std::string address_to_string(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
  } else if (sa->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf);
  }
  return buf;
}

}  // namespace imago::fetch

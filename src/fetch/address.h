// Classification of IP addresses for the SSRF guard: user-supplied URLs (agent inputs, uploads by
// URL, webhook targets) may only reach public addresses unless the operator allows private ones.
#pragma once
#include <netinet/in.h>
#include <sys/socket.h>

#include <optional>
#include <string>
#include <string_view>

namespace imago::fetch {

enum class AddressClass {
  kPublic,
  kPrivate,      // RFC 1918, IPv6 unique-local / site-local
  kLoopback,     // 127/8, ::1
  kLinkLocal,    // 169.254/16, fe80::/10
  kCgnat,        // 100.64/10 (shared address space)
  kMulticast,    // 224/4, ff00::/8
  kUnspecified,  // 0.0.0.0/8, ::
  kMetadata,     // cloud instance-metadata endpoints (169.254.169.254, fd00:ec2::254, ...)
  kReserved,     // broadcast, documentation, benchmarking, 240/4, other special-purpose blocks
};

std::string_view address_class_name(AddressClass c);

// Classifies a numeric IPv4/IPv6 address. IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible, NAT64
// (64:ff9b::/96) and 6to4 (2002::/16) addresses are judged by the IPv4 address they carry.
AddressClass classify(const sockaddr* sa);
std::optional<AddressClass> classify_text(std::string_view ip);

// Whether a connection to an address of this class is allowed. `allow_private` (the operator's
// --allow-private-fetch) opens private, loopback, link-local and CGNAT ranges; metadata,
// multicast, unspecified and reserved addresses stay refused in every mode because no legitimate
// media or webhook host lives there (and 0.0.0.0 reaches the local host on Linux).
bool address_allowed(AddressClass c, bool allow_private);

// Numeric text form of a socket address ("1.2.3.4" or "2001:db8::1", no brackets).
std::string address_to_string(const sockaddr* sa);

}  // namespace imago::fetch

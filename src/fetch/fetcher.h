// Safe fetching of user-supplied URLs (SSRF guard). Only http and https; the host is resolved
// here and every resolved address must pass the address policy (fetch/address.h); the checked
// address is pinned into libcurl (CURLOPT_RESOLVE) so a DNS rebind between check and connect
// cannot swap it; redirects are followed by hand, re-checking every hop; the body size and the
// total time (across all hops) are bounded; environment proxies are ignored.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace imago::fetch {

struct FetchRequest {
  std::string method = "GET";
  std::string url;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  size_t max_bytes = 10u << 20;  // larger bodies fail with kTooLarge
  bool truncate_body = false;    // instead of failing, keep only the first max_bytes
  int timeout_ms = 30000;        // whole exchange including redirects
  int max_redirects = 5;         // 0: a 3xx is returned as the response
};

struct FetchResponse {
  long status = 0;
  std::string body;
  std::string content_type;  // as sent by the server (may be empty)
  std::string final_url;     // after redirects
  std::string remote_ip;     // the pinned address that was contacted
};

// A URL split into what the guard needs.
struct ParsedUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // name or numeric address (IPv6 without brackets)
  bool host_is_ip = false;
  int port = 0;
};

// Syntax and scheme only (no network): http(s), a host, no user-info, a valid port.
Result<ParsedUrl> parse_fetch_url(std::string_view url);

class Fetcher {
 public:
  explicit Fetcher(bool allow_private) : allow_private_(allow_private) {}

  // Errors: kInvalidArgument for a bad or refused URL (scheme, refused address, too many
  // redirects), kTooLarge for a body over max_bytes, kUnavailable for DNS, connection, TLS and
  // timeout failures (worth retrying). Any HTTP status is a successful fetch; callers judge it.
  Result<FetchResponse> fetch(const FetchRequest& req) const;

  // Parses and resolves `url` now and applies the address policy (webhook registration).
  Status check_target(std::string_view url) const;

  bool allow_private() const { return allow_private_; }

  // Resolves host and returns the numeric address to pin (CURLOPT_RESOLVE), or why it is
  // refused: for callers that drive libcurl themselves (the streaming chat client).
  Result<std::string> resolve_checked(const ParsedUrl& u) const;

 private:
  bool allow_private_;
};

}  // namespace imago::fetch

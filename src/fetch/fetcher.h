// The one outbound HTTP client for user- and operator-supplied URLs (SSRF guard): the URL
// fetcher (agent inputs, uploads by URL, webhooks) and the streaming chat client both go through
// it. Only http and https; the host is resolved here and every resolved address must pass the
// address policy (fetch/address.h); the checked address is pinned into libcurl (CURLOPT_RESOLVE)
// and the socket libcurl opens is checked against it, so a DNS rebind between check and connect
// cannot swap it; redirects are followed by hand, re-checking every hop; the body size and the
// total time (across all hops) are bounded; environment proxies are ignored.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
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
  size_t max_bytes = 10u << 20;  // larger bodies fail with kTooLarge (stream(): 0 is no limit)
  bool truncate_body = false;    // instead of failing, keep only the first max_bytes
  int timeout_ms = 30000;        // whole exchange including redirects (0: none, stream() only)
  int connect_timeout_ms = 10000;
  int max_redirects = 5;  // 0: a 3xx is returned as the response
};

struct FetchResponse {
  long status = 0;
  std::string body;
  std::string content_type;  // as sent by the server (may be empty)
  std::string final_url;     // after redirects
  std::string remote_ip;     // the pinned address that was contacted
};

// Receives a streamed response (Fetcher::stream), on the calling thread.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // The final response's status (after redirects), before any of its body.
  virtual void on_status(long status) { (void)status; }
  // A piece of the final response's body; false ends the transfer (StreamEnd::kStoppedBySink).
  virtual bool on_body(std::string_view bytes) = 0;
  // Asked between reads, at least every 20 ms; true ends the transfer (StreamEnd::kInterrupted).
  // For cancellation from another thread and for limits the caller keeps itself.
  virtual bool should_stop() { return false; }
};

enum class StreamEnd {
  kComplete,       // the response ended
  kStoppedBySink,  // on_body returned false
  kInterrupted,    // should_stop returned true
  kTooLarge,       // the response declared a length over max_bytes (not truncate_body)
  kTimedOut,       // the connect timeout or the request's timeout_ms ran out
  kFailed,         // connection, TLS or protocol error (see StreamResult::error)
};

struct StreamResult {
  StreamEnd end = StreamEnd::kFailed;
  long status = 0;    // 0 when no response was received
  std::string error;  // libcurl's description for kTimedOut / kFailed
  std::string content_type;
  std::string final_url;
  std::string remote_ip;
};

// Host name -> numeric addresses (text). The default asks the system resolver; tests substitute
// their own (a name that changes its answer between two lookups, as in a DNS rebind).
using Resolver = std::function<Result<std::vector<std::string>>(const std::string& host)>;

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
  explicit Fetcher(bool allow_private, Resolver resolver = {});

  // Errors: kInvalidArgument for a bad or refused URL (scheme, refused address, too many
  // redirects), kTooLarge for a body over max_bytes, kUnavailable for DNS, connection, TLS and
  // timeout failures (worth retrying). Any HTTP status is a successful fetch; callers judge it.
  Result<FetchResponse> fetch(const FetchRequest& req) const;

  // The same exchange with the final response's body handed to `sink` as it arrives. Of the size
  // bounds only a declared length over max_bytes is refused here; the sink counts the bytes
  // themselves. Errors are those found before a
  // connection is made (bad or refused URL on any hop, DNS failure, too many redirects); how the
  // transfer itself ended is in the result.
  Result<StreamResult> stream(const FetchRequest& req, StreamSink& sink) const;

  // Parses and resolves `url` now and applies the address policy (webhook registration).
  Status check_target(std::string_view url) const;

  bool allow_private() const { return allow_private_; }

  // Resolves host and returns the numeric address to pin, or why it is refused.
  Result<std::string> resolve_checked(const ParsedUrl& u) const;

 private:
  bool allow_private_;
  Resolver resolver_;
};

}  // namespace imago::fetch

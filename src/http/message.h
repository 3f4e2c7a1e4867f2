// HTTP request and response as plain values. Deliberately free of Boost.Beast so that handlers in
// src/api (and their tests) compile without it; only src/http/server*.cpp translates to Beast.
#pragma once
#include <boost/json/value.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/principal.h"
#include "util/spool.h"
#include "util/status.h"

namespace imago::http {

// Ordered header list with case-insensitive lookup.
class Headers {
 public:
  void set(std::string name, std::string value);  // replaces any existing value
  void add(std::string name, std::string value);  // appends
  void reserve(std::size_t n) { items_.reserve(n); }
  std::optional<std::string_view> get(std::string_view name) const;
  bool has(std::string_view name) const { return get(name).has_value(); }
  const std::vector<std::pair<std::string, std::string>>& all() const { return items_; }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

struct Request {
  std::string method;                         // upper case: "GET", "POST", ...
  std::string target;                         // as received, e.g. "/v1/agents?limit=5"
  std::string path;                           // percent-decoded path without the query
  std::map<std::string, std::string> query;   // decoded query parameters (last one wins)
  std::map<std::string, std::string> params;  // path parameters from the route pattern
  Headers headers;
  // The body in memory; empty when it was spooled to `body_file` (routes with
  // RouteOptions::spool_body, bodies above ServerOptions::spool_threshold).
  std::string body;
  std::shared_ptr<SpoolFile> body_file;
  std::string client_ip;
  std::string request_id;

  // Set by the middleware for authenticated routes.
  std::optional<Principal> principal;

  const std::string& param(const std::string& name) const;
  std::optional<std::string_view> query_param(const std::string& name) const;
  std::string_view content_type() const;  // media type only, lower case, no parameters
  // The body wherever it is: handlers of spooling routes read it through this, in pieces.
  BodyBytes body_bytes() const { return body_file ? BodyBytes::whole(body_file) : BodyBytes(body); }
};

// Produces the body of a streamed (chunked) response piece by piece. The server calls it on its
// stream pool whenever the connection's send buffer has room (never concurrently with itself, never
// on an I/O thread): it returns the next piece, or nullopt at the end. A client that stops reading
// fills the bounded buffer and the source is simply not called until it drains, so a stalled client
// holds no thread; a client that leaves ends the stream (the source is destroyed). Throwing
// truncates the body (the connection closes).
using StreamSource = std::function<std::optional<std::string>()>;

struct Response {
  int status = 200;
  Headers headers;
  std::string body;
  // When set, the body is produced incrementally with chunked transfer encoding (see StreamSource).
  StreamSource stream;

  // The error code string (for logs and metrics), empty on success.
  std::string error_code;

  static Response json(int status, const boost::json::value& body);
  static Response bytes(int status, std::string content_type, std::string body);
  // SPEC 7 envelope: {error:{code,message,httpStatus},status:"error",status_code}
  static Response error(int status, std::string code, std::string message);
  // Maps a domain Status onto the envelope (kInvalidArgument -> 400 VALIDATION_ERROR, ...).
  static Response from_status(const Status& s);
};

}  // namespace imago::http

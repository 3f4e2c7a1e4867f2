// Route table: method + path pattern ("/v1/agent/{code}") -> handler and its policy (auth mode,
// rate-limit tier, body limit). Matching is exact per segment; literal segments win over {params}.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.h"
#include "http/server.h"
#include "http/websocket.h"
#include "limits/plan.h"

namespace imago::http {

enum class AuthMode {
  kApiKey,   // api-secret header required (also "Authorization: Bearer" when accept_bearer)
  kAdmin,    // Authorization: Bearer <admin token>
  kNone,     // public (health checks, signed URLs)
  kSession,  // a signed-in dashboard member: session cookie, plus X-CSRF-Token unless GET/HEAD
};

struct RouteOptions {
  AuthMode auth = AuthMode::kApiKey;
  bool accept_bearer = false;  // OpenAI-compatible routes accept Authorization: Bearer <api-secret>
  // Rate-limit tier; when unset it follows SPEC 8.1: GET -> Read, other methods -> Write.
  std::optional<Tier> tier;
  size_t body_limit = 1 << 20;  // bytes; larger bodies get 413
  // Bodies above ServerOptions::spool_threshold arrive in Request::body_file instead of
  // Request::body: for upload routes whose handlers read Request::body_bytes() piece by piece.
  bool spool_body = false;
  // kCpu / kOutbound: handlers that wait on other work. kInline: answered on the I/O thread, for
  // handlers that never block (docs/http.md, "Where handlers run"); the pipeline falls back to
  // kRequest where authentication or limits would wait on a database server.
  HandlerPool pool = HandlerPool::kRequest;
  // SPEC 8.3: anonymous self-authenticating endpoints get a per-IP limit on every request.
  bool anon_ip_limited = false;
  // A present but invalid key still reaches the handler (with no principal) instead of a 401:
  // POST /v1/validate answers {"valid": false}. It still counts as a failed authentication.
  bool invalid_key_reaches_handler = false;
};

using Handler = std::function<Response(Request&)>;

struct Route {
  std::string method;
  std::string pattern;
  std::string name;  // "GET /v1/me": metrics and access-log label
  Handler handler;
  RouteOptions options;
  // WebSocket routes (method GET): set for routes added with add_websocket(). A plain GET without
  // the upgrade headers gets 426 Upgrade Required.
  WebSocketFactory websocket;
  WebSocketOptions websocket_options;
  Tier tier() const;
};

struct RouteMatch {
  const Route* route = nullptr;  // set on a match
  std::map<std::string, std::string> params;
  bool path_known = false;  // some route has this path under another method (-> 405)
  // Methods allowed on this path: views of the routes' own strings, which live as long as the
  // router (no allocation while matching).
  std::vector<std::string_view> allowed;
};

class Router {
 public:
  void add(std::string method, std::string pattern, Handler handler, RouteOptions options = {});
  // A WebSocket endpoint at `pattern` (GET + Upgrade). Same pipeline as HTTP routes; see websocket.h.
  void add_websocket(std::string pattern, WebSocketOptions options, WebSocketFactory factory);
  RouteMatch match(std::string_view method, std::string_view path) const;
  const std::vector<std::unique_ptr<Route>>& routes() const { return routes_; }

 private:
  // Each pattern split once at add(), so matching a request splits only its path.
  struct Compiled {
    std::vector<std::string> segments;  // "{name}" for parameters
    std::vector<bool> is_param;
    uint64_t literal_key = 0;  // bit i (from the top) set when segment i is literal
  };
  // The patterns as a tree of segments: a request's path walks only the branches its segments
  // name (and the parameter branches), instead of comparing itself with every route.
  struct Node {
    std::map<std::string, std::unique_ptr<Node>, std::less<>> literal;
    std::unique_ptr<Node> param;
    std::vector<size_t> routes;  // patterns ending here (indices into routes_)
  };
  std::vector<std::unique_ptr<Route>> routes_;
  std::vector<Compiled> compiled_;  // parallel to routes_
  Node root_;
};

}  // namespace imago::http

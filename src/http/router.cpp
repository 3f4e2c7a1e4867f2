#include "http/router.h"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace imago::http {

Tier Route::tier() const {
  if (options.tier) return *options.tier;
  return (method == "GET" || method == "HEAD") ? Tier::kRead : Tier::kWrite;
}

namespace {

constexpr size_t kMaxSegments = 32;  // longer paths match no route

bool is_param(std::string_view seg) {
  return seg.size() >= 2 && seg.front() == '{' && seg.back() == '}';
}

// Splits "/a/b/c" into {"a","b","c"} ("/" gives one empty segment). Returns the count, or 0 when
// the path does not start with '/' or has more than kMaxSegments segments.
size_t split_path(std::string_view path, std::array<std::string_view, kMaxSegments>& out) {
  if (path.empty() || path[0] != '/') return 0;
  size_t n = 0, pos = 1;
  for (;;) {
    size_t end = path.find('/', pos);
    if (n == kMaxSegments) return 0;
    if (end == std::string_view::npos) {
      out[n++] = path.substr(pos);
      return n;
    }
    out[n++] = path.substr(pos, end - pos);
    pos = end + 1;
  }
}

}  // namespace

void Router::add(std::string method, std::string pattern, Handler handler, RouteOptions options) {
  std::array<std::string_view, kMaxSegments> segs;
  size_t n = split_path(pattern, segs);
  if (n == 0) throw std::invalid_argument("route pattern must start with '/' and be shorter: " + pattern);
  for (const auto& r : routes_) {
    if (r->method == method && r->pattern == pattern) {
      throw std::invalid_argument("duplicate route: " + method + " " + pattern);
    }
  }
  Compiled c;
  Node* node = &root_;
  for (size_t i = 0; i < n; ++i) {
    c.segments.emplace_back(segs[i]);
    c.is_param.push_back(is_param(segs[i]));
    if (!c.is_param.back() && i < 64) c.literal_key |= uint64_t{1} << (63 - i);
    std::unique_ptr<Node>& next = c.is_param.back() ? node->param : node->literal[std::string(segs[i])];
    if (!next) next = std::make_unique<Node>();
    node = next.get();
  }
  node->routes.push_back(routes_.size());
  auto r = std::make_unique<Route>();
  r->name = method + " " + pattern;
  r->method = std::move(method);
  r->pattern = std::move(pattern);
  r->handler = std::move(handler);
  r->options = std::move(options);
  routes_.push_back(std::move(r));
  compiled_.push_back(std::move(c));
}

void Router::add_websocket(std::string pattern, WebSocketOptions options, WebSocketFactory factory) {
  RouteOptions ro;
  ro.tier = options.tier ? *options.tier : Tier::kExempt;
  ro.body_limit = 0;  // an upgrade request carries no body
  switch (options.auth) {
    case WebSocketOptions::Auth::kToken:
      ro.auth = AuthMode::kNone;
      break;
    case WebSocketOptions::Auth::kApiKey:
      ro.auth = AuthMode::kApiKey;
      ro.accept_bearer = true;
      break;
    case WebSocketOptions::Auth::kAdmin:
      ro.auth = AuthMode::kAdmin;
      break;
  }
  add("GET", pattern, nullptr, ro);
  Route& r = *routes_.back();
  r.websocket = std::move(factory);
  r.websocket_options = options;
}

RouteMatch Router::match(std::string_view method, std::string_view path) const {
  RouteMatch m;
  std::array<std::string_view, kMaxSegments> segs;
  const size_t n = split_path(path, segs);
  if (n == 0) return m;

  // A literal segment beats a {param} at the first place two candidates differ: with the key's
  // bits ordered from the first segment down, the larger key is the more specific pattern.
  size_t best = SIZE_MAX, best_get = SIZE_MAX;  // HEAD falls back to GET when no HEAD route exists
  auto consider = [&](size_t i) {
    const Compiled& c = compiled_[i];
    const Route& r = *routes_[i];
    m.path_known = true;
    if (std::find(m.allowed.begin(), m.allowed.end(), r.method) == m.allowed.end())
      m.allowed.push_back(r.method);
    // Routes of the request's method are preferred over a more specific pattern of another method,
    // so a valid request never gets 405 just because a sibling literal route exists.
    if (r.method == method && (best == SIZE_MAX || c.literal_key > compiled_[best].literal_key)) best = i;
    if (method == "HEAD" && r.method == "GET" &&
        (best_get == SIZE_MAX || c.literal_key > compiled_[best_get].literal_key)) {
      best_get = i;
    }
  };
  // Every pattern that matches the path, found by walking the literal branch each segment names
  // and the parameter branch (a parameter takes any non-empty segment).
  auto walk = [&](auto& self, const Node& node, size_t depth) -> void {
    if (depth == n) {
      for (size_t i : node.routes) consider(i);
      return;
    }
    if (auto it = node.literal.find(segs[depth]); it != node.literal.end())
      self(self, *it->second, depth + 1);
    if (node.param && !segs[depth].empty()) self(self, *node.param, depth + 1);
  };
  walk(walk, root_, 0);
  if (best == SIZE_MAX) best = best_get;
  if (best != SIZE_MAX) {
    m.route = routes_[best].get();
    const Compiled& c = compiled_[best];
    for (size_t s = 0; s < n; ++s) {
      if (c.is_param[s]) m.params[c.segments[s].substr(1, c.segments[s].size() - 2)] = std::string(segs[s]);
    }
  }
  return m;
}

}  // namespace imago::http

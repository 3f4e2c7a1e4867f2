#include "http/router.h"

#include <stdexcept>

namespace imago::http {

Tier Route::tier() const {
  if (options.tier) return *options.tier;
  return (method == "GET" || method == "HEAD") ? Tier::kRead : Tier::kWrite;
}

namespace {

// Next '/'-separated segment of `s` starting at `pos` (which points just past a '/').
std::string_view next_segment(std::string_view s, size_t& pos) {
  size_t end = s.find('/', pos);
  if (end == std::string_view::npos) end = s.size();
  std::string_view seg = s.substr(pos, end - pos);
  pos = end + 1;
  return seg;
}

bool is_param(std::string_view seg) { return seg.size() >= 2 && seg.front() == '{' && seg.back() == '}'; }

// Matches `path` against `pattern` segment by segment without allocating. On success returns a
// specificity key: bit i (from the left, most significant first) set when segment i is literal,
// so comparing keys makes a literal segment win over a {param} at the first place they differ.
std::optional<uint64_t> match_pattern(std::string_view pattern, std::string_view path,
                                      std::map<std::string, std::string>* params) {
  if (pattern.empty() || path.empty() || pattern[0] != '/' || path[0] != '/') return std::nullopt;
  size_t pp = 1, sp = 1;
  uint64_t key = 0;
  int i = 0;
  while (true) {
    bool p_end = pp > pattern.size(), s_end = sp > path.size();
    if (p_end || s_end) {
      if (p_end != s_end) return std::nullopt;
      break;
    }
    std::string_view pseg = next_segment(pattern, pp);
    std::string_view sseg = next_segment(path, sp);
    if (is_param(pseg)) {
      if (sseg.empty()) return std::nullopt;
      if (params) (*params)[std::string(pseg.substr(1, pseg.size() - 2))] = std::string(sseg);
    } else {
      if (pseg != sseg) return std::nullopt;
      if (i < 64) key |= uint64_t{1} << (63 - i);
    }
    ++i;
  }
  return key;
}

}  // namespace

void Router::add(std::string method, std::string pattern, Handler handler, RouteOptions options) {
  if (pattern.empty() || pattern[0] != '/') throw std::invalid_argument("route pattern must start with '/': " + pattern);
  for (const auto& r : routes_) {
    if (r->method == method && r->pattern == pattern) {
      throw std::invalid_argument("duplicate route: " + method + " " + pattern);
    }
  }
  auto r = std::make_unique<Route>();
  r->method = std::move(method);
  r->pattern = std::move(pattern);
  r->handler = std::move(handler);
  r->options = std::move(options);
  routes_.push_back(std::move(r));
}

RouteMatch Router::match(std::string_view method, std::string_view path) const {
  RouteMatch m;
  const Route* best = nullptr;
  uint64_t best_key = 0;
  const Route* best_get = nullptr;  // HEAD falls back to GET when no HEAD route exists
  uint64_t best_get_key = 0;
  for (const auto& r : routes_) {
    auto key = match_pattern(r->pattern, path, nullptr);
    if (!key) continue;
    m.path_known = true;
    if (std::find(m.allowed.begin(), m.allowed.end(), r->method) == m.allowed.end()) m.allowed.push_back(r->method);
    // Routes of the request's method are preferred over a more specific pattern of another method,
    // so a valid request never gets 405 just because a sibling literal route exists.
    if (r->method == method && (!best || *key > best_key)) {
      best = r.get();
      best_key = *key;
    }
    if (method == "HEAD" && r->method == "GET" && (!best_get || *key > best_get_key)) {
      best_get = r.get();
      best_get_key = *key;
    }
  }
  if (!best) best = best_get;
  if (best) {
    m.route = best;
    match_pattern(best->pattern, path, &m.params);
  }
  return m;
}

}  // namespace imago::http

#include "auth/embed_origin.h"

#include <cctype>

namespace imago {

namespace {

Status bad_origin() {
  return Status::Invalid(
      "Field 'origin' must be a web origin such as https://shop.example (http or https, a host and "
      "an optional port; no path)");
}

bool host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

}  // namespace

Result<std::string> normalize_embed_origin(std::string_view origin) {
  if (origin.empty() || origin.size() > kMaxEmbedOriginChars) return bad_origin();
  std::string o;
  o.reserve(origin.size());
  for (char c : origin) o.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (o.back() == '/') o.pop_back();
  std::string scheme;
  if (o.starts_with("https://"))
    scheme = "https";
  else if (o.starts_with("http://"))
    scheme = "http";
  else
    return bad_origin();
  std::string_view rest = std::string_view(o).substr(scheme.size() + 3);
  std::string_view host = rest, port;
  if (rest.starts_with('[')) {  // an IPv6 literal: [::1]:8080
    size_t close = rest.find(']');
    if (close == std::string_view::npos || close < 2) return bad_origin();
    for (char c : rest.substr(1, close - 1)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return bad_origin();
    }
    host = rest.substr(0, close + 1);
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return bad_origin();
      port = after.substr(1);
      if (port.empty()) return bad_origin();
    }
  } else {
    if (size_t colon = rest.find(':'); colon != std::string_view::npos) {
      host = rest.substr(0, colon);
      port = rest.substr(colon + 1);
      if (port.empty()) return bad_origin();
    }
    if (host.empty() || host.front() == '.' || host.back() == '.') return bad_origin();
    for (char c : host) {
      if (!host_char(c)) return bad_origin();
    }
  }
  if (!port.empty()) {
    if (port.size() > 5) return bad_origin();
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return bad_origin();
    }
    int n = std::stoi(std::string(port));
    if (n < 1 || n > 65535) return bad_origin();
    if ((scheme == "https" && n == 443) || (scheme == "http" && n == 80)) port = {};
  }
  std::string out = scheme + "://" + std::string(host);
  if (!port.empty()) out += ":" + std::to_string(std::stoi(std::string(port)));
  return out;
}

Status check_embed_origin(const std::string& allowed, std::optional<std::string_view> request_origin,
                          bool own_site, std::optional<std::string_view> viewer_site) {
  const std::string restricted = "This embed token is restricted to pages of " + allowed;
  if (!request_origin || request_origin->empty()) {
    return Status(Code::kForbidden,
                  restricted + "; this join came without an Origin header (not from a browser)");
  }
  auto seen = normalize_embed_origin(*request_origin);
  if (seen.ok() && *seen == allowed) return Status::Ok();
  if (own_site) {
    if (viewer_site) {
      auto framed_by = normalize_embed_origin(*viewer_site);
      if (framed_by.ok() && *framed_by == allowed) return Status::Ok();
    }
    return Status(Code::kForbidden, restricted +
                                        "; the viewer page must run in a frame on that site, opened with "
                                        "/embed/{agent_code}?origin=" +
                                        allowed);
  }
  return Status(Code::kForbidden, restricted + "; this page is " + std::string(*request_origin));
}

}  // namespace imago

// The dashboard's static pages (web/dashboard/, no build step): each file at its own path, "x.html"
// also at "/x", index.html at "/". The file set is read once at start-up, so no request path ever
// reaches the file system; the content is read per request so edits show on reload.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/routes.h"
#include "util/log.h"

namespace imago::api {

namespace {

std::string content_type_for(const std::filesystem::path& p) {
  const std::string ext = p.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".json") return "application/json";
  return "application/octet-stream";
}

// Everything the pages load comes from this server; nothing runs inline; nobody may frame the
// dashboard (the live viewer it embeds is same-origin).
constexpr const char* kCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' "
    "blob:; "
    "connect-src 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

http::Response serve_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return http::Response::error(404, "NOT_FOUND", "Page not found");
  std::ostringstream buf;
  buf << in.rdbuf();
  http::Response r = http::Response::bytes(200, content_type_for(file), buf.str());
  r.headers.set("Cache-Control", "no-cache");
  r.headers.set("X-Content-Type-Options", "nosniff");
  // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with a form
  // POST, and the sign-in form's POST /sign-in needs its real Origin (dashboard_auth.cpp). Nothing
  // leaves for other sites either way.
  r.headers.set("Referrer-Policy", "same-origin");
  if (file.extension() == ".html") {
    r.headers.set("Content-Security-Policy", kCsp);
    r.headers.set("X-Frame-Options", "DENY");
  }
  return r;
}

}  // namespace

void register_dashboard_static_routes(http::Router& router, Services& s) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(s.config->web_dir) / "dashboard";
  std::error_code ec;
  if (s.config->web_dir.empty() || !fs::is_directory(root, ec)) {
    log::warn("dashboard_missing", {{"web_dir", s.config->web_dir}});
    return;
  }
  const http::RouteOptions open{.auth = http::AuthMode::kNone};
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const fs::path file = it->path();
    const std::string rel = fs::relative(file, root).generic_string();
    if (rel.empty() || rel.front() == '.') continue;
    auto handler = [file](http::Request&) { return serve_file(file); };
    router.add("GET", "/" + rel, handler, open);
    if (file.extension() == ".html") {
      const std::string stem = rel.substr(0, rel.size() - 5);
      if (stem == "index")
        router.add("GET", "/", handler, open);
      else
        router.add("GET", "/" + stem, handler, open);
    }
  }
}

}  // namespace imago::api

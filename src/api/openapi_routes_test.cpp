// docs/openapi.yaml and the router agree: every public route (/v1, /v2, /admin/v1, the health
// checks, /metrics, /openapi.json) is documented with its method, and every documented operation
// is a route. The dashboard's /dashboard/api/*, its static pages, /embed/* and /docs/api are left
// out of the document on purpose (docs/api.md says why).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>
#include <string>

#include "api/openapi_document.h"
#include "api/routes.h"
#include "config/config.h"

namespace imago::api {
namespace {

bool is_public(const std::string& pattern) {
  for (const char* prefix : {"/v1/", "/v2/", "/admin/v1/"}) {
    if (pattern.rfind(prefix, 0) == 0) return true;
  }
  return pattern == "/healthz" || pattern == "/readyz" || pattern == "/metrics" || pattern == "/openapi.json";
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

TEST(OpenApiDocument, ParsesAsOpenApi31) {
  boost::json::value doc = boost::json::parse(openapi_document_json());
  EXPECT_EQ(doc.at("openapi").as_string().subview().substr(0, 4), "3.1.");
  EXPECT_TRUE(doc.at("paths").is_object());
}

TEST(OpenApiDocument, ListsExactlyThePublicRoutesOfTheRouter) {
  Config config;
  Services services;
  services.config = &config;
  http::Router router;
  register_all_routes(router, services);

  std::set<std::string> routed;
  for (const auto& r : router.routes()) {
    if (is_public(r->pattern)) routed.insert(r->method + " " + r->pattern);
  }
  std::set<std::string> documented;
  const boost::json::value doc = boost::json::parse(openapi_document_json());
  const boost::json::object& paths = doc.at("paths").as_object();
  for (const auto& [path, item] : paths) {
    for (const auto& [key, op] : item.as_object()) {
      (void)op;
      const std::string method(key);
      if (method == "get" || method == "put" || method == "post" || method == "delete" || method == "patch") {
        documented.insert(upper(method) + " " + std::string(path));
      }
    }
  }
  for (const auto& r : routed) {
    EXPECT_TRUE(documented.count(r)) << r << " is a route but not in docs/openapi.yaml";
  }
  for (const auto& d : documented) {
    EXPECT_TRUE(routed.count(d)) << d << " is in docs/openapi.yaml but the router has no such public route";
  }
}

}  // namespace
}  // namespace imago::api

// The served API description: GET /openapi.json (no key, not rate limited) is the OpenAPI 3.1
// document with the public paths, and GET /docs/api is its reference page, made of this server's
// own files only (docs/api.md).
#include <gtest/gtest.h>

#include "support/test_server.h"

namespace imago::testing {
namespace {

TEST(OpenApiServed, DocumentAndReferencePageNeedNoKey) {
  TestServer srv;
  auto r = srv.get("/openapi.json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_TRUE(r.header("x-ratelimit-limit").empty()) << "the document is not metered";
  boost::json::value doc = r.json();
  ASSERT_TRUE(doc.is_object()) << r.body.substr(0, 200);
  EXPECT_EQ(doc.at("openapi").as_string().subview().substr(0, 4), "3.1.");
  const auto& paths = doc.at("paths").as_object();
  for (const char* p : {"/v1/agent/generate", "/v2/credit-summaries", "/healthz", "/admin/v1/accounts",
                        "/v1/runtime/rooms/{room_id}"}) {
    EXPECT_TRUE(paths.contains(p)) << p;
  }
  for (const auto& [path, item] : paths) {
    EXPECT_NE(std::string(path).rfind("/dashboard/", 0), 0u) << path << ": the dashboard's API is left out";
  }

  auto page = srv.get("/docs/api");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("/docs/api/reference.js"), std::string::npos);
  EXPECT_EQ(page.body.find("https://"), std::string::npos) << "nothing from elsewhere";
  EXPECT_NE(page.header("content-security-policy").find("script-src 'self'"), std::string::npos);
  auto js = srv.get("/docs/api/reference.js");
  ASSERT_EQ(js.status, 200);
  EXPECT_NE(js.body.find("/openapi.json"), std::string::npos);
}

}  // namespace
}  // namespace imago::testing

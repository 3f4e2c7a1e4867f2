#include "http/router.h"

#include <gtest/gtest.h>

namespace imago::http {
namespace {

Handler named(std::string name) {
  return [name](Request&) { return Response::bytes(200, "text/plain", name); };
}

std::string run(const RouteMatch& m) {
  Request req;
  return m.route ? m.route->handler(req).body : "";
}

TEST(Router, LiteralSegmentsWinOverParams) {
  Router r;
  // Registered param-first on purpose: precedence must not depend on registration order.
  r.add("GET", "/v1/agent/{code}", named("get_agent"));
  r.add("POST", "/v1/agent/{code}", named("update_agent"));
  r.add("POST", "/v1/agent/generate", named("generate"));
  r.add("GET", "/v1/agent/status/{id}", named("status"));
  r.add("POST", "/v1/agent/{code}/speak", named("speak"));

  auto m = r.match("POST", "/v1/agent/generate");
  EXPECT_EQ(run(m), "generate");
  EXPECT_TRUE(m.params.empty());

  m = r.match("GET", "/v1/agent/status/abc");
  EXPECT_EQ(run(m), "status");
  EXPECT_EQ(m.params.at("id"), "abc");

  m = r.match("GET", "/v1/agent/xyz");
  EXPECT_EQ(run(m), "get_agent");
  EXPECT_EQ(m.params.at("code"), "xyz");

  m = r.match("POST", "/v1/agent/xyz");
  EXPECT_EQ(run(m), "update_agent");

  m = r.match("POST", "/v1/agent/a1/speak");
  EXPECT_EQ(run(m), "speak");
  EXPECT_EQ(m.params.at("code"), "a1");
}

TEST(Router, MethodMatchPreferredOverMoreSpecificPatternOfAnotherMethod) {
  Router r;
  r.add("GET", "/v1/agent/status/{id}", named("status"));
  r.add("POST", "/v1/agent/{code}/speak", named("speak"));
  // An agent literally called "status" can still speak.
  auto m = r.match("POST", "/v1/agent/status/speak");
  EXPECT_EQ(run(m), "speak");
  EXPECT_EQ(m.params.at("code"), "status");
}

TEST(Router, UnknownPathIsNotKnown) {
  Router r;
  r.add("GET", "/v1/agents", named("list"));
  auto m = r.match("GET", "/v1/agent-generation");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_FALSE(m.path_known);
  EXPECT_TRUE(m.allowed.empty());
  EXPECT_FALSE(r.match("GET", "/v1/agents/").route);  // no trailing-slash aliasing
  EXPECT_FALSE(r.match("GET", "/v1").route);
  EXPECT_FALSE(r.match("GET", "").route);
  EXPECT_FALSE(r.match("GET", "v1/agents").route);
}

TEST(Router, WrongMethodReportsAllowedMethods) {
  Router r;
  r.add("GET", "/v1/keys", named("list"));
  r.add("POST", "/v1/keys", named("create"));
  r.add("DELETE", "/v1/keys/{id}", named("delete"));
  auto m = r.match("PUT", "/v1/keys");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_TRUE(m.path_known);
  EXPECT_EQ(m.allowed, (std::vector<std::string_view>{"GET", "POST"}));

  m = r.match("GET", "/v1/keys/key_1");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_TRUE(m.path_known);
  EXPECT_EQ(m.allowed, (std::vector<std::string_view>{"DELETE"}));
}

TEST(Router, ParamsMustBeNonEmpty) {
  Router r;
  r.add("GET", "/v1/agent/{code}", named("get"));
  EXPECT_FALSE(r.match("GET", "/v1/agent/").route);
  EXPECT_FALSE(r.match("GET", "/v1/agent").route);
  EXPECT_FALSE(r.match("GET", "/v1/agent/a/b").route);
}

TEST(Router, MultipleParams) {
  Router r;
  r.add("DELETE", "/admin/v1/accounts/{account}/keys/{key}", named("x"));
  auto m = r.match("DELETE", "/admin/v1/accounts/usr_1/keys/key_2");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.params.at("account"), "usr_1");
  EXPECT_EQ(m.params.at("key"), "key_2");
}

TEST(Router, HeadFallsBackToGet) {
  Router r;
  r.add("GET", "/healthz", named("health"));
  auto m = r.match("HEAD", "/healthz");
  EXPECT_EQ(run(m), "health");
}

TEST(Router, VeryLongPathsMatchNothing) {
  Router r;
  r.add("GET", "/a/{x}", named("a"));
  std::string path;
  for (int i = 0; i < 1000; ++i) path += "/a";
  auto m = r.match("GET", path);
  EXPECT_EQ(m.route, nullptr);
  EXPECT_FALSE(m.path_known);
}

TEST(Router, RootPath) {
  Router r;
  r.add("GET", "/", named("root"));
  EXPECT_EQ(run(r.match("GET", "/")), "root");
  EXPECT_FALSE(r.match("GET", "/x").route);
}

TEST(Router, TierFollowsMethodUnlessSet) {
  Router r;
  r.add("GET", "/a", named("a"));
  r.add("POST", "/a", named("a"));
  r.add("DELETE", "/a", named("a"));
  RouteOptions gen;
  gen.tier = Tier::kGenerate;
  r.add("POST", "/v1/agent/generate", named("g"), gen);
  RouteOptions exempt;
  exempt.tier = Tier::kExempt;
  r.add("GET", "/v1/runtime/x", named("r"), exempt);
  EXPECT_EQ(r.match("GET", "/a").route->tier(), Tier::kRead);
  EXPECT_EQ(r.match("POST", "/a").route->tier(), Tier::kWrite);
  EXPECT_EQ(r.match("DELETE", "/a").route->tier(), Tier::kWrite);
  EXPECT_EQ(r.match("POST", "/v1/agent/generate").route->tier(), Tier::kGenerate);
  EXPECT_EQ(r.match("GET", "/v1/runtime/x").route->tier(), Tier::kExempt);
}

TEST(Router, OptionsTravelWithTheRoute) {
  Router r;
  RouteOptions o;
  o.auth = AuthMode::kNone;
  o.body_limit = 100 << 20;
  r.add("POST", "/v1/files/upload", named("u"), o);
  auto m = r.match("POST", "/v1/files/upload");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->options.auth, AuthMode::kNone);
  EXPECT_EQ(m.route->options.body_limit, size_t{100} << 20);
}

TEST(Router, RejectsDuplicatesAndBadPatterns) {
  Router r;
  r.add("GET", "/a/{x}", named("a"));
  EXPECT_THROW(r.add("GET", "/a/{x}", named("b")), std::invalid_argument);
  EXPECT_THROW(r.add("GET", "a", named("b")), std::invalid_argument);
  EXPECT_NO_THROW(r.add("POST", "/a/{x}", named("c")));
}

}  // namespace
}  // namespace imago::http

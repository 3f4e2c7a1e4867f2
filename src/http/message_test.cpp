#include "http/message.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace imago::http {
namespace {

TEST(Headers, CaseInsensitiveLookup) {
  Headers h;
  h.add("Content-Type", "application/json");
  h.add("X-Thing", "1");
  EXPECT_EQ(h.get("content-type"), "application/json");
  EXPECT_EQ(h.get("CONTENT-TYPE"), "application/json");
  EXPECT_TRUE(h.has("x-thing"));
  EXPECT_FALSE(h.has("x-other"));
  EXPECT_FALSE(h.get("x-thin").has_value());
}

TEST(Headers, SetReplacesEveryOccurrenceAddAppends) {
  Headers h;
  h.add("Vary", "a");
  h.add("X-A", "1");
  h.add("vary", "b");
  EXPECT_EQ(h.all().size(), 3u);
  h.set("VARY", "c");
  ASSERT_EQ(h.all().size(), 2u);
  EXPECT_EQ(h.all()[0].second, "c");  // keeps the first position
  EXPECT_EQ(h.all()[1].first, "X-A");
  EXPECT_EQ(h.get("vary"), "c");
  h.set("New", "n");
  EXPECT_EQ(h.all().back().first, "New");
}

TEST(Request, Helpers) {
  Request r;
  r.params["code"] = "abc";
  r.query["limit"] = "5";
  r.headers.add("Content-Type", "Application/JSON; charset=utf-8");
  EXPECT_EQ(r.param("code"), "abc");
  EXPECT_EQ(r.param("missing"), "");
  EXPECT_EQ(r.query_param("limit"), "5");
  EXPECT_FALSE(r.query_param("offset").has_value());
  EXPECT_EQ(r.content_type(), "application/json");
  Request plain;
  plain.headers.add("content-type", " text/plain ");
  EXPECT_EQ(plain.content_type(), "text/plain");
  EXPECT_EQ(Request{}.content_type(), "");
}

TEST(Response, ErrorEnvelopeIsExactlySpec7) {
  Response r = Response::error(404, "NOT_FOUND", "Agent not found for code: x\"y");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.error_code, "NOT_FOUND");
  EXPECT_EQ(r.headers.get("Content-Type"), "application/json");
  EXPECT_EQ(r.body,
            R"({"error":{"code":"NOT_FOUND","message":"Agent not found for code: x\"y","httpStatus":404},)"
            R"("status":"error","status_code":404})");
  EXPECT_FALSE(r.stream);
}

TEST(Response, JsonAndBytes) {
  Response j = Response::json(201, boost::json::object{{"valid", true}});
  EXPECT_EQ(j.status, 201);
  EXPECT_EQ(j.body, R"({"valid":true})");
  EXPECT_EQ(j.headers.get("content-type"), "application/json");
  EXPECT_TRUE(j.error_code.empty());
  Response b = Response::bytes(200, "audio/wav", std::string("RIFF\0\1", 6));
  EXPECT_EQ(b.body.size(), 6u);
  EXPECT_EQ(b.headers.get("Content-Type"), "audio/wav");
}

TEST(Response, FromStatusMapsEveryCode) {
  struct Case {
    Code code;
    int status;
    const char* error;
  };
  const Case cases[] = {
      {Code::kInvalidArgument, 400, "VALIDATION_ERROR"},
      {Code::kUnauthenticated, 401, "UNAUTHORIZED"},
      {Code::kInsufficientFunds, 402, "INSUFFICIENT_BALANCE"},
      {Code::kForbidden, 403, "FORBIDDEN"},
      {Code::kNotFound, 404, "NOT_FOUND"},
      {Code::kConflict, 409, "CONFLICT"},
      {Code::kTooLarge, 413, "PAYLOAD_TOO_LARGE"},
      {Code::kUnsupportedMedia, 415, "UNSUPPORTED_MEDIA_TYPE"},
      {Code::kRateLimited, 429, "RATE_LIMITED"},
      {Code::kUnavailable, 503, "SERVICE_UNAVAILABLE"},
      {Code::kInternal, 500, "INTERNAL_ERROR"},
  };
  for (const auto& c : cases) {
    Response r = Response::from_status(Status(c.code, "the message"));
    EXPECT_EQ(r.status, c.status) << c.error;
    EXPECT_EQ(r.error_code, c.error);
    auto v = boost::json::parse(r.body);
    EXPECT_EQ(v.at("error").at("code").as_string(), c.error);
    EXPECT_EQ(v.at("error").at("httpStatus").as_int64(), c.status);
    EXPECT_EQ(v.at("status_code").as_int64(), c.status);
    EXPECT_EQ(v.at("status").as_string(), "error");
    if (c.status == 500) {
      EXPECT_NE(v.at("error").at("message").as_string(), "the message");  // no internals leak
    } else {
      EXPECT_EQ(v.at("error").at("message").as_string(), "the message");
    }
  }
}

TEST(Response, InsufficientCreditsMessagePassesThrough) {
  Response r = Response::from_status(Status::InsufficientFunds("Insufficient credits"));
  EXPECT_EQ(r.body,
            R"({"error":{"code":"INSUFFICIENT_BALANCE","message":"Insufficient credits","httpStatus":402},)"
            R"("status":"error","status_code":402})");
}

}  // namespace
}  // namespace imago::http

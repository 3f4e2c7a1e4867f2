// File upload (SPEC 4.18) and downloads over real HTTP.
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

std::string error_code(const HttpResponse& r) {
  auto v = r.json();
  if (!v.is_object() || !v.as_object().contains("error")) return "";
  return std::string(v.at("error").at("code").as_string());
}

HttpResponse multipart(const TestServer& s, const std::string& secret, const std::string& filename,
                       const std::string& bytes, const std::string& extra = "") {
  std::string b = "----imagoTestBoundary7";
  std::string body = "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + filename +
                     "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + bytes + "\r\n" + extra + "--" +
                     b + "--\r\n";
  HttpRequestOptions o;
  o.content_type = "multipart/form-data; boundary=" + b;
  o.timeout_ms = 60000;
  return s.request("POST", "/v1/files/upload", body, secret, o);
}

TEST(Files, UploadByBase64MultipartAndUrlThenUseIt) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  auto other = s.create_account("enterprise", 1000);

  auto r = s.post(
      "/v1/files/upload",
      json::serialize(json::object{{"file_data", base64_encode(face_jpeg())}, {"file_name", "me.jpg"}}),
      acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = r.json().at("data");
  std::string id = str(d, "id");
  std::string url = str(d, "file_url");
  EXPECT_EQ(id.rfind("file_", 0), 0u);
  EXPECT_EQ(url, s.url() + "/v1/files/" + id + ".jpg");
  EXPECT_EQ(str(d, "file_type"), "image");
  EXPECT_EQ(str(d, "mime_type"), "image/jpeg");
  EXPECT_EQ(d.at("file_size").as_int64(), static_cast<int64_t>(face_jpeg().size()));
  // Downloads need the owner's key; everyone else sees nothing.
  auto dl = s.get("/v1/files/" + id + ".jpg", acct.api_secret);
  ASSERT_EQ(dl.status, 200);
  EXPECT_EQ(dl.body, face_jpeg());
  EXPECT_EQ(dl.header("content-type"), "image/jpeg");
  EXPECT_EQ(s.get("/v1/files/" + id, acct.api_secret).body, face_jpeg());
  EXPECT_EQ(s.get("/v1/files/" + id).status, 401);
  EXPECT_EQ(s.get("/v1/files/" + id, other.api_secret).status, 404);

  auto m = multipart(s, acct.api_secret, "face.jpg", face_jpeg());
  ASSERT_EQ(m.status, 200) << m.body;
  EXPECT_EQ(str(m.json().at("data"), "mime_type"), "image/jpeg");

  auto u =
      s.post("/v1/files/upload",
             json::serialize(json::object{{"file_url", fx.put_file("f.jpg", face_jpeg())}}), acct.api_secret);
  ASSERT_EQ(u.status, 200) << u.body;
  EXPECT_EQ(str(u.json().at("data"), "original_source"), fx.url() + "/files/f.jpg");

  // The returned URL is accepted by generate, by its owner only.
  auto other_gen =
      s.post("/v1/agent/generate", json::serialize(json::object{{"image", url}}), other.api_secret);
  EXPECT_EQ(other_gen.status, 400) << other_gen.body;
  auto gen = s.post("/v1/agent/generate", json::serialize(json::object{{"image", url}}), acct.api_secret);
  ASSERT_EQ(gen.status, 200) << gen.body;
  auto st = wait_agent(s, acct.api_secret, str(gen.json(), "agent_id"));
  EXPECT_EQ(str(st, "status"), "ready") << json::serialize(st);

  auto del = s.del("/v1/files/" + id, acct.api_secret);
  EXPECT_EQ(del.status, 200) << del.body;
  EXPECT_EQ(s.get("/v1/files/" + id, acct.api_secret).status, 404);
}

TEST(Files, SizeAndTypeLimits) {
  FixtureServer fx;
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  // Over 10 MB of image: 413, by base64, multipart and URL.
  std::string big_image = face_jpeg() + std::string((10 << 20) + 1, '\0');
  auto b64 = s.post("/v1/files/upload",
                    json::serialize(json::object{{"file_data", base64_encode(big_image)}}), acct.api_secret);
  EXPECT_EQ(b64.status, 413) << b64.body;
  EXPECT_EQ(error_code(b64), "PAYLOAD_TOO_LARGE");
  EXPECT_EQ(multipart(s, acct.api_secret, "big.jpg", big_image).status, 413);
  auto by_url =
      s.post("/v1/files/upload",
             json::serialize(json::object{{"file_url", fx.put_file("big.jpg", big_image)}}), acct.api_secret);
  EXPECT_EQ(by_url.status, 413) << by_url.body;
  // Audio over its 25 MB limit (a WAV header and silence).
  std::string wav = std::string("RIFF\0\0\0\0WAVEfmt ", 16) + std::string((25 << 20) + 10, '\0');
  EXPECT_EQ(multipart(s, acct.api_secret, "long.wav", wav).status, 413);
  // Not an image, video or audio: 415, whatever the name says.
  auto pdf = multipart(s, acct.api_secret, "photo.jpg", "%PDF-1.7 definitely a document");
  EXPECT_EQ(pdf.status, 415) << pdf.body;
  EXPECT_EQ(error_code(pdf), "UNSUPPORTED_MEDIA_TYPE");
  auto typed =
      s.post("/v1/files/upload",
             json::serialize(json::object{{"file_data", base64_encode(face_jpeg())}, {"file_type", "video"}}),
             acct.api_secret);
  EXPECT_EQ(typed.status, 415) << typed.body;
  HttpRequestOptions xml;
  xml.content_type = "application/xml";
  EXPECT_EQ(s.request("POST", "/v1/files/upload", "<a/>", acct.api_secret, xml).status, 415);
  // Malformed requests: 400.
  EXPECT_EQ(s.post("/v1/files/upload", R"({"file_data": "@@@"})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/files/upload", R"({})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/files/upload", R"({"file_url": "ftp://x/y"})", acct.api_secret).status, 400);
  EXPECT_EQ(s.post("/v1/files/upload", json::serialize(json::object{{"file_url", fx.url() + "/status/500"}}),
                   acct.api_secret)
                .status,
            400);
  // A video up to 100 MB is fine (MP4 signature and padding).
  std::string mp4 = std::string(
                        "\0\0\0\x18"
                        "ftypisom\0\0\0\0",
                        16) +
                    std::string(12 << 20, '\0');
  for (size_t i = 16; i < mp4.size(); ++i) mp4[i] = static_cast<char>((i * 131) >> 5);  // order shows
  auto v = multipart(s, acct.api_secret, "clip.mp4", mp4);
  ASSERT_EQ(v.status, 200) << v.body;
  EXPECT_EQ(str(v.json().at("data"), "file_type"), "video");
  // Downloaded back whole, streamed from the blob store chunk by chunk (chunked encoding).
  std::string path = str(v.json().at("data"), "file_url").substr(s.url().size());
  auto d = s.get(path, acct.api_secret);
  ASSERT_EQ(d.status, 200);
  EXPECT_EQ(d.header("content-type"), "video/mp4");
  EXPECT_EQ(d.header("transfer-encoding"), "chunked");
  EXPECT_EQ(d.body.size(), mp4.size());
  EXPECT_TRUE(d.body == mp4);
  EXPECT_EQ(s.get(path, "wrong").status, 401);
}

}  // namespace
}  // namespace imago::testing

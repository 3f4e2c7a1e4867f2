// Decompression bombs: an image whose header declares far more pixels than
// the file could sensibly hold is refused at request time, 400 VALIDATION_ERROR, nothing charged,
// nothing stored; by URL (fetched by the job) it fails the job with the refund.
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "support/test_server.h"
#include "util/base64.h"
#include "util/crypto.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

void put_be32(std::string& s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s.push_back(char((v >> (8 * i)) & 0xff));
}
void chunk(std::string& png, const std::string& type, const std::string& data) {
  put_be32(png, uint32_t(data.size()));
  std::string body = type + data;
  png += body;
  put_be32(png, crc32(body));
}

// A well-formed PNG header declaring w x h RGB pixels, followed by a little compressed data: the
// shape of a decompression bomb (the real one carries 2.6 MB of deflated zeros).
std::string bomb_png(uint32_t w, uint32_t h) {
  std::string png("\x89PNG\r\n\x1a\n", 8), ihdr;
  put_be32(ihdr, w);
  put_be32(ihdr, h);
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, no interlace
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", std::string("\x78\x9c\x63\x60\x00\x00\x00\x02\x00\x01", 10));
  chunk(png, "IEND", "");
  return png;
}

std::string code_of(const HttpResponse& r) {
  auto v = r.json();
  return v.is_object() && v.as_object().contains("error") ? std::string(v.at("error").at("code").as_string())
                                                          : "";
}

TEST(MediaLimits, ImageBombIsRefusedAtRequestTimeAndChargesNothing) {
  TestServer s;
  auto acct = s.create_account("enterprise", 1000);
  for (auto [w, h] : {std::pair{30000u, 30000u}, std::pair{20000u, 2u}, std::pair{7000u, 7000u}}) {
    std::string bomb = bomb_png(w, h);
    auto r = s.post("/v1/agent/generate", json::serialize(json::object{{"image", base64_encode(bomb)}}),
                    acct.api_secret);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(code_of(r), "VALIDATION_ERROR") << r.body;
    EXPECT_NE(r.body.find(std::to_string(w) + "x" + std::to_string(h)), std::string::npos) << r.body;
    auto data_uri =
        s.post("/v1/agent/generate",
               json::serialize(json::object{{"image", "data:image/png;base64," + base64_encode(bomb)}}),
               acct.api_secret);
    EXPECT_EQ(data_uri.status, 400) << data_uri.body;
    // Uploading it as a file is refused too.
    auto up = s.post("/v1/files/upload", json::serialize(json::object{{"file_data", base64_encode(bomb)}}),
                     acct.api_secret);
    EXPECT_EQ(up.status, 400) << up.body;
    EXPECT_EQ(code_of(up), "VALIDATION_ERROR") << up.body;
  }
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
  EXPECT_EQ(s.get("/v1/agents", acct.api_secret).json().at("pagination").at("total").as_int64(), 0);
  // A normal photo still goes through.
  auto ok = s.post("/v1/agent/generate", json::serialize(json::object{{"image", base64_encode(face_jpeg())}}),
                   acct.api_secret);
  EXPECT_EQ(ok.status, 200) << ok.body;
}

TEST(MediaLimits, ImageBombByUrlFailsTheJobAndIsRefunded) {
  FixtureServer fx;
  TestServer s({"--allow-private-fetch"});
  auto acct = s.create_account("enterprise", 1000);
  std::string url = fx.put_file("bomb.png", bomb_png(30000, 30000));
  auto r = s.post("/v1/agent/generate", json::serialize(json::object{{"image", url}}), acct.api_secret);
  ASSERT_EQ(r.status, 200) << r.body;
  json::value agent = wait_agent(s, acct.api_secret, str(r.json(), "agent_id"));
  EXPECT_EQ(str(agent, "status"), "failed") << json::serialize(agent);
  EXPECT_NE(str(agent, "error_message").find("30000x30000"), std::string::npos) << json::serialize(agent);
  EXPECT_EQ(balance_of(s, acct.api_secret), 1000);
}

}  // namespace
}  // namespace imago::testing

// Encoded live media over real WebSockets against the real imagod (docs/live-protocol.md,
// "Encoded media"): a media=h264+opus viewer gets session.started, the codec configurations, then
// a key frame first; an Opus packet per picture (40 ms) on the audio clock; a viewer joining a running room
// gets its own configuration and key frame; today's viewers keep today's format; bad parameters
// are refused before upgrading.
#include <gtest/gtest.h>

#include "fixtures/fixture.h"
#include "support/media_message.h"
#include "support/test_server.h"
#include "support/ws_client.h"

namespace imago::testing {
namespace {

namespace json = boost::json;

constexpr int kKey = 8, kConfig = 16;

struct Live {
  TestServer s;
  TestAccount acct;
  std::string code, token;
  Live() {
    acct = s.create_account("enterprise", 2000);
    auto r = s.post("/v1/agent/generate", R"({"prompt":"A friendly guide.","aspect_ratio":"1:1"})",
                    acct.api_secret);
    EXPECT_EQ(r.status, 200) << r.body;
    code = str(r.json(), "agent_id");
    EXPECT_TRUE(eventually(
        [&] {
          return str(s.get("/v1/agent/" + code, acct.api_secret).json().at("data"), "status") == "ready";
        },
        120));
    token = str(s.post("/v1/runtime-tokens/request", "", acct.api_secret).json().at("data"), "token");
  }
  std::unique_ptr<WsClient> join(const std::string& query, int* status = nullptr,
                                 std::string* body = nullptr) {
    WsClient::Options o;
    o.bearer = token;
    return WsClient::connect(s.port(), "/v1/runtime/rooms/lobby?agent_code=" + code + query, o, status, body);
  }
};

// Reads an h264+opus viewer's first messages: session.started, both configurations, and media up
// to `pictures` access units, checking their order and fields.
void expect_config_then_key_frame_first(WsClient& ws, int pictures) {
  auto first = ws.read();
  ASSERT_TRUE(first && first->text);
  auto st = json::parse(first->data).as_object();
  EXPECT_EQ(st.at("type").as_string(), "session.started");
  EXPECT_EQ(st.at("video_codec").as_string(), "h264");
  EXPECT_EQ(st.at("audio_codec").as_string(), "opus");
  EXPECT_EQ(st.at("media").as_string(), "h264+opus");
  EXPECT_EQ(st.at("audio_rate").as_int64(), 48000);
  EXPECT_EQ(st.at("framing_version").as_int64(), 1);
  EXPECT_EQ(st.at("width").as_int64(), 512);
  bool video_config = false, audio_config = false;
  int access_units = 0, opus = 0;
  for (int i = 0; i < 400 && access_units < pictures; ++i) {
    auto m = ws.read();
    ASSERT_TRUE(m);
    auto x = media(*m);
    if (!x) continue;
    if (x->flags & kConfig) {
      if (x->kind == 1) {
        EXPECT_EQ(x->codec, 3);
        EXPECT_EQ(x->a, 512);
        EXPECT_EQ(x->b, 512);
        ASSERT_GE(x->payload.size(), 8u);
        EXPECT_EQ(uint8_t(x->payload[0]), 1);   // avcC configurationVersion
        EXPECT_EQ(uint8_t(x->payload[1]), 66);  // baseline
        video_config = true;
      } else {
        EXPECT_EQ(x->codec, 2);
        EXPECT_EQ(x->payload.substr(0, 8), "OpusHead");
        audio_config = true;
      }
      EXPECT_EQ(access_units + opus, 0) << "configurations come before any media";
      continue;
    }
    if (x->kind == 1) {
      ASSERT_TRUE(video_config);
      EXPECT_EQ(x->codec, 3);
      if (access_units == 0) EXPECT_TRUE(x->flags & kKey) << "the first access unit is a key frame";
      EXPECT_EQ(x->pts, int64_t(x->index) * 40000);
      // AVCC: a 4-byte length, not an Annex B start code.
      ASSERT_GT(x->payload.size(), 4u);
      EXPECT_FALSE(x->payload[0] == 0 && x->payload[1] == 0 && x->payload[2] == 0 && x->payload[3] == 1);
      ++access_units;
    } else {
      ASSERT_TRUE(audio_config);
      EXPECT_EQ(x->codec, 2);
      // One packet per picture: its index and pts, 40 ms (1920 samples at 48 kHz) in two Opus
      // frames (RFC 6716 3.2: TOC code 1 or 3).
      EXPECT_EQ(x->pts, int64_t(x->index) * 40000);
      EXPECT_EQ(x->a, 1920);
      ASSERT_FALSE(x->payload.empty());
      EXPECT_NE(uint8_t(x->payload[0]) & 3, 0) << "a single-frame packet";
      EXPECT_LT(x->payload.size(), 800u);  // 40 ms at 32 kbit/s is ~160 bytes
      ++opus;
    }
  }
  EXPECT_EQ(access_units, pictures);
  EXPECT_GE(opus, pictures);
}

TEST(LiveEncodedMedia, H264ViewerGetsConfigurationThenAKeyFrameFirst) {
  Live L;
  // "+" escaped, as browsers' encodeURIComponent sends it.
  auto a = L.join("&media=h264%2Bopus");
  ASSERT_TRUE(a);
  expect_config_then_key_frame_first(*a, 10);
  // A viewer of today's format in the same room still gets JPEG + PCM.
  auto j = L.join("");
  ASSERT_TRUE(j);
  auto st = j->read_event("session.started");
  ASSERT_TRUE(st);
  EXPECT_NE(st->data.find(R"("video_codec":"jpeg")"), std::string::npos) << st->data;
  int jpeg = 0;
  for (int i = 0; i < 200 && jpeg < 3; ++i) {
    auto m = j->read();
    ASSERT_TRUE(m);
    auto x = media(*m);
    if (!x) continue;
    EXPECT_EQ(x->codec, 1);
    jpeg += x->kind == 1;
  }
  EXPECT_EQ(jpeg, 3);
  // A later h264 viewer (a literal "+": form-decoded as a space, taken too) joins a running
  // stream: its own configuration and a key frame at once, not at the next periodic one.
  auto b = L.join("&media=h264+opus");
  ASSERT_TRUE(b);
  expect_config_then_key_frame_first(*b, 3);
}

TEST(LiveEncodedMedia, BadMediaOrQualityIsRefusedBeforeUpgrading) {
  Live L;
  int status = 0;
  std::string body;
  EXPECT_FALSE(L.join("&media=vp9", &status, &body));
  EXPECT_EQ(status, 400);
  EXPECT_NE(body.find("media"), std::string::npos) << body;
  EXPECT_FALSE(L.join("&media=h264%2Bopus&quality=ultra", &status, &body));
  EXPECT_EQ(status, 400);
  EXPECT_NE(body.find("quality"), std::string::npos) << body;
  // Nothing was started, so nothing was charged.
  auto rooms = L.s.get("/v1/rooms", L.acct.api_secret).json();
  EXPECT_EQ(rooms.at("data").as_array().size(), 0u);
  auto ok = L.join("&media=h264%2Bopus&quality=low");
  ASSERT_TRUE(ok);
  auto st = ok->read_event("session.started");
  ASSERT_TRUE(st);
  EXPECT_NE(st->data.find(R"("quality":"low")"), std::string::npos) << st->data;
  EXPECT_NE(st->data.find(R"("width":360)"), std::string::npos) << st->data;
}

}  // namespace
}  // namespace imago::testing

// Media framing of encoded packets on a viewer's WebSocket (viewer_media_sink.h) and the room's
// fan-out (media_fanout.h): configuration first, a key frame first, back-pressure that drops to
// the next key frame and asks for one, interrupt.
#include "live/media_framing.h"

#include <gtest/gtest.h>

#include <mutex>

#include "live/media_fanout.h"
#include "live/viewer_media_sink.h"

namespace imago::live {
namespace {

// A connection whose queue the test sets (a viewer that reads slowly or not at all).
class ThrottledConnection : public http::WebSocketConnection {
 public:
  bool send_text(std::string) override { return true; }
  bool send_binary(http::WsBytes b, http::WsMessageClass cls) override {
    std::lock_guard l(mu);
    shared.push_back(b);
    sent.push_back({*b, cls});
    if (!draining) queued += sent.back().first.size();
    return true;
  }
  void discard_queued(http::WsMessageClass cls) override {
    std::lock_guard l(mu);
    discarded.push_back(cls);
    if (cls == http::WsMessageClass::kVideo) queued = 0;
  }
  size_t queued_bytes() const override {
    std::lock_guard l(mu);
    return queued;
  }
  void close(uint16_t, std::string) override {}
  const std::string& client_ip() const override { return ip; }

  std::vector<MediaHeader> headers() {
    std::lock_guard l(mu);
    std::vector<MediaHeader> out;
    for (auto& [b, cls] : sent) {
      MediaHeader h;
      if (decode_media_header(b, &h)) out.push_back(h);
    }
    return out;
  }

  mutable std::mutex mu;
  std::vector<std::pair<std::string, http::WsMessageClass>> sent;
  std::vector<http::WsBytes> shared;  // the messages as handed over (to see which are shared)
  std::vector<http::WsMessageClass> discarded;
  size_t queued = 0;
  bool draining = true;  // true: everything sent is written at once (queue stays as set)
  std::string ip = "127.0.0.1";
};

std::shared_ptr<const EncodedPacket> video(uint32_t n, bool key, size_t bytes = 1000) {
  auto p = std::make_shared<EncodedPacket>();
  p->kind = MediaKind::kVideo;
  p->codec = kCodecH264;
  p->flags = key ? kFlagKeyFrame : 0;
  p->frame_index = n;
  p->pts_us = n * 40000;
  p->data.assign(bytes, 'v');
  return p;
}

std::shared_ptr<const EncodedPacket> opus(uint32_t k) {
  auto p = std::make_shared<EncodedPacket>();
  p->kind = MediaKind::kAudio;
  p->codec = kCodecOpus;
  p->flags = kFlagSpeaking;
  p->frame_index = k;
  p->pts_us = k * 40000;
  p->duration_us = 40000;
  p->data = "opus";
  return p;
}

CodecConfig h264_config() {
  CodecConfig c;
  c.width = 512;
  c.height = 288;
  c.avcc = std::string("\1\x42\xc0\x1e\xff\xe1", 6);
  c.opus_head = std::string("OpusHead\1\1\x38\1\xc0\x5d\0\0\0\0\0", 19);
  return c;
}

TEST(MediaFraming, HeaderRoundTripsForEveryPayload) {
  MediaHeader h;
  h.kind = MediaKind::kVideo;
  h.codec = kCodecH264;
  h.flags = kFlagKeyFrame | kFlagSpeaking;
  h.frame_index = 0x01020304;
  h.pts_us = int64_t{0x0102030405} * 40;
  h.a = 512;
  h.b = 288;
  const std::string m = encode_media_message(h, "payload");
  ASSERT_EQ(m.size(), kMediaHeaderBytes + 7);
  EXPECT_EQ(m.substr(20), "payload");
  EXPECT_EQ(uint8_t(m[0]), 1);
  EXPECT_EQ(uint8_t(m[1]), 3);
  EXPECT_EQ(uint8_t(m[2]), kFlagKeyFrame | kFlagSpeaking);  // little-endian
  MediaHeader back;
  ASSERT_TRUE(decode_media_header(m, &back));
  EXPECT_EQ(back.kind, h.kind);
  EXPECT_EQ(back.codec, h.codec);
  EXPECT_EQ(back.flags, h.flags);
  EXPECT_EQ(back.frame_index, h.frame_index);
  EXPECT_EQ(back.pts_us, h.pts_us);
  EXPECT_EQ(back.a, 512);
  EXPECT_EQ(back.b, 288);
  EXPECT_FALSE(decode_media_header(m.substr(0, 19), &back));
}

TEST(ViewerMediaSink, ConfigurationThenAudioAndVideoInTheHeaderFields) {
  auto c = std::make_shared<ThrottledConnection>();
  ViewerMediaSink sink(c, MediaFormat::kH264Opus, 512 * 1024);
  sink.on_config(h264_config());
  sink.on_packet(opus(6));
  sink.on_packet(video(3, true));
  auto h = c->headers();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].kind, MediaKind::kVideo);
  EXPECT_EQ(h[0].codec, kCodecH264);
  EXPECT_EQ(h[0].flags, kFlagConfig);
  EXPECT_EQ(h[0].a, 512);
  EXPECT_EQ(h[0].b, 288);
  EXPECT_EQ(h[1].kind, MediaKind::kAudio);
  EXPECT_EQ(h[1].codec, kCodecOpus);
  EXPECT_EQ(h[1].flags, kFlagConfig);
  EXPECT_EQ(h[1].a, 1920);
  EXPECT_EQ(c->sent[1].first.substr(20), h264_config().opus_head);
  EXPECT_EQ(h[2].frame_index, 6u);
  EXPECT_EQ(h[2].pts_us, 240000);
  EXPECT_EQ(h[2].a, 1920);  // 40 ms at 48 kHz
  EXPECT_EQ(h[3].frame_index, 3u);
  EXPECT_EQ(h[3].flags, kFlagKeyFrame);
  EXPECT_EQ(h[3].a, 512);
  // Configurations are control messages: never dropped for a slow viewer nor discarded on interrupt.
  EXPECT_EQ(c->sent[0].second, http::WsMessageClass::kControl);
  EXPECT_EQ(c->sent[2].second, http::WsMessageClass::kAudio);
  EXPECT_EQ(c->sent[3].second, http::WsMessageClass::kVideo);
}

TEST(ViewerMediaSink, AThrottledViewerDropsToTheNextKeyFrameAndAsksForOneOnceDrained) {
  auto c = std::make_shared<ThrottledConnection>();
  ViewerMediaSink sink(c, MediaFormat::kH264Opus, 10'000);
  sink.on_config(h264_config());
  EXPECT_TRUE(sink.wants_key_frame()) << "a new viewer needs a key frame";
  sink.on_packet(video(0, true));
  EXPECT_FALSE(sink.wants_key_frame());
  sink.on_packet(video(1, false));
  // The viewer stops reading: 12 KB queued, over the 10 KB bound.
  c->queued = 12'000;
  sink.on_packet(opus(4));
  sink.on_packet(video(2, false));
  EXPECT_FALSE(sink.wants_key_frame()) << "no key frame while it could not take it";
  // It catches up, but pictures that refer to the dropped one are no use: dropped until a key frame.
  c->queued = 0;
  EXPECT_TRUE(sink.wants_key_frame());
  sink.on_packet(video(3, false));
  sink.on_packet(opus(6));
  sink.on_packet(video(4, true));
  sink.on_packet(video(5, false));
  EXPECT_FALSE(sink.wants_key_frame());
  std::vector<uint32_t> pictures, audio;
  for (auto& h : c->headers()) {
    if (h.flags & kFlagConfig) continue;
    (h.kind == MediaKind::kVideo ? pictures : audio).push_back(h.frame_index);
  }
  EXPECT_EQ(pictures, (std::vector<uint32_t>{0, 1, 4, 5}));
  EXPECT_EQ(audio, (std::vector<uint32_t>{4, 6})) << "audio is never dropped";
  EXPECT_EQ(sink.video_dropped(), 2);
}

TEST(ViewerMediaSink, JpegViewerGetsTodaysMessagesAndNeverAsksForKeyFrames) {
  auto c = std::make_shared<ThrottledConnection>();
  ViewerMediaSink sink(c, MediaFormat::kJpegPcm, 10'000);
  CodecConfig cfg;
  cfg.width = 256;
  cfg.height = 256;
  cfg.video_codec = kCodecJpeg;
  cfg.audio_codec = kCodecPcmS16;
  sink.on_config(cfg);
  EXPECT_TRUE(c->sent.empty()) << "no configuration messages in today's format";
  auto pcm = std::make_shared<EncodedPacket>();
  pcm->kind = MediaKind::kAudio;
  pcm->codec = kCodecPcmS16;
  pcm->data.assign(1920, '\0');
  auto jpeg = std::make_shared<EncodedPacket>();
  jpeg->codec = kCodecJpeg;
  jpeg->flags = kFlagKeyFrame;
  jpeg->data = "jpeg";
  sink.on_packet(pcm);
  sink.on_packet(jpeg);
  c->queued = 20'000;
  sink.on_packet(jpeg);
  EXPECT_FALSE(sink.wants_key_frame());
  c->queued = 0;
  sink.on_packet(jpeg);
  auto h = c->headers();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].a, 960);  // samples
  EXPECT_EQ(h[1].codec, kCodecJpeg);
  EXPECT_EQ(h[1].a, 256);
  EXPECT_EQ(h[2].codec, kCodecJpeg);
}

TEST(ViewerMediaSink, InterruptDiscardsQueuedMediaAndNeedsAKeyFrameAfterDroppedPictures) {
  auto c = std::make_shared<ThrottledConnection>();
  c->draining = false;
  ViewerMediaSink sink(c, MediaFormat::kH264Opus, 1'000'000);
  sink.on_config(h264_config());
  sink.on_packet(video(0, true));
  EXPECT_FALSE(sink.wants_key_frame());
  sink.on_interrupt();
  EXPECT_EQ(c->discarded,
            (std::vector<http::WsMessageClass>{http::WsMessageClass::kAudio, http::WsMessageClass::kVideo}));
  EXPECT_TRUE(sink.wants_key_frame());
  sink.on_packet(video(1, false));
  EXPECT_EQ(sink.video_dropped(), 1);
}

struct RecordingSink : MediaSink {
  void on_config(const CodecConfig& c) override { configs.push_back(c); }
  void on_packet(const std::shared_ptr<const EncodedPacket>& p) override { packets.push_back(p); }
  void on_end() override { ended = true; }
  std::vector<CodecConfig> configs;
  std::vector<std::shared_ptr<const EncodedPacket>> packets;
  bool ended = false;
};

TEST(MediaFanout, EachSinkIsConfiguredThenGetsItsFormatStartingWithAKeyFrame) {
  MediaFanout f;
  auto h264 = std::make_shared<RecordingSink>();
  auto jpeg = std::make_shared<RecordingSink>();
  f.add(h264, MediaFormat::kH264Opus);
  f.add(jpeg, MediaFormat::kJpegPcm);
  EXPECT_TRUE(f.wants(MediaFormat::kH264Opus));
  EXPECT_TRUE(f.wants_key_frame());
  auto config_for = [](MediaFormat m) {
    CodecConfig c;
    c.video_codec = m == MediaFormat::kH264Opus ? kCodecH264 : kCodecJpeg;
    return c;
  };
  FramePackets p;
  p.h264 = video(0, false);  // not a key frame: withheld from a sink that has had none
  p.opus = {opus(0), opus(1)};
  p.pcm = std::make_shared<EncodedPacket>();
  f.deliver(p, config_for);
  ASSERT_EQ(h264->configs.size(), 1u);
  EXPECT_EQ(h264->configs[0].video_codec, kCodecH264);
  EXPECT_EQ(jpeg->configs[0].video_codec, kCodecJpeg);
  EXPECT_EQ(h264->packets.size(), 2u);  // the audio only
  EXPECT_EQ(jpeg->packets.size(), 1u);
  EXPECT_TRUE(f.wants_key_frame());
  p.h264 = video(1, true);
  f.deliver(p, config_for);
  EXPECT_EQ(h264->packets.size(), 5u);
  EXPECT_EQ(h264->packets.back()->frame_index, 1u);
  EXPECT_FALSE(f.wants_key_frame());
  EXPECT_EQ(h264->configs.size(), 1u) << "configured once";
  f.remove(jpeg.get());
  EXPECT_TRUE(jpeg->ended);
  EXPECT_FALSE(f.wants(MediaFormat::kJpegPcm));
  f.end_all();
  EXPECT_TRUE(h264->ended);
  EXPECT_TRUE(f.empty());
}

// Twenty viewers of a format cost one framing per packet: every viewer is handed the same
// immutable message, and its bytes are what a viewer framing the packet itself would send. A
// viewer held back by its own queue still drops its pictures alone.
TEST(MediaFanout, ViewersOfAFormatShareOneMessagePerPacketAndKeepTheirOwnGate) {
  MediaFanout f;
  std::vector<std::shared_ptr<ThrottledConnection>> conns;
  std::vector<std::shared_ptr<ViewerMediaSink>> sinks;
  for (int i = 0; i < 3; ++i) {
    conns.push_back(std::make_shared<ThrottledConnection>());
    sinks.push_back(std::make_shared<ViewerMediaSink>(conns.back(), MediaFormat::kH264Opus, 10'000));
    f.add(sinks.back(), MediaFormat::kH264Opus);
  }
  auto recorder = std::make_shared<RecordingSink>();  // a sink that takes packets, not messages
  f.add(recorder, MediaFormat::kH264Opus);
  int configs_asked = 0;
  auto config_for = [&](MediaFormat) {
    ++configs_asked;
    return h264_config();
  };
  FramePackets p;
  p.h264 = video(0, true);
  p.opus = {opus(0), opus(1)};
  f.deliver(p, config_for);
  EXPECT_EQ(configs_asked, 1) << "the format's configuration is asked for once per delivery";
  conns[2]->queued = 12'000;  // this viewer stops reading
  p.h264 = video(1, false);
  p.opus = {opus(2), opus(3)};
  f.deliver(p, config_for);
  // Two configuration messages (each viewer's own), then audio, audio, video per frame.
  ASSERT_EQ(conns[0]->shared.size(), 8u);
  ASSERT_EQ(conns[1]->shared.size(), 8u);
  ASSERT_EQ(conns[2]->shared.size(), 7u) << "the throttled viewer's second picture is dropped";
  for (size_t i = 2; i < 8; ++i) EXPECT_EQ(conns[0]->shared[i], conns[1]->shared[i]) << i;
  for (size_t i = 2; i < 7; ++i) EXPECT_EQ(conns[0]->shared[i], conns[2]->shared[i]) << i;
  EXPECT_EQ(sinks[2]->video_dropped(), 1);
  EXPECT_EQ(sinks[0]->video_dropped(), 0);
  EXPECT_EQ(recorder->packets.size(), 6u);

  // The shared bytes are those of a viewer that frames the packet itself.
  auto alone = std::make_shared<ThrottledConnection>();
  ViewerMediaSink own(alone, MediaFormat::kH264Opus, 10'000);
  own.on_config(h264_config());
  own.on_packet(opus(2));
  own.on_packet(video(0, true));
  own.on_packet(video(1, false));
  ASSERT_EQ(alone->sent.size(), 5u);
  EXPECT_EQ(alone->sent[2].first, *conns[0]->shared[5]);
  EXPECT_EQ(alone->sent[4].first, *conns[0]->shared[7]);
  EXPECT_EQ(alone->sent[3].first, *conns[0]->shared[4]);
}

}  // namespace
}  // namespace imago::live

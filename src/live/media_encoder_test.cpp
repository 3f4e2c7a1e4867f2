// The room's encoders: what they make decodes (libavcodec's H.264 decoder, libopus), key frames
// come when asked, and each picture's 40 ms of audio is one Opus packet of two 20 ms frames.
#include "live/media_encoder.h"

#include <gtest/gtest.h>
#include <opus.h>

#include <cmath>

extern "C" {
#include <libavcodec/avcodec.h>
}

namespace imago::live {
namespace {

// A picture that moves: a gradient and a square at a place that depends on `t`.
std::vector<uint8_t> picture(int w, int h, int t) {
  std::vector<uint8_t> rgb(size_t(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
      const bool square = x >= 40 + 4 * t && x < 100 + 4 * t && y >= 60 && y < 120;
      p[0] = square ? 230 : uint8_t(x * 255 / w);
      p[1] = square ? 40 : uint8_t(y * 255 / h);
      p[2] = square ? 40 : 128;
    }
  }
  return rgb;
}

// Decodes AVCC access units with libavcodec given the avcC; returns the luma planes' mean
// absolute difference to `expected_y` per frame (BT.601 limited range luma of the RGB).
struct H264Decoder {
  AVCodecContext* ctx = nullptr;
  AVFrame* frame = av_frame_alloc();
  AVPacket* pkt = av_packet_alloc();
  explicit H264Decoder(const std::string& avcc) {
    const AVCodec* c = avcodec_find_decoder(AV_CODEC_ID_H264);
    ctx = avcodec_alloc_context3(c);
    ctx->extradata = static_cast<uint8_t*>(av_mallocz(avcc.size() + AV_INPUT_BUFFER_PADDING_SIZE));
    std::memcpy(ctx->extradata, avcc.data(), avcc.size());
    ctx->extradata_size = static_cast<int>(avcc.size());
    EXPECT_EQ(avcodec_open2(ctx, c, nullptr), 0);
  }
  ~H264Decoder() {
    av_packet_free(&pkt);
    av_frame_free(&frame);
    avcodec_free_context(&ctx);
  }
  // True when the access unit decoded to a picture.
  bool decode(const std::string& au) {
    av_new_packet(pkt, static_cast<int>(au.size()));
    std::memcpy(pkt->data, au.data(), au.size());
    int rc = avcodec_send_packet(ctx, pkt);
    av_packet_unref(pkt);
    if (rc < 0) return false;
    return avcodec_receive_frame(ctx, frame) == 0;
  }
};

double luma_error(const AVFrame* f, const std::vector<uint8_t>& rgb, int w) {
  double sum = 0;
  for (int y = 0; y < f->height; ++y) {
    for (int x = 0; x < f->width; ++x) {
      const uint8_t* p = &rgb[(size_t(y) * w + x) * 3];
      const double luma = 16 + (65.481 * p[0] + 128.553 * p[1] + 24.966 * p[2]) / 255.0;
      sum += std::abs(luma - f->data[0][y * f->linesize[0] + x]);
    }
  }
  return sum / (f->width * f->height);
}

TEST(H264Encoder, StreamDecodesBackToThePicturesWithKeyFramesWhenAsked) {
  H264Settings s;
  s.width = 256;
  s.height = 192;
  s.keyframe_interval_frames = 50;
  auto enc = H264Encoder::create(s);
  ASSERT_TRUE(enc.ok()) << enc.status().message();
  auto& e = **enc;
  EXPECT_EQ(e.width(), 256);
  EXPECT_EQ(e.height(), 192);
  // avcC of constrained baseline: profile 66 with constraint_set1 (WebCodecs: "avc1.42C0..").
  ASSERT_GE(e.avcc().size(), 8u);
  EXPECT_EQ(uint8_t(e.avcc()[0]), 1);
  EXPECT_EQ(uint8_t(e.avcc()[1]), 66);
  EXPECT_TRUE(uint8_t(e.avcc()[2]) & 0x40) << "constraint_set1_flag (constrained baseline)";
  EXPECT_EQ(e.codec_string().substr(0, 7), "avc1.42");

  H264Decoder d(e.avcc());
  for (int i = 0; i < 12; ++i) {
    auto rgb = picture(256, 192, i);
    auto p = e.encode(rgb.data(), i, /*key_frame=*/i == 7);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->kind, MediaKind::kVideo);
    EXPECT_EQ(p->codec, kCodecH264);
    EXPECT_EQ(p->pts_us, i * 40000);
    EXPECT_EQ(p->frame_index, uint32_t(i));
    const bool key = (p->flags & kFlagKeyFrame) != 0;
    EXPECT_EQ(key, i == 0 || i == 7) << "frame " << i;
    // AVCC: the first NAL unit's 4-byte length fits the packet; an IDR slice (5) in key frames.
    ASSERT_GT(p->data.size(), 5u);
    const uint32_t len = uint32_t(uint8_t(p->data[0])) << 24 | uint32_t(uint8_t(p->data[1])) << 16 |
                         uint32_t(uint8_t(p->data[2])) << 8 | uint8_t(p->data[3]);
    EXPECT_LE(len + 4, p->data.size());
    ASSERT_TRUE(d.decode(p->data)) << "frame " << i << " did not decode";
    EXPECT_EQ(d.frame->width, 256);
    EXPECT_EQ(d.frame->height, 192);
    EXPECT_LT(luma_error(d.frame, rgb, 256), 6.0) << "frame " << i;
  }
}

// The colour a viewer sees: the decoded picture, turned back to RGB with the BT.601 limited-range
// matrix the stream's VUI declares, matches the room's picture inside flat regions (a wrong
// matrix, range or swapped chroma planes shift skin tones by tens of levels).
TEST(H264Encoder, ColoursComeBackThroughTheDeclaredMatrix) {
  H264Settings s;
  s.width = 256;
  s.height = 192;
  auto enc = H264Encoder::create(s);
  ASSERT_TRUE(enc.ok()) << enc.status().message();
  H264Decoder d((*enc)->avcc());
  std::vector<uint8_t> rgb(size_t(256) * 192 * 3);
  // Four flat quadrants: a skin tone, a saturated red, a blue and a light grey.
  const uint8_t colours[4][3] = {{224, 172, 140}, {200, 30, 40}, {40, 60, 190}, {200, 200, 200}};
  for (int y = 0; y < 192; ++y)
    for (int x = 0; x < 256; ++x)
      std::memcpy(&rgb[(size_t(y) * 256 + x) * 3], colours[(y >= 96) * 2 + (x >= 128)], 3);
  auto p = (*enc)->encode(rgb.data(), 0, true);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(d.decode(p->data));
  for (int q = 0; q < 4; ++q) {
    // The middle of the quadrant, away from edges.
    const int x = (q % 2) * 128 + 64, y = (q / 2) * 96 + 48;
    const double Y = d.frame->data[0][y * d.frame->linesize[0] + x] - 16.0;
    const double U = d.frame->data[1][(y / 2) * d.frame->linesize[1] + x / 2] - 128.0;
    const double V = d.frame->data[2][(y / 2) * d.frame->linesize[2] + x / 2] - 128.0;
    const double r = 1.164 * Y + 1.596 * V, g = 1.164 * Y - 0.392 * U - 0.813 * V, b = 1.164 * Y + 2.017 * U;
    EXPECT_NEAR(r, colours[q][0], 6) << "quadrant " << q;
    EXPECT_NEAR(g, colours[q][1], 6) << "quadrant " << q;
    EXPECT_NEAR(b, colours[q][2], 6) << "quadrant " << q;
  }
}

TEST(H264Encoder, LargerPicturesAreScaledToTheCap) {
  H264Settings s;
  s.width = 640;
  s.height = 360;
  s.max_side = 320;
  auto enc = H264Encoder::create(s);
  ASSERT_TRUE(enc.ok()) << enc.status().message();
  EXPECT_EQ((*enc)->width(), 320);
  EXPECT_EQ((*enc)->height(), 180);
  H264Decoder d((*enc)->avcc());
  auto rgb = picture(640, 360, 0);
  auto p = (*enc)->encode(rgb.data(), 0, false);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(d.decode(p->data));
  EXPECT_EQ(d.frame->width, 320);
  EXPECT_EQ(d.frame->height, 180);
}

TEST(H264Encoder, AnnexBBecomesLengthPrefixedWithoutParameterSets) {
  const std::string annexb = std::string("\0\0\0\1\x67\x42\xc0\x1e", 8) + std::string("\0\0\1\x68\xce", 5) +
                             std::string("\0\0\0\1\x65\x88\x84", 7);
  const auto* d = reinterpret_cast<const uint8_t*>(annexb.data());
  EXPECT_EQ(annexb_to_avcc(d, annexb.size()), std::string("\0\0\0\3\x65\x88\x84", 7));
  const std::string avcc = avcc_from_annexb(d, annexb.size());
  EXPECT_EQ(avcc, std::string("\1\x42\xc0\x1e\xff\xe1\0\4\x67\x42\xc0\x1e\1\0\2\x68\xce", 17));
}

TEST(OpusAudioEncoder, OnePacketOfTwentyMillisecondFramesPerPictureThatDecodesBack) {
  auto enc = OpusAudioEncoder::create(24000, 32000);
  ASSERT_TRUE(enc.ok()) << enc.status().message();
  auto& e = **enc;
  EXPECT_EQ(e.samples_per_frame(), 480);
  const std::string& head = e.opus_head();
  ASSERT_EQ(head.size(), 19u);
  EXPECT_EQ(head.substr(0, 8), "OpusHead");
  EXPECT_EQ(head[8], 1);  // version
  EXPECT_EQ(head[9], 1);  // channels
  const int pre_skip = uint8_t(head[10]) | uint8_t(head[11]) << 8;
  EXPECT_GT(pre_skip, 0);
  EXPECT_EQ(uint8_t(head[12]) | uint8_t(head[13]) << 8 | uint8_t(head[14]) << 16, 24000);

  int err = 0;
  OpusDecoder* dec = opus_decoder_create(48000, 1, &err);
  ASSERT_EQ(err, OPUS_OK);
  // One second of a 440 Hz tone in 40 ms frames (what a room's renderer gives).
  std::vector<float> decoded;
  for (int frame = 0; frame < 25; ++frame) {
    std::vector<int16_t> pcm(960);
    for (int i = 0; i < 960; ++i)
      pcm[i] = int16_t(8000 * std::sin(2 * M_PI * 440 * (frame * 960 + i) / 24000.0));
    std::vector<EncodedPacket> out;
    ASSERT_TRUE(e.encode(pcm.data(), pcm.size(), uint32_t(frame), kFlagSpeaking, &out).ok());
    ASSERT_EQ(out.size(), 1u);
    const EncodedPacket& p = out[0];
    EXPECT_EQ(p.kind, MediaKind::kAudio);
    EXPECT_EQ(p.codec, kCodecOpus);
    EXPECT_EQ(p.frame_index, uint32_t(frame));
    EXPECT_EQ(p.pts_us, frame * 40000);
    EXPECT_EQ(p.duration_us, 40000);
    EXPECT_EQ(p.flags, kFlagSpeaking);
    const auto* bytes = reinterpret_cast<const unsigned char*>(p.data.data());
    EXPECT_EQ(opus_packet_get_nb_frames(bytes, int(p.data.size())), 2);
    EXPECT_EQ(opus_packet_get_nb_samples(bytes, int(p.data.size()), 48000), 1920);
    float buf[1920];
    ASSERT_EQ(opus_decode_float(dec, bytes, int(p.data.size()), buf, 1920, 0), 1920);
    decoded.insert(decoded.end(), buf, buf + 1920);
  }
  opus_decoder_destroy(dec);
  // The tone survives: the energy after the pre-skip is about the input's (amplitude 8000/32768).
  double energy = 0;
  for (size_t i = size_t(pre_skip) + 4800; i < decoded.size(); ++i) energy += decoded[i] * decoded[i];
  const double rms = std::sqrt(energy / double(decoded.size() - pre_skip - 4800));
  EXPECT_NEAR(rms, 8000.0 / 32768 / std::sqrt(2.0), 0.05);
  // A partial frame, nothing, and more than one packet may hold (120 ms) are refused.
  std::vector<int16_t> odd(500), none, too_long(480 * 7);
  std::vector<EncodedPacket> out;
  EXPECT_FALSE(e.encode(odd.data(), odd.size(), 0, 0, &out).ok());
  EXPECT_FALSE(e.encode(none.data(), none.size(), 0, 0, &out).ok());
  EXPECT_FALSE(e.encode(too_long.data(), too_long.size(), 0, 0, &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(MediaEncoder, EncodesEachFormatOnlyWhenAsked) {
  MediaEncoderSettings s;
  s.width = 128;
  s.height = 128;
  MediaEncoder enc(s);
  avatar::Frame f;
  f.index = 3;
  f.width = 128;
  f.height = 128;
  f.rgb = picture(128, 128, 0);
  f.audio.assign(960, 0);
  FramePackets p;
  enc.encode_pcm(f, 0, &p);
  ASSERT_TRUE(p.pcm);
  EXPECT_EQ(p.pcm->data.size(), 1920u);
  EXPECT_EQ(p.pcm->pts_us, 120000);
  EXPECT_FALSE(p.h264);
  EXPECT_TRUE(p.opus.empty());
  enc.encode_h264_opus(f, 0, true, &p);
  ASSERT_TRUE(p.h264);
  EXPECT_TRUE(p.h264->flags & kFlagKeyFrame);
  ASSERT_EQ(p.opus.size(), 1u);  // the picture's 40 ms in one packet, with the picture's index
  EXPECT_EQ(p.opus[0]->frame_index, 3u);
  EXPECT_EQ(p.opus[0]->pts_us, 120000);
  const CodecConfig c = enc.config(MediaFormat::kH264Opus);
  EXPECT_EQ(c.width, 128);
  EXPECT_FALSE(c.avcc.empty());
  EXPECT_EQ(c.opus_head.size(), 19u);
  EXPECT_EQ(c.audio_sample_rate, 48000);
  const CodecConfig j = enc.config(MediaFormat::kJpegPcm);
  EXPECT_EQ(j.video_codec, kCodecJpeg);
  EXPECT_EQ(j.audio_sample_rate, 24000);
}

}  // namespace
}  // namespace imago::live

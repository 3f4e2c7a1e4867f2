// RecordingSink over real encoded media: the test encodes frames with libx264 (constrained
// baseline, converted to AVCC as the room's encoder hands it over) and a tone with libopus (20 ms
// packets), feeds them on the session's audio clock, and reads the MP4 back with libavformat:
// H.264 + Opus, 25 fps, the right duration. A child process killed mid-recording leaves a file
// that plays up to its last fragment.
#include "live/recording_sink.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <future>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
}

namespace imago::live {
namespace {

constexpr int kWidth = 160, kHeight = 120;

// Annex B (start codes) -> NAL units.
std::vector<std::string> nal_units(const uint8_t* d, size_t n) {
  std::vector<std::string> out;
  size_t i = 0, start = std::string::npos;
  while (i + 3 <= n) {
    const bool sc3 = d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1;
    if (sc3) {
      if (start != std::string::npos) {
        size_t end = i;
        while (end > start && d[end - 1] == 0) --end;  // a 4-byte start code's leading zero
        out.emplace_back(reinterpret_cast<const char*>(d + start), end - start);
      }
      i += 3;
      start = i;
    } else {
      ++i;
    }
  }
  if (start != std::string::npos && start < n)
    out.emplace_back(reinterpret_cast<const char*>(d + start), n - start);
  return out;
}

std::string be32(size_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string be16(size_t v) {
  return {static_cast<char>(v >> 8), static_cast<char>(v)};
}

struct Media {
  CodecConfig config;
  std::vector<std::shared_ptr<const EncodedPacket>> video, audio;
};

// `frames` video frames at 25 fps (a key frame every `gop`) and `packets` 20 ms Opus packets.
Media encode(int frames, int gop, int packets) {
  Media m;
  m.config.width = kWidth;
  m.config.height = kHeight;
  m.config.fps = 25;

  // Video: libx264, constrained baseline, no B-frames.
  const AVCodec* vc = avcodec_find_encoder_by_name("libx264");
  EXPECT_NE(vc, nullptr);
  AVCodecContext* v = avcodec_alloc_context3(vc);
  v->width = kWidth;
  v->height = kHeight;
  v->pix_fmt = AV_PIX_FMT_YUV420P;
  v->time_base = AVRational{1, 25};
  v->framerate = AVRational{25, 1};
  v->gop_size = gop;
  v->keyint_min = gop;
  v->max_b_frames = 0;
  v->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  av_opt_set(v->priv_data, "preset", "ultrafast", 0);
  av_opt_set(v->priv_data, "tune", "zerolatency", 0);
  av_opt_set(v->priv_data, "profile", "baseline", 0);
  av_opt_set(v->priv_data, "x264-params", "scenecut=0", 0);
  EXPECT_EQ(avcodec_open2(v, vc, nullptr), 0);
  // The AVCDecoderConfigurationRecord from the SPS and PPS.
  std::string sps, pps;
  for (auto& nal : nal_units(v->extradata, v->extradata_size)) {
    if ((nal[0] & 0x1f) == 7) sps = nal;
    if ((nal[0] & 0x1f) == 8) pps = nal;
  }
  EXPECT_FALSE(sps.empty());
  EXPECT_FALSE(pps.empty());
  m.config.avcc = std::string{1, sps[1], sps[2], sps[3], static_cast<char>(0xff), static_cast<char>(0xe1)} +
                  be16(sps.size()) + sps + std::string(1, 1) + be16(pps.size()) + pps;
  AVFrame* f = av_frame_alloc();
  f->format = v->pix_fmt;
  f->width = kWidth;
  f->height = kHeight;
  EXPECT_EQ(av_frame_get_buffer(f, 0), 0);
  AVPacket* pkt = av_packet_alloc();
  auto drain_video = [&] {
    while (avcodec_receive_packet(v, pkt) == 0) {
      auto p = std::make_shared<EncodedPacket>();
      p->kind = MediaKind::kVideo;
      p->codec = kCodecH264;
      p->frame_index = static_cast<uint32_t>(pkt->pts);
      p->pts_us = pkt->pts * 40000;
      p->duration_us = 40000;
      if (pkt->flags & AV_PKT_FLAG_KEY) p->flags |= kFlagKeyFrame;
      for (auto& nal : nal_units(pkt->data, pkt->size)) {
        const int type = nal[0] & 0x1f;
        if (type == 7 || type == 8 || type == 9) continue;  // parameter sets live in avcC
        p->data += be32(nal.size()) + nal;
      }
      m.video.push_back(std::move(p));
      av_packet_unref(pkt);
    }
  };
  for (int i = 0; i < frames; ++i) {
    EXPECT_EQ(av_frame_make_writable(f), 0);
    for (int y = 0; y < kHeight; ++y)
      for (int x = 0; x < kWidth; ++x)
        f->data[0][y * f->linesize[0] + x] = static_cast<uint8_t>(x + y + i * 3);
    for (int y = 0; y < kHeight / 2; ++y)
      for (int x = 0; x < kWidth / 2; ++x) {
        f->data[1][y * f->linesize[1] + x] = 128;
        f->data[2][y * f->linesize[2] + x] = static_cast<uint8_t>(64 + i);
      }
    f->pts = i;
    EXPECT_EQ(avcodec_send_frame(v, f), 0);
    drain_video();
  }
  avcodec_send_frame(v, nullptr);
  drain_video();
  av_frame_free(&f);
  avcodec_free_context(&v);

  // Audio: libopus, 48 kHz mono, 20 ms packets; the OpusHead is its extradata.
  const AVCodec* ac = avcodec_find_encoder_by_name("libopus");
  EXPECT_NE(ac, nullptr);
  AVCodecContext* a = avcodec_alloc_context3(ac);
  a->sample_rate = 48000;
  av_channel_layout_default(&a->ch_layout, 1);
  a->sample_fmt = AV_SAMPLE_FMT_S16;
  a->bit_rate = 32000;
  a->time_base = AVRational{1, 48000};
  EXPECT_EQ(avcodec_open2(a, ac, nullptr), 0);
  EXPECT_EQ(a->frame_size, 960);
  m.config.opus_head.assign(reinterpret_cast<const char*>(a->extradata), a->extradata_size);
  AVFrame* af = av_frame_alloc();
  af->format = a->sample_fmt;
  af->nb_samples = a->frame_size;
  af->sample_rate = 48000;
  av_channel_layout_default(&af->ch_layout, 1);
  EXPECT_EQ(av_frame_get_buffer(af, 0), 0);
  auto drain_audio = [&] {
    while (avcodec_receive_packet(a, pkt) == 0) {
      if (static_cast<int>(m.audio.size()) < packets) {
        auto p = std::make_shared<EncodedPacket>();
        p->kind = MediaKind::kAudio;
        p->codec = kCodecOpus;
        p->frame_index = static_cast<uint32_t>(m.audio.size());
        p->pts_us = static_cast<int64_t>(m.audio.size()) * 20000;
        p->duration_us = 20000;
        p->data.assign(reinterpret_cast<const char*>(pkt->data), pkt->size);
        m.audio.push_back(std::move(p));
      }
      av_packet_unref(pkt);
    }
  };
  for (int i = 0; i < packets + 2; ++i) {
    EXPECT_EQ(av_frame_make_writable(af), 0);
    auto* s = reinterpret_cast<int16_t*>(af->data[0]);
    for (int k = 0; k < 960; ++k)
      s[k] = static_cast<int16_t>(8000 * std::sin(2 * M_PI * 440 * (i * 960 + k) / 48000.0));
    af->pts = i * 960;
    EXPECT_EQ(avcodec_send_frame(a, af), 0);
    drain_audio();
  }
  avcodec_send_frame(a, nullptr);
  drain_audio();
  av_frame_free(&af);
  av_packet_free(&pkt);
  avcodec_free_context(&a);
  EXPECT_EQ(static_cast<int>(m.audio.size()), packets);
  EXPECT_EQ(static_cast<int>(m.video.size()), frames);
  return m;
}

// Feeds video from index `v0` and audio from `a0` in pts order, as the room's media thread does.
void feed(MediaSink& sink, const Media& m, size_t v0 = 0, size_t a0 = 0) {
  sink.on_config(m.config);
  size_t vi = v0, ai = a0;
  while (vi < m.video.size() || ai < m.audio.size()) {
    if (ai >= m.audio.size() || (vi < m.video.size() && m.video[vi]->pts_us <= m.audio[ai]->pts_us)) {
      sink.on_packet(m.video[vi++]);
    } else {
      sink.on_packet(m.audio[ai++]);
    }
  }
}

struct Probe {
  bool opened = false;
  std::string video_codec, audio_codec;
  double fps = 0, duration_s = 0;
  int video_packets = 0, audio_packets = 0;
};

Probe probe(const std::string& path) {
  Probe p;
  AVFormatContext* ic = nullptr;
  if (avformat_open_input(&ic, path.c_str(), nullptr, nullptr) < 0) return p;
  p.opened = avformat_find_stream_info(ic, nullptr) >= 0;
  for (unsigned i = 0; i < ic->nb_streams; ++i) {
    AVStream* s = ic->streams[i];
    if (s->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
      p.video_codec = avcodec_get_name(s->codecpar->codec_id);
      p.fps = av_q2d(s->avg_frame_rate);
    } else if (s->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) {
      p.audio_codec = avcodec_get_name(s->codecpar->codec_id);
    }
  }
  if (ic->duration > 0) p.duration_s = ic->duration / static_cast<double>(AV_TIME_BASE);
  AVPacket* pkt = av_packet_alloc();
  while (av_read_frame(ic, pkt) >= 0) {
    if (ic->streams[pkt->stream_index]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) {
      ++p.video_packets;
    } else {
      ++p.audio_packets;
    }
    av_packet_unref(pkt);
  }
  av_packet_free(&pkt);
  avformat_close_input(&ic);
  return p;
}

class RecordingSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    av_log_set_level(AV_LOG_ERROR);  // x264's statistics are noise here
    dir_ = std::filesystem::temp_directory_path() /
           ("imago-rec-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(RecordingSinkTest, HalfASecondBecomesAnMp4WithH264AndOpusAt25Fps) {
  const Media m = encode(12, 5, 25);  // 0.48 s of video, 0.5 s of audio
  const std::string path = dir_ / "rec.mp4";
  std::promise<RecordingOutcome> done;
  {
    RecordingSink sink(path, [&](const RecordingOutcome& o) { done.set_value(o); });
    feed(sink, m);
    sink.on_end();
  }
  RecordingOutcome o = done.get_future().get();
  ASSERT_TRUE(o.status.ok()) << o.status.message();
  EXPECT_EQ(o.video_packets, 12);
  EXPECT_EQ(o.audio_packets, 25);
  EXPECT_EQ(o.duration_ms, 500);
  EXPECT_GT(o.bytes, 0);
  EXPECT_EQ(o.bytes, static_cast<int64_t>(std::filesystem::file_size(path)));

  Probe p = probe(path);
  ASSERT_TRUE(p.opened);
  EXPECT_EQ(p.video_codec, "h264");
  EXPECT_EQ(p.audio_codec, "opus");
  EXPECT_NEAR(p.fps, 25.0, 0.01);
  EXPECT_NEAR(p.duration_s, 0.5, 0.03);
  EXPECT_EQ(p.video_packets, 12);
  EXPECT_EQ(p.audio_packets, 25);
}

TEST_F(RecordingSinkTest, SwitchedOnMidSessionVideoStartsAtAKeyFrame) {
  const Media m = encode(20, 10, 40);
  const std::string path = dir_ / "late.mp4";
  std::promise<RecordingOutcome> done;
  {
    RecordingSink sink(path, [&](const RecordingOutcome& o) { done.set_value(o); });
    // Switched on at 0.12 s: audio is kept from there, video from its next key frame (0.4 s).
    feed(sink, m, 3, 6);
    sink.on_end();
  }
  RecordingOutcome o = done.get_future().get();
  ASSERT_TRUE(o.status.ok()) << o.status.message();
  EXPECT_EQ(o.video_packets, 10);
  EXPECT_EQ(o.audio_packets, 34);
  EXPECT_EQ(o.duration_ms, 680);  // 0.12 s to 0.8 s: the file starts at its first packet
  Probe p = probe(path);
  ASSERT_TRUE(p.opened);
  EXPECT_EQ(p.video_packets, 10);
  EXPECT_EQ(p.audio_packets, 34);
  EXPECT_NEAR(p.duration_s, 0.68, 0.03);
}

TEST_F(RecordingSinkTest, NothingArrivedIsAFailedRecording) {
  const std::string path = dir_ / "empty.mp4";
  std::promise<RecordingOutcome> done;
  {
    RecordingSink sink(path, [&](const RecordingOutcome& o) { done.set_value(o); });
    sink.on_end();
  }
  RecordingOutcome o = done.get_future().get();
  EXPECT_EQ(o.status.code(), Code::kNotFound);
}

TEST_F(RecordingSinkTest, AKilledProcessLeavesAFilePlayableUpToItsLastFragment) {
  const Media m = encode(51, 25, 100);  // key frames at 0, 1 and 2 s
  const std::string path = dir_ / "killed.mp4";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    RecordingSink sink(path, nullptr);
    feed(sink, m);
    sink.flush_for_test();
    ::raise(SIGKILL);  // no trailer, no on_end
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  Probe p = probe(path);
  ASSERT_TRUE(p.opened);
  EXPECT_EQ(p.video_codec, "h264");
  // The fragments cut at the key frames of 1 s and 2 s are whole: frames 0-49.
  EXPECT_EQ(p.video_packets, 50);
  EXPECT_GE(p.audio_packets, 45);
}

}  // namespace
}  // namespace imago::live

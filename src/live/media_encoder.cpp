#include "live/media_encoder.h"

#include "util/log.h"

namespace imago::live {

namespace {
constexpr int64_t kFrameUs = 1'000'000 / avatar::kFps;
}

MediaEncoder::MediaEncoder(MediaEncoderSettings s) : s_(std::move(s)) {}
MediaEncoder::~MediaEncoder() = default;

Status MediaEncoder::open_encoded() {
  if (open_tried_) return h264_ || opus_ ? Status::Ok() : Status::Internal("encoders unavailable");
  open_tried_ = true;
  auto o = OpusAudioEncoder::create(s_.audio_rate, s_.encoded.audio_bitrate);
  if (o.ok()) {
    opus_ = std::move(o).value();
  } else {
    log::error("live_opus_encoder_failed", {{"error", o.status().message()}});
  }
  if (s_.video) {
    H264Settings hs;
    hs.width = s_.width;
    hs.height = s_.height;
    hs.max_side = s_.encoded.max_side;
    hs.fps = avatar::kFps;
    hs.bitrate = s_.encoded.video_bitrate;
    hs.keyframe_interval_frames = s_.encoded.keyframe_interval_frames;
    auto h = H264Encoder::create(hs);
    if (h.ok()) {
      h264_ = std::move(h).value();
    } else {
      log::error("live_h264_encoder_failed", {{"error", h.status().message()}});
    }
  }
  return h264_ || opus_ ? Status::Ok() : Status::Internal("encoders unavailable");
}

CodecConfig MediaEncoder::config(MediaFormat format) {
  CodecConfig c;
  c.fps = avatar::kFps;
  c.video = s_.video;
  if (format == MediaFormat::kJpegPcm) {
    c.width = s_.width;
    c.height = s_.height;
    c.video_codec = kCodecJpeg;
    c.audio_codec = kCodecPcmS16;
    c.audio_sample_rate = s_.audio_rate;
    return c;
  }
  (void)open_encoded();
  c.video = s_.video && h264_;
  if (h264_) {
    c.width = h264_->width();
    c.height = h264_->height();
    c.avcc = h264_->avcc();
    c.video_codec_string = h264_->codec_string();
  }
  if (opus_) c.opus_head = opus_->opus_head();
  c.audio_sample_rate = 48000;
  c.video_bitrate = s_.encoded.video_bitrate;
  c.audio_bitrate = s_.encoded.audio_bitrate;
  return c;
}

void MediaEncoder::encode_jpeg(const avatar::Frame& f, uint16_t flags, FramePackets* out) {
  if (f.has_image) {
    auto j = avatar::encode_jpeg(f, s_.jpeg_quality);
    if (j.ok()) {
      auto p = std::make_shared<EncodedPacket>();
      p->kind = MediaKind::kVideo;
      p->codec = kCodecJpeg;
      p->flags = flags | kFlagKeyFrame;
      p->frame_index = static_cast<uint32_t>(f.index);
      p->pts_us = f.index * kFrameUs;
      p->duration_us = kFrameUs;
      p->data = std::move(j).value();
      out->jpeg = std::move(p);
    }
  }
}

void MediaEncoder::encode_pcm(const avatar::Frame& f, uint16_t flags, FramePackets* out) {
  auto a = std::make_shared<EncodedPacket>();
  a->kind = MediaKind::kAudio;
  a->codec = kCodecPcmS16;
  a->flags = flags;
  a->frame_index = static_cast<uint32_t>(f.index);
  a->pts_us = f.index * kFrameUs;
  a->duration_us = kFrameUs;
  a->data.resize(f.audio.size() * 2);
  for (size_t i = 0; i < f.audio.size(); ++i) {
    const auto v = static_cast<uint16_t>(f.audio[i]);
    a->data[2 * i] = static_cast<char>(v & 0xff);
    a->data[2 * i + 1] = static_cast<char>(v >> 8);
  }
  out->pcm = std::move(a);
}

void MediaEncoder::encode_h264_opus(const avatar::Frame& f, uint16_t flags, bool key_frame,
                                    FramePackets* out) {
  (void)open_encoded();
  if (opus_ && !f.audio.empty()) {
    std::vector<EncodedPacket> packets;
    // One packet per picture (40 ms, two Opus frames), with the picture's index and pts.
    Status st =
        opus_->encode(f.audio.data(), f.audio.size(), static_cast<uint32_t>(f.index), flags, &packets);
    if (!st.ok()) log::warn("live_opus_encode_failed", {{"error", st.message()}});
    for (auto& p : packets) out->opus.push_back(std::make_shared<const EncodedPacket>(std::move(p)));
  }
  if (h264_ && f.has_image) {
    auto v = h264_->encode(f.pixels(), f.index, key_frame);
    if (v.ok()) {
      v->flags |= flags & ~kFlagKeyFrame;
      out->h264 = std::make_shared<const EncodedPacket>(std::move(v).value());
    } else {
      log::warn("live_h264_encode_failed", {{"error", v.status().message()}});
    }
  }
}

void MediaEncoder::reset_audio() {
  if (opus_) opus_->reset();
}

}  // namespace imago::live

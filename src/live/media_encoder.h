// The encoding step of a room (docs/live-protocol.md, "Encoded media"): each rendered frame is
// encoded once, for every consumer, in the formats some consumer wants: H.264 + Opus for sinks
// of encoded media, JPEG + PCM for viewers that asked for today's format. The encoders open on
// first use, so a room without such consumers never pays for them. Render thread only.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "avatar/renderer.h"
#include "live/encoded_media.h"
#include "live/h264_encoder.h"
#include "live/media_quality.h"
#include "live/opus_audio_encoder.h"
#include "util/status.h"

namespace imago::live {

using PacketPtr = std::shared_ptr<const EncodedPacket>;

// One frame's media in each format made for it (null / empty where none was wanted or drawn).
struct FramePackets {
  PacketPtr jpeg, pcm;          // jpeg+pcm consumers
  PacketPtr h264;               // h264+opus consumers: the access unit of the frame's picture
  std::vector<PacketPtr> opus;  // the frame's 40 ms of audio as two 20 ms packets
};

struct MediaEncoderSettings {
  int width = 0, height = 0;  // the renderer's frames
  int audio_rate = 24000;     // the renderer's audio
  bool video = true;          // false: audio-only session
  int jpeg_quality = 75;
  EncoderSettings encoded;  // bit rates, key frame interval, size cap
};

class MediaEncoder {
 public:
  explicit MediaEncoder(MediaEncoderSettings s);
  ~MediaEncoder();

  // A JPEG of the frame's picture (when it has one).
  void encode_jpeg(const avatar::Frame& f, uint16_t flags, FramePackets* out);
  // The frame's audio as s16le PCM.
  void encode_pcm(const avatar::Frame& f, uint16_t flags, FramePackets* out);
  // Opus for the frame's audio and, when it has a picture, H.264 (an IDR when key_frame). Opens
  // the encoders on first use; an encoder that failed to open is logged once and left out.
  void encode_h264_opus(const avatar::Frame& f, uint16_t flags, bool key_frame, FramePackets* out);
  // What a consumer of `format` is configured with (for H.264 + Opus: opens the encoders).
  CodecConfig config(MediaFormat format);
  // After an interrupt: the Opus encoder forgets the speech in its look-ahead.
  void reset_audio();

 private:
  Status open_encoded();

  MediaEncoderSettings s_;
  std::unique_ptr<H264Encoder> h264_;
  std::unique_ptr<OpusAudioEncoder> opus_;
  bool open_tried_ = false;
};

}  // namespace imago::live

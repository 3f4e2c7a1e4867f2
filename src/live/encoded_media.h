// Encoded media of a room: what the room's encoder produces once and hands to every consumer
// (a viewer's WebSocket, a recording, a relay to another node) through MediaSink. Nothing here
// knows about HTTP or WebSockets; docs/live-protocol.md describes the wire framing of these
// packets.
//
// Contracts:
//  - Video is H.264 constrained baseline in AVCC form: each access unit is a sequence of NAL units,
//    each prefixed by its 4-byte big-endian length; `CodecConfig::avcc` is the
//    AVCDecoderConfigurationRecord (what MP4's avcC box and WebCodecs' `description` take).
//  - Audio is Opus at 48 kHz mono, one packet per EncodedPacket holding one picture's 40 ms (two
//    20 ms Opus frames), index and pts those of the picture; `CodecConfig::opus_head` is the
//    19-byte OpusHead identification header (RFC 7845).
//  - pts_us is on the session's audio clock (the same clock as today's JPEG+PCM frames: frame n of
//    video at n * 40000 us at 25 fps).
//  - Packets are immutable once made and shared between consumers (shared_ptr to const).
//  - A viewer that asked for today's media (media=jpeg+pcm) is a sink too: its config says
//    video_codec kCodecJpeg / audio_codec kCodecPcmS16 and its packets are JPEG files and s16le
//    PCM frames (40 ms); only sinks added for that format get them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "live/media_framing.h"

namespace imago::live {

// Codec byte values of the binary frame header (media_framing.h) for encoded media.
inline constexpr uint8_t kCodecVp8Reserved = 2;  // video: reserved for VP8
inline constexpr uint8_t kCodecH264 = 3;         // video: H.264 access unit, AVCC
inline constexpr uint8_t kCodecOpus = 2;         // audio: one Opus packet

struct CodecConfig {
  int width = 0, height = 0;
  int fps = 25;
  std::string avcc;  // AVCDecoderConfigurationRecord
  int audio_sample_rate = 48000;
  int audio_channels = 1;
  std::string opus_head;                         // OpusHead (RFC 7845, 5.1)
  int64_t video_bitrate = 0, audio_bitrate = 0;  // bits per second, as configured
  uint8_t video_codec = kCodecH264;              // kCodecJpeg for a jpeg+pcm sink
  uint8_t audio_codec = kCodecOpus;              // kCodecPcmS16 for a jpeg+pcm sink
  bool video = true;               // false in audio-only sessions (voice_chat): no video packets
  std::string video_codec_string;  // WebCodecs' name of the stream, e.g. "avc1.42C01E"
};

struct EncodedPacket {
  MediaKind kind = MediaKind::kVideo;
  uint8_t codec = kCodecH264;
  uint16_t flags = 0;        // kFlag* of media_framing.h; kFlagKeyFrame on IDR access units
  uint32_t frame_index = 0;  // video: frame n; audio: index of the 20 ms packet
  int64_t pts_us = 0;        // session audio clock
  int64_t duration_us = 0;   // 40000 at 25 fps; 20000 for an Opus packet
  std::string data;          // AVCC access unit, or one Opus packet
};

// A consumer of a room's encoded media. Calls come from the room's media thread, in pts order per
// kind; implementations must not block (queue and drop, or hand off to their own thread).
class MediaSink {
 public:
  virtual ~MediaSink() = default;
  // Once before the first packet, and again if the configuration changes.
  virtual void on_config(const CodecConfig& config) = 0;
  virtual void on_packet(const std::shared_ptr<const EncodedPacket>& packet) = 0;
  // A sink that sends each packet as its binary message (media_framing.h; a viewer's WebSocket)
  // answers true: the fan-out then frames each packet once, whatever the number of such sinks, and
  // hands every one of them the same immutable message through on_message instead of on_packet.
  virtual bool takes_messages() const { return false; }
  virtual void on_message(const std::shared_ptr<const EncodedPacket>& packet,
                          const std::shared_ptr<const std::string>& /*message*/) {
    on_packet(packet);
  }
  // The room ended (or the sink was removed); no further calls follow.
  virtual void on_end() {}
  // Asked before each picture is encoded: true makes the next access unit an IDR (a new viewer, one
  // that dropped frames, a decoder that lost its state). The room spaces forced IDRs at least
  // 200 ms apart, so a sink keeps answering true until it got one.
  virtual bool wants_key_frame() { return false; }
  // The agent was interrupted: media handed over but not yet delivered is stale (a viewer drops
  // its queue; its next video must then be a key frame).
  virtual void on_interrupt() {}
};

}  // namespace imago::live

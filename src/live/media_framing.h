// Binary WebSocket messages of a live session (docs/live-protocol.md, "Media framing").
// Every binary message is a 20-byte header, little-endian, then the payload:
//
//   offset size  field
//   0      1     kind: 1 video, 2 audio
//   1      1     codec: video 1 = JPEG, 3 = H.264 (AVCC; 2 reserved for VP8); audio 1 = PCM s16le
//                mono, 2 = Opus
//   2      2     flags: bit 0 speaking, bit 1 end_of_speech, bit 2 interrupted, bit 3 key frame,
//                bit 4 codec configuration (the payload is the avcC record or the OpusHead)
//   4      4     frame index (u32): frame n covers [n/25, (n+1)/25) s of the session's audio clock
//   8      8     pts in microseconds (i64) on the audio clock (n * 40000)
//   16     2     video: width (u16);  audio: sample rate / 25 (u16 samples per frame)
//   18     2     video: height (u16); audio: 0
//   20     ...   video: the JPEG file; audio: samples, s16le
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace imago::live {

inline constexpr size_t kMediaHeaderBytes = 20;
enum class MediaKind : uint8_t { kVideo = 1, kAudio = 2 };
inline constexpr uint8_t kCodecJpeg = 1;
inline constexpr uint8_t kCodecPcmS16 = 1;
inline constexpr uint16_t kFlagSpeaking = 1, kFlagEndOfSpeech = 2, kFlagInterrupted = 4, kFlagKeyFrame = 8,
                          kFlagConfig = 16;
// The version of this framing that session.started announces (`framing_version`); it changes only
// when a client written for it could no longer read the messages.
inline constexpr int kMediaFramingVersion = 1;
// Samples an Opus message's header announces, at 48 kHz (the rate Opus decodes at): a room's
// packets carry one 40 ms picture's audio (two 20 ms Opus frames).
inline constexpr uint16_t kOpusSamplesPerPacket = 1920;
inline uint16_t opus_samples_at_48k(int64_t duration_us) {
  return static_cast<uint16_t>(duration_us * 48 / 1000);
}

struct MediaHeader {
  MediaKind kind = MediaKind::kVideo;
  uint8_t codec = 1;
  uint16_t flags = 0;
  uint32_t frame_index = 0;
  int64_t pts_us = 0;
  uint16_t a = 0;  // width, or samples per frame
  uint16_t b = 0;  // height, or 0
};

std::string encode_video_message(const MediaHeader& h, std::string_view jpeg);
std::string encode_audio_message(const MediaHeader& h, const std::vector<int16_t>& samples);
// Header + any payload (encoded media: an access unit, an Opus packet, a codec configuration).
std::string encode_media_message(const MediaHeader& h, std::string_view payload);
struct EncodedPacket;
struct CodecConfig;
// A room's packet (encoded_media.h) as its binary message for viewers configured with `config`
// (a picture's header carries the configured size). The bytes depend only on the packet and the
// format's configuration, so one immutable message serves every viewer of the format.
std::shared_ptr<const std::string> packet_message(const EncodedPacket& p, const CodecConfig& config);
// Parses a header (tests, benchmark clients); false when the message is shorter than a header.
bool decode_media_header(std::string_view msg, MediaHeader* out);

}  // namespace imago::live

#include "live/media_framing.h"

#include <cstring>

#include "live/encoded_media.h"

namespace imago::live {

namespace {

void put_le(std::string& s, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t get_le(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}

std::string header_bytes(const MediaHeader& h, size_t payload) {
  std::string s(kMediaHeaderBytes, '\0');
  s.reserve(kMediaHeaderBytes + payload);
  s[0] = static_cast<char>(h.kind);
  s[1] = static_cast<char>(h.codec);
  put_le(s, 2, h.flags, 2);
  put_le(s, 4, h.frame_index, 4);
  put_le(s, 8, static_cast<uint64_t>(h.pts_us), 8);
  put_le(s, 16, h.a, 2);
  put_le(s, 18, h.b, 2);
  return s;
}

}  // namespace

std::string encode_video_message(const MediaHeader& h, std::string_view jpeg) {
  std::string s = header_bytes(h, jpeg.size());
  s.append(jpeg);
  return s;
}

std::string encode_media_message(const MediaHeader& h, std::string_view payload) {
  std::string s = header_bytes(h, payload.size());
  s.append(payload);
  return s;
}

std::string encode_audio_message(const MediaHeader& h, const std::vector<int16_t>& samples) {
  std::string s = header_bytes(h, samples.size() * 2);
  const size_t at = s.size();
  s.resize(at + samples.size() * 2);
  for (size_t i = 0; i < samples.size(); ++i) put_le(s, at + 2 * i, static_cast<uint16_t>(samples[i]), 2);
  return s;
}

std::shared_ptr<const std::string> packet_message(const EncodedPacket& p, const CodecConfig& config) {
  MediaHeader h;
  h.kind = p.kind;
  h.codec = p.codec;
  h.flags = p.flags;
  h.frame_index = p.frame_index;
  h.pts_us = p.pts_us;
  if (p.kind == MediaKind::kAudio) {
    h.a =
        p.codec == kCodecOpus ? opus_samples_at_48k(p.duration_us) : static_cast<uint16_t>(p.data.size() / 2);
  } else {
    h.a = static_cast<uint16_t>(config.width);
    h.b = static_cast<uint16_t>(config.height);
  }
  return std::make_shared<const std::string>(encode_media_message(h, p.data));
}

bool decode_media_header(std::string_view m, MediaHeader* out) {
  if (m.size() < kMediaHeaderBytes) return false;
  out->kind = static_cast<MediaKind>(static_cast<uint8_t>(m[0]));
  out->codec = static_cast<uint8_t>(m[1]);
  out->flags = static_cast<uint16_t>(get_le(m, 2, 2));
  out->frame_index = static_cast<uint32_t>(get_le(m, 4, 4));
  out->pts_us = static_cast<int64_t>(get_le(m, 8, 8));
  out->a = static_cast<uint16_t>(get_le(m, 16, 2));
  out->b = static_cast<uint16_t>(get_le(m, 18, 2));
  return true;
}

}  // namespace imago::live

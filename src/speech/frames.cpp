#include "speech/frames.h"

namespace imago::speech {

namespace {
void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
std::string frame(FrameType t, std::string_view payload) {
  std::string f;
  f.reserve(5 + payload.size());
  put_u32(f, static_cast<uint32_t>(payload.size()));
  f.push_back(static_cast<char>(t));
  f.append(payload);
  return f;
}
}  // namespace

std::string header_frame(int rate, int channels, int bits) {
  std::string p;
  put_u32(p, static_cast<uint32_t>(rate));
  p.push_back(static_cast<char>(channels & 0xFF));
  p.push_back(static_cast<char>((channels >> 8) & 0xFF));
  p.push_back(static_cast<char>(bits & 0xFF));
  p.push_back(static_cast<char>((bits >> 8) & 0xFF));
  return frame(FrameType::kHeader, p);
}

std::string audio_frame(const int16_t* s, size_t n) {
  std::string f;
  f.reserve(5 + n * 2);
  put_u32(f, static_cast<uint32_t>(n * 2));
  f.push_back(static_cast<char>(FrameType::kAudio));
  size_t at = f.size();
  f.resize(at + n * 2);
  for (size_t i = 0; i < n; ++i) {  // little-endian whatever the host
    uint16_t v = static_cast<uint16_t>(s[i]);
    f[at + 2 * i] = static_cast<char>(v & 0xFF);
    f[at + 2 * i + 1] = static_cast<char>(v >> 8);
  }
  return f;
}

std::string end_frame(uint64_t total) {
  std::string p;
  put_u32(p, static_cast<uint32_t>(total));
  return frame(FrameType::kEnd, p);
}

std::string error_frame(std::string_view json) {
  return frame(FrameType::kError, json);
}

std::optional<std::vector<Frame>> parse_frames(std::string_view b) {
  std::vector<Frame> out;
  size_t i = 0;
  while (i < b.size()) {
    if (b.size() - i < 5) return std::nullopt;
    uint32_t len = 0;
    for (int k = 0; k < 4; ++k) len |= static_cast<uint32_t>(static_cast<unsigned char>(b[i + k])) << (8 * k);
    auto type = static_cast<FrameType>(static_cast<unsigned char>(b[i + 4]));
    if (b.size() - i - 5 < len) return std::nullopt;
    out.push_back({type, std::string(b.substr(i + 5, len))});
    i += 5 + len;
  }
  return out;
}

}  // namespace imago::speech

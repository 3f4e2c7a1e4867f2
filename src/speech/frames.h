// The length-prefixed frame format of POST /v1/tts with "stream": true (docs/api/speech.md):
//
//   frame   := length:u32le  type:u8  payload[length]
//   'H' header   payload: sample_rate:u32le channels:u16le bits_per_sample:u16le   (first frame)
//   'A' audio    payload: s16le mono samples of one sentence
//   'E' end      payload: total_samples:u32le                                      (last frame)
//   'X' error    payload: the SPEC 7 JSON error envelope; nothing follows
//
// `length` counts only the payload, so a reader can skip frame types it does not know.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace imago::speech {

enum class FrameType : uint8_t { kHeader = 'H', kAudio = 'A', kEnd = 'E', kError = 'X' };

std::string header_frame(int sample_rate, int channels = 1, int bits = 16);
std::string audio_frame(const int16_t* samples, size_t n);
std::string end_frame(uint64_t total_samples);
std::string error_frame(std::string_view json);

struct Frame {
  FrameType type;
  std::string payload;
};
// Parses a complete byte stream into frames; nullopt when it is truncated or malformed.
std::optional<std::vector<Frame>> parse_frames(std::string_view bytes);

}  // namespace imago::speech

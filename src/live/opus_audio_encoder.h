// A room's Opus encoder (docs/live-protocol.md, "Encoded media"): libopus, mono, 20 ms Opus frames,
// VBR at the room's rate, tuned for voice. The frames of one call (a room's 40 ms video frame) leave
// as one Opus packet (RFC 6716 3.2: a packet may carry several frames), so a viewer gets one audio
// message per picture instead of one per 20 ms. The input is the renderer's PCM at its rate (24 kHz
// in rooms); Opus decodes at 48 kHz whatever the input rate. Not thread safe: the render thread owns it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "live/encoded_media.h"
#include "util/status.h"

namespace imago::live {

class OpusAudioEncoder {
 public:
  // input_rate: 8000, 12000, 16000, 24000 or 48000. complexity 0-10 (libopus' CPU/quality trade).
  static Result<std::unique_ptr<OpusAudioEncoder>> create(int input_rate, int64_t bitrate,
                                                          int complexity = kDefaultComplexity);
  static constexpr int kDefaultComplexity = 5;
  ~OpusAudioEncoder();

  // The 19-byte OpusHead (RFC 7845 5.1): version 1, one channel, the encoder's pre-skip at 48 kHz,
  // the input rate, no gain, mapping family 0.
  const std::string& opus_head() const;
  int input_rate() const;
  int samples_per_frame() const;                 // one 20 ms Opus frame at the input rate
  static constexpr int kMaxFramesPerPacket = 6;  // 120 ms, the most one Opus packet may hold

  // Encodes `count` samples, a whole number of 20 ms frames (1 to kMaxFramesPerPacket), into ONE
  // packet with index `index`: it covers [index * d, (index + 1) * d) of the session's audio clock,
  // d being its duration (count at the input rate); a room passes its frame index and 40 ms. The
  // packet has kind audio, codec kCodecOpus, `flags`, pts index * d, duration d.
  Status encode(const int16_t* pcm, size_t count, uint32_t index, uint16_t flags,
                std::vector<EncodedPacket>* out);
  // Forgets the signal it holds (its look-ahead): after an interrupt no old speech comes out.
  void reset();

  struct Impl;

 private:
  explicit OpusAudioEncoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace imago::live

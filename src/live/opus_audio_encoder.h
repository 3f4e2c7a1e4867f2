// A room's Opus encoder (docs/live-protocol.md, "Encoded media"): libopus, mono, 20 ms packets,
// VBR at the room's rate, tuned for voice. The input is the renderer's PCM at its rate (24 kHz in
// rooms); Opus decodes at 48 kHz whatever the input rate. Not thread safe: the render thread owns it.
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
  int samples_per_packet() const;  // 20 ms at the input rate

  // Encodes `count` samples, a whole number of 20 ms packets, starting at packet `first_index`
  // (packet k covers [k * 20, (k + 1) * 20) ms of the session's audio clock). Each packet has kind
  // audio, codec kCodecOpus, `flags`, pts k * 20000, duration 20000.
  Status encode(const int16_t* pcm, size_t count, uint32_t first_index, uint16_t flags,
                std::vector<EncodedPacket>* out);
  // Forgets the signal it holds (its look-ahead): after an interrupt no old speech comes out.
  void reset();

  struct Impl;

 private:
  explicit OpusAudioEncoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace imago::live

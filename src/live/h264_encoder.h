// A room's H.264 encoder (docs/live-protocol.md, "Encoded media"): libx264 through libavcodec,
// constrained baseline, `ultrafast` + `zerolatency` (no B-frames, no look-ahead: each picture in is
// one access unit out, at once), one thread (a room is one of many on a core). Output is AVCC
// (encoded_media.h): length-prefixed NAL units, with the SPS/PPS in the avcC record only.
// Not thread safe: the room's render thread owns it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "live/encoded_media.h"
#include "util/status.h"

namespace imago::live {

struct H264Settings {
  int width = 0, height = 0;  // of the RGB pictures given to encode()
  int max_side = 512;         // pictures larger than this on their longest side are scaled down
  int fps = 25;
  int64_t bitrate = 400'000;  // peak rate (VBV, one second of buffer); quality otherwise by CRF
  int keyframe_interval_frames = 50;
};

class H264Encoder {
 public:
  static Result<std::unique_ptr<H264Encoder>> create(const H264Settings& settings);
  ~H264Encoder();

  int width() const;  // of the encoded picture (after the max_side cap; even)
  int height() const;
  const std::string& avcc() const;  // AVCDecoderConfigurationRecord
  // "avc1.PPCCLL" from the SPS: what WebCodecs' VideoDecoder.configure takes as `codec`.
  std::string codec_string() const;

  // Encodes one RGB24 picture of settings.width x settings.height as frame `frame_index`.
  // key_frame forces an IDR. The packet has kind video, codec kCodecH264, kFlagKeyFrame on IDRs.
  Result<EncodedPacket> encode(const uint8_t* rgb, int64_t frame_index, bool key_frame);

  struct Impl;

 private:
  explicit H264Encoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Annex B byte stream (start codes) -> AVCC (4-byte big-endian lengths), leaving out parameter
// sets and access unit delimiters (types 7, 8, 9), which the avcC record carries.
std::string annexb_to_avcc(const uint8_t* data, size_t size);
// The avcC record of one SPS and one PPS found in an Annex B byte stream (empty when absent).
std::string avcc_from_annexb(const uint8_t* data, size_t size);

}  // namespace imago::live

#include "live/opus_audio_encoder.h"

#include <opus.h>

#include <vector>

#include "live/media_framing.h"

namespace imago::live {

namespace {
constexpr int kFrameMs = 20;
constexpr int kMaxFrameBytes = 1500;
}  // namespace

struct OpusAudioEncoder::Impl {
  ::OpusEncoder* enc = nullptr;
  std::vector<unsigned char> repacketizer = std::vector<unsigned char>(opus_repacketizer_get_size());
  int rate = 0;
  std::string head;
  ~Impl() {
    if (enc) opus_encoder_destroy(enc);
  }
};

OpusAudioEncoder::OpusAudioEncoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OpusAudioEncoder::~OpusAudioEncoder() = default;

Result<std::unique_ptr<OpusAudioEncoder>> OpusAudioEncoder::create(int input_rate, int64_t bitrate,
                                                                   int complexity) {
  if (complexity < 0 || complexity > 10) return Status::Invalid("Opus complexity must be 0-10");
  auto impl = std::make_unique<Impl>();
  int err = 0;
  impl->enc = opus_encoder_create(input_rate, 1, OPUS_APPLICATION_VOIP, &err);
  if (err != OPUS_OK || !impl->enc)
    return Status::Invalid(std::string("opus_encoder_create: ") + opus_strerror(err));
  impl->rate = input_rate;
  opus_encoder_ctl(impl->enc, OPUS_SET_BITRATE(static_cast<opus_int32>(bitrate)));
  opus_encoder_ctl(impl->enc, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE));
  // Complexity 5 of 10: about half the CPU of the default for a hardly audible loss on speech,
  // and a room encodes 50 packets a second.
  opus_encoder_ctl(impl->enc, OPUS_SET_COMPLEXITY(complexity));
  opus_int32 lookahead = 0;
  opus_encoder_ctl(impl->enc, OPUS_GET_LOOKAHEAD(&lookahead));
  const uint32_t pre_skip = static_cast<uint32_t>(lookahead) * 48000u / static_cast<uint32_t>(input_rate);
  std::string& h = impl->head;
  h = "OpusHead";
  h.push_back(1);  // version
  h.push_back(1);  // channels
  h.push_back(static_cast<char>(pre_skip & 0xff));
  h.push_back(static_cast<char>(pre_skip >> 8));
  for (int i = 0; i < 4; ++i)
    h.push_back(static_cast<char>((static_cast<uint32_t>(input_rate) >> (8 * i)) & 0xff));
  h.push_back(0);  // output gain
  h.push_back(0);
  h.push_back(0);  // channel mapping family 0
  return std::unique_ptr<OpusAudioEncoder>(new OpusAudioEncoder(std::move(impl)));
}

const std::string& OpusAudioEncoder::opus_head() const {
  return impl_->head;
}
int OpusAudioEncoder::input_rate() const {
  return impl_->rate;
}
int OpusAudioEncoder::samples_per_frame() const {
  return impl_->rate * kFrameMs / 1000;
}

Status OpusAudioEncoder::encode(const int16_t* pcm, size_t count, uint32_t index, uint16_t flags,
                                std::vector<EncodedPacket>* out) {
  const size_t per = static_cast<size_t>(samples_per_frame());
  if (count == 0 || count % per != 0) return Status::Invalid("Opus input must be whole 20 ms frames");
  const size_t frames = count / per;
  if (frames > kMaxFramesPerPacket) return Status::Invalid("an Opus packet holds at most 120 ms");
  // Each frame is encoded on its own (same bits as separate packets), then the repacketizer joins
  // them behind one table of contents (RFC 6716 3.2, code 1 or 3).
  unsigned char frame_bytes[kMaxFramesPerPacket][kMaxFrameBytes];
  OpusRepacketizer* rp =
      opus_repacketizer_init(reinterpret_cast<OpusRepacketizer*>(impl_->repacketizer.data()));
  for (size_t k = 0; k < frames; ++k) {
    const opus_int32 n =
        opus_encode(impl_->enc, pcm + k * per, static_cast<int>(per), frame_bytes[k], kMaxFrameBytes);
    if (n < 0) return Status::Internal(std::string("opus_encode: ") + opus_strerror(n));
    if (int rc = opus_repacketizer_cat(rp, frame_bytes[k], n); rc != OPUS_OK)
      return Status::Internal(std::string("opus_repacketizer_cat: ") + opus_strerror(rc));
  }
  unsigned char packet[kMaxFramesPerPacket * kMaxFrameBytes + 8];
  const opus_int32 n = opus_repacketizer_out(rp, packet, sizeof(packet));
  if (n < 0) return Status::Internal(std::string("opus_repacketizer_out: ") + opus_strerror(n));
  EncodedPacket p;
  p.kind = MediaKind::kAudio;
  p.codec = kCodecOpus;
  p.flags = flags;
  p.frame_index = index;
  p.duration_us = static_cast<int64_t>(frames) * kFrameMs * 1000;
  p.pts_us = int64_t{index} * p.duration_us;
  p.data.assign(reinterpret_cast<const char*>(packet), static_cast<size_t>(n));
  out->push_back(std::move(p));
  return Status::Ok();
}

void OpusAudioEncoder::reset() {
  opus_encoder_ctl(impl_->enc, OPUS_RESET_STATE);
}

}  // namespace imago::live

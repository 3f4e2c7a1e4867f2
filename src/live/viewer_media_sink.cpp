#include "live/viewer_media_sink.h"

#include "live/media_framing.h"

namespace imago::live {

ViewerMediaSink::ViewerMediaSink(std::shared_ptr<http::WebSocketConnection> conn, MediaFormat format,
                                 size_t max_queue_bytes)
    : conn_(std::move(conn)), format_(format), gate_(max_queue_bytes) {}

void ViewerMediaSink::on_config(const CodecConfig& config) {
  std::lock_guard lock(mu_);
  config_ = config;
  if (format_ != MediaFormat::kH264Opus) return;
  if (config.video && !config.avcc.empty()) {
    MediaHeader h;
    h.kind = MediaKind::kVideo;
    h.codec = kCodecH264;
    h.flags = kFlagConfig;
    h.a = static_cast<uint16_t>(config.width);
    h.b = static_cast<uint16_t>(config.height);
    conn_->send_binary(std::make_shared<const std::string>(encode_media_message(h, config.avcc)),
                       http::WsMessageClass::kControl);
  }
  if (!config.opus_head.empty()) {
    MediaHeader h;
    h.kind = MediaKind::kAudio;
    h.codec = kCodecOpus;
    h.flags = kFlagConfig;
    h.a = kOpusSamplesPerPacket;
    conn_->send_binary(std::make_shared<const std::string>(encode_media_message(h, config.opus_head)),
                       http::WsMessageClass::kControl);
  }
}

void ViewerMediaSink::on_packet(const std::shared_ptr<const EncodedPacket>& p) {
  std::shared_ptr<const std::string> message;
  {
    std::lock_guard lock(mu_);
    message = packet_message(*p, config_);
  }
  on_message(p, message);
}

void ViewerMediaSink::on_message(const std::shared_ptr<const EncodedPacket>& p,
                                 const std::shared_ptr<const std::string>& message) {
  if (p->kind == MediaKind::kAudio) {
    conn_->send_binary(message, http::WsMessageClass::kAudio);
    return;
  }
  const bool key = (p->flags & kFlagKeyFrame) != 0;
  {
    std::lock_guard lock(mu_);
    // Behind: this picture is dropped, and with H.264 every one after it up to a key frame.
    const bool send = gate_.admit(key, conn_->queued_bytes());
    dropped_.store(gate_.dropped());
    if (!send) return;
  }
  conn_->send_binary(message, http::WsMessageClass::kVideo);
}

bool ViewerMediaSink::wants_key_frame() {
  if (format_ != MediaFormat::kH264Opus) return false;  // every JPEG stands alone
  std::lock_guard lock(mu_);
  return gate_.wants_key_frame(conn_->queued_bytes());
}

void ViewerMediaSink::on_interrupt() {
  conn_->discard_queued(http::WsMessageClass::kAudio);
  const size_t before = conn_->queued_bytes();
  conn_->discard_queued(http::WsMessageClass::kVideo);
  if (format_ == MediaFormat::kH264Opus && conn_->queued_bytes() < before) {
    std::lock_guard lock(mu_);
    gate_.broken();  // a dropped access unit breaks the pictures that refer to it
  }
}

}  // namespace imago::live

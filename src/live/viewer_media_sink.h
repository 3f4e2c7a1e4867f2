// One WebSocket viewer as a consumer of a room's media (docs/live-protocol.md, "Media framing"):
// frames each packet as a binary message in the format the viewer asked for, and keeps a viewer
// that cannot keep up from stalling anyone. A viewer with more than `max_queue_bytes` queued gets
// no video: H.264 is then dropped up to the next key frame, which the sink asks for once its queue
// has drained (JPEGs are all key frames). Audio is never dropped here.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>

#include "http/websocket.h"
#include "live/encoded_media.h"
#include "live/key_frame_gate.h"
#include "live/media_quality.h"

namespace imago::live {

class ViewerMediaSink : public MediaSink {
 public:
  ViewerMediaSink(std::shared_ptr<http::WebSocketConnection> conn, MediaFormat format,
                  size_t max_queue_bytes);

  // h264+opus: the avcC and the OpusHead as configuration messages (never dropped or discarded).
  void on_config(const CodecConfig& config) override;
  // Frames the packet itself; the fan-out frames once for all its viewers and calls on_message.
  void on_packet(const std::shared_ptr<const EncodedPacket>& packet) override;
  bool takes_messages() const override { return true; }
  void on_message(const std::shared_ptr<const EncodedPacket>& packet,
                  const std::shared_ptr<const std::string>& message) override;
  bool wants_key_frame() override;
  // Drops the viewer's queued audio and video; after dropped H.264 the next picture sent is a key frame.
  void on_interrupt() override;

  MediaFormat format() const { return format_; }
  int64_t video_dropped() const { return dropped_.load(); }

 private:
  std::shared_ptr<http::WebSocketConnection> conn_;
  const MediaFormat format_;
  std::mutex mu_;
  CodecConfig config_;
  KeyFrameGate gate_;  // under mu_
  std::atomic<int64_t> dropped_{0};
};

}  // namespace imago::live

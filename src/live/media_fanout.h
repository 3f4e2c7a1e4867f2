// The fan-out step of a room (docs/live-protocol.md, "Encoded media"): hands each frame's packets
// to every consumer in the format it was added for, configuring a consumer before its first
// packet; the first video packet an H.264 consumer gets is a key frame. Consumers are MediaSinks: viewers'
// WebSockets (viewer_media_sink.h), recordings, relays. Not thread safe: the room calls it under its lock.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "live/encoded_media.h"
#include "live/media_encoder.h"
#include "live/media_quality.h"

namespace imago::live {

class MediaFanout {
 public:
  void add(std::shared_ptr<MediaSink> sink, MediaFormat format);
  // Removes the sink (on_end is called). Unknown sinks are ignored.
  void remove(const MediaSink* sink);
  bool empty() const { return sinks_.empty(); }
  bool wants(MediaFormat format) const;
  // Whether some sink of H.264 asks for a key frame (MediaSink::wants_key_frame).
  bool wants_key_frame();
  void interrupt();
  // Delivers audio before video, each sink configured (config_for) before its first packet.
  void deliver(const FramePackets& p, const std::function<CodecConfig(MediaFormat)>& config_for);
  // The room ended: on_end to every sink, which are then forgotten.
  void end_all();

 private:
  struct Entry {
    std::shared_ptr<MediaSink> sink;
    MediaFormat format;
    bool configured = false;
    bool keyed = false;  // H.264: a key frame was delivered (pictures before one are withheld)
  };
  std::vector<Entry> sinks_;
};

}  // namespace imago::live

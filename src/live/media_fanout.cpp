#include "live/media_fanout.h"

namespace imago::live {

void MediaFanout::add(std::shared_ptr<MediaSink> sink, MediaFormat format) {
  sinks_.push_back({std::move(sink), format, false});
}

void MediaFanout::remove(const MediaSink* sink) {
  for (auto it = sinks_.begin(); it != sinks_.end(); ++it) {
    if (it->sink.get() == sink) {
      auto s = std::move(it->sink);
      sinks_.erase(it);
      s->on_end();
      return;
    }
  }
}

bool MediaFanout::wants(MediaFormat format) const {
  for (const auto& e : sinks_)
    if (e.format == format) return true;
  return false;
}

bool MediaFanout::wants_key_frame() {
  bool any = false;
  for (auto& e : sinks_) {
    // A sink that has not had a key frame yet cannot decode anything else.
    if (e.format == MediaFormat::kH264Opus) any |= !e.keyed || e.sink->wants_key_frame();
  }
  return any;
}

void MediaFanout::interrupt() {
  for (auto& e : sinks_) e.sink->on_interrupt();
}

void MediaFanout::deliver(const FramePackets& p, const std::function<CodecConfig(MediaFormat)>& config_for) {
  for (auto& e : sinks_) {
    const bool encoded = e.format == MediaFormat::kH264Opus;
    if (!e.configured) {
      e.sink->on_config(config_for(e.format));
      e.configured = true;
    }
    if (encoded) {
      for (const auto& a : p.opus) e.sink->on_packet(a);
      if (p.h264 && (e.keyed || (p.h264->flags & kFlagKeyFrame))) {
        e.keyed = true;
        e.sink->on_packet(p.h264);
      }
    } else {
      if (p.pcm) e.sink->on_packet(p.pcm);
      if (p.jpeg) e.sink->on_packet(p.jpeg);
    }
  }
}

void MediaFanout::end_all() {
  auto sinks = std::move(sinks_);
  sinks_.clear();
  for (auto& e : sinks) e.sink->on_end();
}

}  // namespace imago::live

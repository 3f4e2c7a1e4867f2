#include "live/media_fanout.h"

#include <optional>

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
  // The configuration of each format, asked for once per delivery.
  std::optional<CodecConfig> configs[2];
  auto config = [&](MediaFormat f) -> const CodecConfig& {
    auto& c = configs[f == MediaFormat::kH264Opus ? 1 : 0];
    if (!c) c = config_for(f);
    return *c;
  };
  // Each packet framed at most once: every sink that sends messages gets the same bytes (a packet
  // belongs to one format, so the packet alone is the key).
  struct Framed {
    const EncodedPacket* packet;
    std::shared_ptr<const std::string> message;
  };
  Framed framed[8];
  size_t n_framed = 0;
  auto hand = [&](const Entry& e, const std::shared_ptr<const EncodedPacket>& packet) {
    if (!e.sink->takes_messages()) {
      e.sink->on_packet(packet);
      return;
    }
    for (size_t i = 0; i < n_framed; ++i) {
      if (framed[i].packet == packet.get()) {
        e.sink->on_message(packet, framed[i].message);
        return;
      }
    }
    auto message = packet_message(*packet, config(e.format));
    if (n_framed < std::size(framed)) framed[n_framed++] = {packet.get(), message};
    e.sink->on_message(packet, message);
  };
  for (auto& e : sinks_) {
    const bool encoded = e.format == MediaFormat::kH264Opus;
    if (!e.configured) {
      e.sink->on_config(config(e.format));
      e.configured = true;
    }
    if (encoded) {
      for (const auto& a : p.opus) hand(e, a);
      if (p.h264 && (e.keyed || (p.h264->flags & kFlagKeyFrame))) {
        e.keyed = true;
        hand(e, p.h264);
      }
    } else {
      if (p.pcm) hand(e, p.pcm);
      if (p.jpeg) hand(e, p.jpeg);
    }
  }
}

void MediaFanout::end_all() {
  auto sinks = std::move(sinks_);
  sinks_.clear();
  for (auto& e : sinks) e.sink->on_end();
}

}  // namespace imago::live

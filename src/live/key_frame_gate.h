// Which pictures one viewer's connection gets when it falls behind (docs/live-protocol.md,
// "Back-pressure"): past `max_queue_bytes` queued, a picture is dropped, and with H.264 every one
// after it up to the next key frame (a P-frame whose reference was dropped decodes to garbage).
// A key frame is worth asking for only once the queue has drained to half the bound: asked
// earlier, the room would send large key frames to every viewer while this one still drops them.
// Shared by the room's own viewers (viewer_media_sink.h) and a node relaying a viewer to the room's
// owner (api/live.cpp), which asks the owner with `request_key_frame`. Not thread safe.
#pragma once
#include <cstddef>
#include <cstdint>

namespace imago::live {

// The bound a viewer's connection gets by default: about 1.5 s of h264+opus at the standard
// quality, a fraction of a second of JPEG.
inline constexpr size_t kViewerQueueBytes = 512 * 1024;

class KeyFrameGate {
 public:
  explicit KeyFrameGate(size_t max_queue_bytes) : max_queue_bytes_(max_queue_bytes) {}

  // Whether to send a picture now, given the bytes the connection has queued.
  bool admit(bool key_frame, size_t queued_bytes) {
    if (queued_bytes >= max_queue_bytes_) {
      waiting_for_key_ = true;
      ++dropped_;
      return false;
    }
    if (waiting_for_key_ && !key_frame) {
      ++dropped_;
      return false;
    }
    waiting_for_key_ = false;
    return true;
  }
  // Pictures already queued were discarded (an interrupt): the next one sent must be a key frame.
  void broken() { waiting_for_key_ = true; }
  bool wants_key_frame(size_t queued_bytes) const {
    return waiting_for_key_ && queued_bytes < max_queue_bytes_ / 2;
  }
  int64_t dropped() const { return dropped_; }

 private:
  const size_t max_queue_bytes_;
  bool waiting_for_key_ = true;  // no picture sent yet, or pictures dropped since the last key frame
  int64_t dropped_ = 0;
};

}  // namespace imago::live
